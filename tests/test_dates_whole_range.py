"""The calendar held equal to Python's `datetime.date` over every year
validation accepts (0001 to 9999, validation.MIN_YEAR..MAX_YEAR), not only
over the years of today's members.

tests/test_dates.py and tests/test_dates_spans.py hold the calendar to a
reference over 1896-2199, where every century year but 2100 is a multiple of
400: a leap rule with `year % 200` in place of `year % 400` is right there
(1900 and 2100 are common, 2000 leap either way) and wrong in 1800, 2200,
2600... Here each column-wise computation the engine makes with dates is
compared with `datetime.date` and `calendar` over the whole range: the leap
rule for every year, day numbers for every day, and (hypothesis) ages,
anniversaries, "years lived" and the rules §7 span for dates drawn from the
whole range, half of them next to a century year, where a wrong leap rule
shows. The projection's numpy calendar (projection/engine.py) is held to
the same."""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from diferida.dates import (
    _civil_days,
    _month_days,
    date_reaching_age,
    days_in_month,
    is_leap,
    span_units,
    with_span_exceeds,
    with_years_exceed,
    years_months_days,
)
from diferida.projection import engine
from diferida.rules import load_rules
from diferida.validation import MAX_DATE, MAX_YEAR, MIN_YEAR, validate

from .conftest import examples

FIRST = date(MIN_YEAR, 1, 1)
EPOCH = date(1970, 1, 1).toordinal()
UNITS = 10_000  # service is counted in 1/10,000 years


def ordinal(y: int, m: int, d: int) -> int:
    """Python's day number of a date, also for the year 10000 a birthday or a
    day after 31 December 9999 may fall in (the calendar repeats every 400
    years, 146,097 days)."""
    if y > MAX_YEAR:
        return date(y - 400, m, d).toordinal() + 146_097
    return date(y, m, d).toordinal()


# ---- dates from the whole range, half of them next to a century year --------

