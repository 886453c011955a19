"""A relief's arithmetic at the corners of its bounds (data/rules_bounds.toml,
projection/options.py's --cola): over the longest horizon a member can be
paid (in pay from age 20 to the tables' last age, 100 fiscal years), every
fiscal year's payment is the exact amount, worked out here in Python
integers, times its number of payments — or, where the exact amount would
outgrow what the engine holds to the cent (engine.MAX_AMOUNT_CENTS), the
projection is refused with AmountTooLarge, never wrapped, and only then.

No mortality and no discount, so that each year's payments are its payment
dates times the monthly amount (docs/relief.md)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diferida.projection import adjust, engine
from diferida.projection.engine import MAX_AMOUNT_CENTS, AmountTooLarge, day_number
from diferida.projection.mortality import no_mortality
from diferida.projection.options import MAX_COLA
from diferida.relief import Adjustment, Relief
from diferida.rules_schema import MAX_ADJUSTMENTS, MAX_COLA_RATE, MAX_RATE, MAX_SERIES_YEARS

from .conftest import examples

V = date(2026, 7, 1)  # the valuation date: FY2027's first payment
BORN = date(2006, 7, 1)  # age 20 at V: paid until the tables' last age, 100 years on
IN_PAY_SINCE = date(2026, 6, 1)
HORIZON = 101  # fiscal years: every payment to age 120 and one year more


def _half_up(amount: int, f: Fraction) -> int:
    return (2 * amount * f.numerator + f.denominator) // (2 * f.denominator)


def exact_amounts(monthly: int, relief: Relief, cola: Fraction, years: int) -> list[int]:
    """The monthly amount in each fiscal year from FY2027, in Python
    integers, by docs/relief.md: on each 1 July, the COLA assumption (after
    the first payment), then the relief's COLA, its raises in the file's
    order and its floor of that date; each step rounded half up."""
    out, amount = [], monthly
    for k in range(years):
        day = date(V.year + k, 7, 1)
        fy = day.year + 1
        if k > 0:
            amount = _half_up(amount, 1 + cola)
        for a in relief.ordered():
            if a.kind == "cola" and a.date <= day:
                r = a.cola_rate(fy)
                if r:
                    amount = _half_up(amount, 1 + Fraction(r))
            elif a.date == day and a.kind == "raise":
                add = _half_up(amount, Fraction(a.rate))
                if a.cap_monthly is not None:
                    add = min(add, int(a.cap_monthly * 100))
                amount += add
            elif a.date == day and a.kind == "floor":
                amount = max(amount, int(a.minimum_monthly * 100))
        out.append(amount)
    return out


def member(monthly: int) -> engine.Members:
    return engine.Members(
        birth=np.array([day_number(BORN)], dtype=np.int64),
        start=np.array([day_number(IN_PAY_SINCE)], dtype=np.int64),
        monthly_cents=np.array([monthly], dtype=np.int64),
        sex=np.ones(1, dtype=np.int64), kind=np.zeros(1, dtype=np.int64),
        in_pay=np.array([True]))


def assumptions(cola: Fraction) -> engine.Assumptions:
    return engine.Assumptions(as_of=V, rates=[0.0], table=no_mortality(), cola=cola,
                              horizon=HORIZON)


def payment_counts() -> list[int]:
    """Each fiscal year's number of payments: a member of one cent a month."""
    p = engine.project(member(1), assumptions(Fraction(0)), per_member=False)
    return [int(x) for x in p.payments]


COUNTS = payment_counts()


def check(monthly: int, relief: Relief, cola: Fraction) -> str:
    """Held to the cent, or refused exactly when the exact amounts outgrow
    the engine; which of the two happened."""
    exact = exact_amounts(monthly, relief, cola, len(COUNTS))
    paid = [a for a, n in zip(exact, COUNTS, strict=True) if n]
    too_large = max(paid) > MAX_AMOUNT_CENTS
    try:
        p = adjust.project(member(monthly), assumptions(cola), relief)
    except AmountTooLarge as exc:
        assert too_large, (monthly, max(paid))
        assert "more than the projection holds to the cent" in str(exc)
        assert len(str(exc)) <= 300
        return "refused"
    assert not too_large, (monthly, max(paid))
    got = [int(x) for x in p.payments]
    assert list(p.payments) == got  # whole cents: no float rounding
    assert got == [a * n for a, n in zip(exact, COUNTS, strict=True)][:len(got)]
    return "held"


