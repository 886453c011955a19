"""rules §4: a person reaches age N on the N-th anniversary of the birth date;
born on 29 February, on 28 February in a common year (Decision)."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

import polars as pl
import pytest

import diferida
from diferida.dates import date_reaching_age, years_months_days

from .conftest import AS_OF, participant


def reference_reaching_age(birth: date, age: int) -> date:
    """Written from rules §4 alone, with the standard library."""
    year = birth.year + age
    if birth.month == 2 and birth.day == 29 and not calendar.isleap(year):
        return date(year, 2, 28)
    return birth.replace(year=year)


def test_date_reaching_age_matches_the_reference_for_every_birth_from_1896_to_2004():
    births = [date(1896, 1, 1) + timedelta(days=i)
              for i in range((date(2004, 12, 31) - date(1896, 1, 1)).days + 1)]
    frame = pl.DataFrame({"birth": births}, schema={"birth": pl.Date})
    ages = (0, 1, 4, 50, 55, 58, 60, 65, 100)
    got = frame.select([date_reaching_age(pl.col("birth"), a).alias(str(a)) for a in ages])
    for a in ages:
        expected = [reference_reaching_age(b, a) for b in births]
        assert got[str(a)].to_list() == expected, f"age {a}"


@pytest.mark.parametrize(
    "birth, age, reached",
    [
        (date(1968, 2, 29), 58, date(2026, 2, 28)),  # 2026 is a common year
        (date(1968, 2, 29), 60, date(2028, 2, 29)),  # 2028 is a leap year
        (date(1968, 2, 29), 1, date(1969, 2, 28)),
        (date(2000, 2, 29), 100, date(2100, 2, 28)),  # 2100 is not a leap year
        (date(1896, 2, 29), 104, date(2000, 2, 29)),  # 2000 is
        (date(1968, 2, 28), 58, date(2026, 2, 28)),
        (date(1968, 3, 1), 58, date(2026, 3, 1)),
    ],
)
def test_day_of_reaching_an_age(birth, age, reached):
    out = pl.select(date_reaching_age(pl.lit(birth), age)).item()
    assert out == reached


def test_member_born_on_29_february_reaches_58_on_28_february_of_a_common_year():
    d = diferida.evaluate(participant(birth_date="1968-02-29", entry_date="1989-09-01",
                                      separation_date="2009-08-31",
                                      creditable_service_years="20"), as_of=AS_OF)
    assert d.eligibility_date == date(2026, 2, 28)
    assert d.status == "eligible"


def test_member_born_on_29_february_reaches_the_age_on_29_february_of_a_leap_year(tmp_path):
    # The ages of Article 19 (50, 55, 58, 65) never land a 29 February birthday
    # on a leap year, so a rules file with age 64 for 19.2 shows that case.
    rules = tmp_path / "age64.toml"
    rules.write_text('base = "article19"\n[meta]\nname = "age64"\n'
                     '[route_overrides."19.2"]\nage = 64\n')
    d = diferida.evaluate(participant(birth_date="1972-02-29", entry_date="1995-08-01",
                                      separation_date="2015-07-31",
                                      creditable_service_years="12"), as_of=AS_OF, rules=rules)
    assert d.route == "19.2"
    assert d.eligibility_date == date(2036, 2, 29)


def test_born_on_28_february_reaches_the_age_on_28_february():
    d = diferida.evaluate(participant(birth_date="1968-02-28", entry_date="1989-09-01",
                                      separation_date="2009-08-31",
                                      creditable_service_years="20"), as_of=AS_OF)
    assert d.eligibility_date == date(2026, 2, 28)


@pytest.mark.parametrize(
    "start, end, ymd",
    [
        (date(2026, 11, 29), date(2028, 5, 10), (1, 5, 11)),
        (date(2026, 11, 29), date(2026, 11, 29), (0, 0, 0)),
        (date(2026, 1, 31), date(2026, 2, 28), (0, 1, 0)),  # month ends clamp (rules §4)
        (date(2026, 1, 31), date(2026, 3, 1), (0, 1, 1)),
        (date(2024, 2, 29), date(2025, 2, 28), (1, 0, 0)),
    ],
)
def test_time_until_a_date_in_years_months_and_days(start, end, ymd):
    assert years_months_days(start, end) == ymd
