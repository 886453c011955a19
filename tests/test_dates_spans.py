"""The exact "years lived" comparison (rules §1: completed years plus the
elapsed fraction of the current year) against a pure-Python reference with
fractions, over many dates, 29 February births and values at the boundary."""

import calendar
import random
from datetime import date, timedelta
from fractions import Fraction

import polars as pl

from diferida.dates import with_years_exceed


def _anniversary(birth: date, years: int) -> date:
    y = birth.year + years
    day = 28 if (birth.month, birth.day) == (2, 29) and not calendar.isleap(y) else birth.day
    return date(y, birth.month, day)


def _exact_years(start: date, end: date) -> Fraction:
    y = end.year - start.year
    if _anniversary(start, y) > end:
        y -= 1
    last, nxt = _anniversary(start, y), _anniversary(start, y + 1)
    return y + Fraction((end - last).days, (nxt - last).days)


def test_service_longer_than_the_exact_time_lived_is_detected_to_the_ten_thousandth():
    rng = random.Random(20261129)
    rows = []
    for _ in range(20_000):
        if rng.random() < 0.15:
            start = date(rng.choice(range(1904, 2000, 4)), 2, 29)
        else:
            start = date.fromordinal(rng.randint(date(1900, 1, 1).toordinal(),
                                                 date(2005, 12, 31).toordinal()))
        end = start + timedelta(days=rng.randint(0, 40_000))
        exact = _exact_years(start, end)
        units = max(int(exact * 10_000) + rng.choice([-1, 0, 1]), 0)
        rows.append((start, end, units, Fraction(units, 10_000) > exact))
    frame = pl.DataFrame(rows, schema=["start", "end", "units", "expected"], orient="row")
    out = with_years_exceed(frame.lazy(), "units", 10_000,
                            {"exceeds": ("start", pl.col("end"))}).collect()
    wrong = out.filter(pl.col("exceeds") != pl.col("expected"))
    assert wrong.height == 0, wrong.head()
    assert out["expected"].sum() > 1_000  # both outcomes are exercised