# the century years: a wrong rule for them (% 200, % 100, % 300...) is wrong
# in some; those that % 200 gets wrong are 200, 600, ... 9800
CENTURIES = st.integers(1, MAX_YEAR // 100).map(lambda c: 100 * c)


@st.composite
def near_a_century(draw) -> date:
    """A date in the three years around a century year, half of the time
    in its first three months (its February, and the days next to it)."""
    year = draw(CENTURIES)
    start, end = ((date(year - 1, 12, 1), date(year, 3, 31)) if draw(st.booleans()) else
                  (date(year - 1, 1, 1), min(date(year + 1, 12, 31), MAX_DATE)))
    return start + timedelta(days=draw(st.integers(0, (end - start).days)))


DATES = st.one_of(st.dates(FIRST, MAX_DATE), near_a_century())
# 29 February of a leap year, a century's (400, 800...) a quarter of the time
BIRTHS_29_FEB = st.one_of(
    st.integers(1, MAX_YEAR // 4).map(lambda k: 4 * k).filter(calendar.isleap),
    st.integers(1, MAX_YEAR // 400).map(lambda k: 400 * k)).map(lambda y: date(y, 2, 29))


# ---- the leap rule and day numbers: every year, every day -------------------

def test_the_leap_rule_is_python_s_for_every_year_from_0001_to_10000():
    years = pl.Series("y", range(MIN_YEAR, MAX_YEAR + 2), dtype=pl.Int32)
    got = pl.select(is_leap(pl.lit(years))).to_series().to_list()
    assert got == [calendar.isleap(y) for y in years]
    assert engine._leap(years.to_numpy()).tolist() == got


def test_month_lengths_are_python_s_for_every_month_from_0001_to_9999():
    frame = pl.DataFrame({"y": [y for y in range(MIN_YEAR, MAX_YEAR + 1) for _ in range(12)],
                          "m": list(range(1, 13)) * MAX_YEAR}, schema={"y": pl.Int32,
                                                                      "m": pl.Int32})
    got = frame.select(_month_days(pl.col("y"), pl.col("m"))).to_series().to_list()
    assert got == [days_in_month(y, m) for y, m in frame.iter_rows()]
    assert got == [calendar.monthrange(y, m)[1] for y, m in frame.iter_rows()]


def test_day_numbers_of_the_first_and_last_day_of_every_month_are_python_s():
    # the fast tier's form of the test below: the days next to every month's
    # end (240,000 of them), where a wrong leap rule in any of the day-number
    # computations shows (a `% 200` for `% 400` shifts 1 March of 200, 600...)
    ends = [(y, m, d) for y in range(MIN_YEAR, MAX_YEAR + 1) for m in range(1, 13)
            for d in (1, calendar.monthrange(y, m)[1])]
    y, m, d = (np.array(c, dtype=np.int64) for c in zip(*ends, strict=True))
    want = np.array([date(*e).toordinal() for e in ends], dtype=np.int64) - EPOCH
    frame = pl.DataFrame({"y": y, "m": m, "day": d}, schema={k: pl.Int32 for k in
                                                          ("y", "m", "day")})
    mp = (pl.col("m") + 9) % 12
    civil = frame.select(_civil_days(pl.col("y") - mp // 10, mp, pl.col("day"))).to_series()
    assert np.array_equal(civil.to_numpy(), want)
    assert np.array_equal(engine.days_from_civil(y, m, d), want)
    back = engine.civil_from_days(want)
    assert all(np.array_equal(a, b) for a, b in zip(back, (y, m, d), strict=True))


# every day of 10,000 years: make test, not the loop of make check
@pytest.mark.slow
def test_day_numbers_are_python_s_for_every_day_from_0001_to_9999():
    days = pl.date_range(FIRST, MAX_DATE, "1d", eager=True).alias("d")
    frame = days.to_frame().with_columns(
        pl.col("d").dt.year().cast(pl.Int32).alias("y"),
        pl.col("d").dt.month().cast(pl.Int32).alias("m"),
        pl.col("d").dt.day().cast(pl.Int32).alias("day"))
    assert frame.height == MAX_DATE.toordinal()  # every day, each once
    mp = (pl.col("m") + 9) % 12
    civil = frame.select(_civil_days(pl.col("y") - mp // 10, mp, pl.col("day"))).to_series()
    want = np.arange(1, MAX_DATE.toordinal() + 1, dtype=np.int64) - EPOCH
    assert np.array_equal(civil.to_numpy(), want)
    assert np.array_equal(frame["d"].cast(pl.Int32).to_numpy(), want)  # Polars' own
    y, m, d = (frame[c].to_numpy() for c in ("y", "m", "day"))
    assert np.array_equal(engine.days_from_civil(y, m, d), want)
    back = engine.civil_from_days(want)
    assert all(np.array_equal(a, b) for a, b in zip(back, (y, m, d), strict=True))


# ---- birthdays: the day an age is reached -----------------------------------

def reference_reaching_age(birth: date, age: int) -> date:
    """rules §4 with the standard library: the anniversary; 29 February's on
    28 February in a common year."""
    year = birth.year + age
    if (birth.month, birth.day) == (2, 29) and not calendar.isleap(year):
        return date(year, 2, 28)
    return birth.replace(year=year)


@settings(max_examples=examples(150))
@given(st.lists(st.tuples(st.one_of(DATES, BIRTHS_29_FEB), st.integers(0, 150)),
                min_size=1, max_size=40))
@example([(date(1796, 2, 29), 4), (date(9796, 2, 29), 4), (date(9796, 2, 29), 203)])
def test_the_day_an_age_is_reached_is_the_reference_s(cases):
    cases = [(b, a if b.year + a <= MAX_YEAR else MAX_YEAR - b.year) for b, a in cases]
    frame = pl.DataFrame({"birth": [b for b, _ in cases]}, schema={"birth": pl.Date})
    for birth, age in set(cases):
        got = frame.head(1).with_columns(pl.lit(birth).alias("birth")).select(
            date_reaching_age(pl.col("birth"), age)).item()
        want = reference_reaching_age(birth, age)
        assert got == want, (birth, age)
        n = engine.anniversary(np.array([birth.year]), np.array([birth.month]),
                               np.array([birth.day]), age)[0]
        assert n == want.toordinal() - EPOCH, (birth, age)


# ---- "years lived" (rules §1) ------------------------------------------------

def anniversary_ordinal(birth: date, years: int) -> int:
    y = birth.year + years
    day = 28 if (birth.month, birth.day) == (2, 29) and not calendar.isleap(y) else birth.day
    return ordinal(y, birth.month, day)


def exact_years(start: date, end: date) -> Fraction:
    """Completed years plus the elapsed days of the current year of life over
    that year's days, from the standard library."""
    y = end.year - start.year
    if anniversary_ordinal(start, y) > end.toordinal():
        y -= 1
    last, nxt = anniversary_ordinal(start, y), anniversary_ordinal(start, y + 1)
    return y + Fraction(end.toordinal() - last, nxt - last)


@st.composite
def lives(draw):
    """(start, end, units): units of service about the exact years from start
    to end, one ten-thousandth either side or on it."""
    start = draw(st.one_of(DATES, BIRTHS_29_FEB))
    span = draw(st.one_of(st.integers(0, 800), st.integers(0, 60_000)))
    end = start + timedelta(days=min(span, (MAX_DATE - start).days))
    units = max(int(exact_years(start, end) * UNITS) + draw(st.sampled_from([-1, 0, 1])), 0)
    return start, end, units


@settings(max_examples=examples(150))
@given(st.lists(lives(), min_size=1, max_size=60))
@example([(date(1799, 3, 1), date(1800, 3, 1), 10_000),  # 1800 is common: 365 days
          (date(1799, 3, 1), date(1800, 2, 28), 9_973),
          (date(1796, 2, 29), date(1800, 3, 1), 40_027),  # the birthday on 28 February
          (date(1796, 2, 29), date(1800, 3, 1), 40_028),
          (date(9999, 3, 1), MAX_DATE, 8_356)])
def test_years_lived_compared_with_service_are_the_reference_s(cases):
    rows = [(s, e, u, Fraction(u, UNITS) > exact_years(s, e)) for s, e, u in cases]
    frame = pl.DataFrame(rows, schema=["start", "end", "units", "expected"], orient="row")
    out = with_years_exceed(frame.lazy(), "units", UNITS,
                            {"exceeds": ("start", pl.col("end"))}).collect()
    wrong = out.filter(pl.col("exceeds") != pl.col("expected"))
    assert wrong.height == 0, wrong.head().to_dicts()
    # the projection's exact age, the same count as numbers (its arrays are
    # int64 day numbers and parts, as civil_from_days makes them)
    by, bm, bd = engine.civil_from_days(frame["start"].cast(pl.Int64).to_numpy())
    years, fraction = engine.exact_age(by, bm, bd, frame["end"].cast(pl.Int64).to_numpy())
    for (start, end, _), y, f in zip(cases, years, fraction, strict=True):
        exact = exact_years(start, end)
        assert y == int(exact) and abs(f - float(exact - int(exact))) < 1e-12, (start, end)


# ---- the rules §7 span, and the time until a date ------------------------------

def add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    return date(d.year + y, m + 1, min(d.day, calendar.monthrange(d.year + y, m + 1)[1]))


DAYS = st.one_of(st.integers(0, 800), st.integers(0, 60_000))


@st.composite
def periods(draw) -> tuple[date, date]:
    """(start, end): from a date of the range, or to one (a span's month
    lengths are those of the months its end falls in)."""
    days = draw(DAYS)
    if draw(st.booleans()):
        start = draw(DATES)
        return start, start + timedelta(days=min(days, (MAX_DATE - start).days))
    end = draw(DATES)
    return end - timedelta(days=min(days, (end - FIRST).days)), end


@settings(max_examples=examples(150))
@given(st.lists(st.tuples(periods(), st.sampled_from([-1, 0, 1])), min_size=1, max_size=60))
@example([((date(1799, 12, 31), date(1800, 3, 3)), 0), ((date(1800, 1, 31), date(1800, 3, 1)), 0),
          ((date(2200, 1, 31), date(2200, 3, 1)), 1)])
def test_the_span_and_the_time_until_a_date_are_the_calendar_s(cases):
    rows = []
    for (start, end), delta in cases:
        # whole years, months and days: the months from start, clamped at a
        # month's end, then the days; one month more would pass the end
        y, m, d = years_months_days(start, end)
        assert 0 <= m < 12 and d >= 0
        assert add_months(start, 12 * y + m) + timedelta(days=d) == end
        assert 12 * y + m + 1 > (MAX_YEAR - start.year) * 12 or \
            add_months(start, 12 * y + m + 1) > end
        *_, units = span_units(start, end, UNITS)
        units = max(units + delta, 0)
        rows.append((start, end, units, units > span_units(start, end, UNITS)[3]))
    frame = pl.DataFrame(rows, schema=["start", "end", "units", "expected"], orient="row")
    out = with_span_exceeds(frame.lazy(), "units", UNITS, "exceeds", "start",
                            pl.col("end")).collect()
    wrong = out.filter(pl.col("exceeds") != pl.col("expected"))
    assert wrong.height == 0, wrong.head().to_dicts()


# ---- the engine's parsing of dates given as text ----------------------------

@settings(max_examples=examples(60))
@given(st.lists(st.one_of(DATES.map(date.isoformat), st.builds(
    "{:04d}-02-29".format, st.one_of(CENTURIES, st.integers(MIN_YEAR, MAX_YEAR)))),
    min_size=1, max_size=30))
@example(["1800-02-29", "2200-02-29", "0200-02-29", "2000-02-29", "0400-02-29",
          "9999-12-31", "0001-01-01"])
def test_a_date_given_as_text_is_read_as_python_reads_it(texts):
    def python(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None

    n = len(texts)
    frame = pl.DataFrame({
        "participant_id": [f"p{i}" for i in range(n)], "birth_date": ["0001-01-01"] * n,
        "entry_date": texts, "separation_date": texts,
        "creditable_service_years": ["0.0001"] * n, "average_compensation": ["1.00"] * n,
        "group": ["general"] * n, "refund_requested": ["false"] * n})
    result = validate(frame, load_rules(), MAX_DATE)
    refused = {(r["_row"], r["field"]): r["code"] for r in result.errors.iter_rows(named=True)
               if r["field"] in ("entry_date", "separation_date")}
    typed = result.typed.sort("_row")
    for i, text in enumerate(texts):
        want = python(text)
        row = typed.row(i, named=True)
        if want is None:
            assert refused.get((row["_row"], "entry_date")) == "not_a_date", text
        else:
            assert (row["_row"], "entry_date") not in refused, (text, refused)
            assert row["entry_date"] == want, text