def cola(rate: Decimal | None = None, series: tuple[tuple[int, Decimal], ...] = (),
         after: Decimal | None = None) -> Adjustment:
    return Adjustment(kind="cola", date=V, citation="cola", who="in_pay", rate=rate,
                      series=series, after_series=after)


def raises(n: int, rate: Decimal) -> list[Adjustment]:
    return [Adjustment(kind="raise", date=date(V.year + k, 7, 1), citation=f"raise {k}",
                       rate=rate) for k in range(n)]


def test_the_member_is_paid_over_the_longest_horizon():
    paid_years = [n for n in COUNTS if n]
    assert len(paid_years) >= 100 and set(paid_years[1:-1]) == {12}


# the corners: each bound at its most, alone and together
CORNERS = {
    "cola at its bound": (Relief("c", (cola(MAX_COLA_RATE),)), Fraction(0)),
    "cola and the COLA assumption at theirs": (Relief("c", (cola(MAX_COLA_RATE),)),
                                               Fraction(MAX_COLA)),
    "the longest series at the bound, then after_series": (
        Relief("c", (cola(None, tuple((V.year + 1 + k, MAX_COLA_RATE)
                                      for k in range(MAX_SERIES_YEARS)), MAX_COLA_RATE),)),
        Fraction(MAX_COLA)),
    "as many raises as allowed, each at the largest rate": (
        Relief("r", tuple(raises(MAX_ADJUSTMENTS, MAX_RATE))), Fraction(0)),
    "every bound at once": (
        Relief("all", (cola(MAX_COLA_RATE), *raises(MAX_ADJUSTMENTS - 1, MAX_RATE))),
        Fraction(MAX_COLA)),
}


@pytest.mark.parametrize("monthly", [1, 100_000, 10_000_000, MAX_AMOUNT_CENTS])
@pytest.mark.parametrize("corner", list(CORNERS))
def test_each_corner_holds_to_the_cent_or_is_refused(corner, monthly):
    relief, cola_assumption = CORNERS[corner]
    check(monthly, relief, cola_assumption)


def test_a_pension_of_1000_a_month_with_usual_colas_holds_for_a_century():
    # $1,000 a month, a relief COLA of 2.5 % and the assumption's 2.5 % for
    # 100 years (the relief's from the first payment, the assumption's from
    # the year after): 1.025^100 x 1.025^99 = 136.2, about $136,000 a month
    # at the end, held to the cent
    relief = Relief("c", (cola(Decimal("0.025")),))
    assert check(100_000, relief, Fraction(1, 40)) == "held"
    last = exact_amounts(100_000, relief, Fraction(1, 40), 100)[-1]
    assert abs(last / (100_000 * 1.025 ** 199) - 1) < 1e-3


def test_both_colas_at_their_bounds_for_a_century_are_refused():
    # (1.20 x 1.10)^99: $1,000 a month becomes about $900 billion, beyond
    # what a fiscal year's float64 sum holds to the cent: refused, not wrapped
    relief, assumption = CORNERS["cola and the COLA assumption at theirs"]
    assert exact_amounts(100_000, relief, assumption, 100)[-1] > MAX_AMOUNT_CENTS
    assert check(100_000, relief, assumption) == "refused"


def test_doubling_fifty_times_is_refused():
    assert check(100_000, *CORNERS["as many raises as allowed, each at the largest rate"]) \
        == "refused"


@settings(max_examples=examples(60), deadline=None)
@given(monthly=st.integers(1, MAX_AMOUNT_CENTS),
       cola_rate=st.sampled_from([Decimal(0), Decimal("0.025"), MAX_COLA_RATE]),
       assumption=st.sampled_from([Fraction(0), Fraction(1, 40), Fraction(MAX_COLA)]),
       n_raises=st.integers(0, MAX_ADJUSTMENTS - 1),
       raise_rate=st.sampled_from([Decimal("0.1"), Decimal("0.5"), MAX_RATE]))
def test_any_rates_within_the_bounds_hold_or_are_refused(monthly, cola_rate, assumption,
                                                         n_raises, raise_rate):
    adjustments = ([cola(cola_rate)] if cola_rate else []) + raises(n_raises, raise_rate)
    if not adjustments:
        adjustments = raises(1, raise_rate)
    check(monthly, Relief("any", tuple(adjustments)), assumption)
