"""The projection's arithmetic, hand-computed cases and properties
(engine level: members given as arrays; the file path is in
test_projection_files.py)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.projection.engine import (
    Assumptions,
    Members,
    cola_amounts,
    day_date,
    day_number,
    exact_age,
    project,
)
from diferida.projection.mortality import MAX_AGE, no_mortality

from .conftest import examples
from .projection_helpers import (
    age,
    constant_table,
    gompertz_q,
    gompertz_table,
    reference,
)

V = date(2026, 11, 29)


def one(birth: date, start: date, monthly_cents: int, sex: int = -1, kind: int = 0) -> Members:
    return Members(np.array([day_number(birth)]), np.array([day_number(start)]),
                   np.array([monthly_cents]), np.array([sex], dtype=np.int8),
                   np.array([kind], dtype=np.int8))


def by_year(p, values) -> dict[int, float]:
    return {int(y): float(v) for y, v in zip(p.fiscal_years, values) if v}


def test_one_member_no_mortality_zero_discount_exact():
    # eligible 2030-03-15: first payment 2030-04-01; FY2030 holds April, May, June
    p = project(one(date(1965, 3, 15), date(2030, 3, 15), 120_000),
                Assumptions(V, [0.0], no_mortality(), horizon=6))
    assert [int(y) for y in p.fiscal_years] == [2027, 2028, 2029, 2030, 2031, 2032]
    assert p.payments.tolist() == [0, 0, 0, 3 * 120_000, 12 * 120_000, 12 * 120_000]
    assert p.pv[0].tolist() == p.payments.tolist()
    assert p.starts.tolist() == [0, 0, 0, 1, 0, 0]
    assert p.in_pay.tolist() == [0, 0, 0, 1, 1, 1]
    assert day_date(p.first_payment[0]) == date(2030, 4, 1)
    assert p.member_payments[0] == 27 * 120_000


def test_already_eligible_first_payment_is_first_first_on_or_after_v():
    p = project(one(date(1950, 1, 1), date(2015, 1, 1), 100_00),
                Assumptions(V, [0.0], no_mortality(), horizon=1))
    assert day_date(p.first_payment[0]) == date(2026, 12, 1)
    # December .. June: 7 payments in FY2027
    assert p.payments.tolist() == [7 * 100_00]
    # a valuation date on the 1st: that day is a payment date
    p = project(one(date(1950, 1, 1), date(2015, 1, 1), 100_00),
                Assumptions(date(2026, 12, 1), [0.0], no_mortality(), horizon=1))
    assert day_date(p.first_payment[0]) == date(2026, 12, 1)
    assert p.payments.tolist() == [7 * 100_00]


def test_start_mid_fiscal_year():
    # start 2028-01-15 -> first payment 2028-02-01, in FY2028 (Feb..Jun: 5 payments)
    p = project(one(date(1963, 1, 15), date(2028, 1, 15), 50_000),
                Assumptions(V, [0.0], no_mortality(), horizon=3))
    assert by_year(p, p.payments) == {2028: 5 * 50_000, 2029: 12 * 50_000}
    assert by_year(p, p.starts) == {2028: 1}
    # the 1st itself counts
    p = project(one(date(1963, 1, 1), date(2028, 1, 1), 50_000),
                Assumptions(V, [0.0], no_mortality(), horizon=2))
    assert by_year(p, p.payments) == {2028: 6 * 50_000}


def test_cola_on_1_july_rounded_half_up():
    # first payment 2027-03-01: FY2027 at 1000.00 (Mar..Jun), then +3% each 1 July
    p = project(one(date(1962, 3, 1), date(2027, 3, 1), 100_000),
                Assumptions(V, [0.0], no_mortality(), Fraction(3, 100), horizon=4))
    assert by_year(p, p.payments) == {2027: 4 * 100_000, 2028: 12 * 103_000,
                                      2029: 12 * 106_090, 2030: 12 * 109_273}  # 1092.727
    # a first payment on 1 July is not raised that day
    p = project(one(date(1962, 7, 1), date(2027, 7, 1), 100_000),
                Assumptions(V, [0.0], no_mortality(), Fraction(3, 100), horizon=3))
    assert by_year(p, p.payments) == {2028: 12 * 100_000, 2029: 12 * 103_000}


def test_cola_rounding_is_half_up_in_exact_arithmetic():
    # 1000.10 x 1.05 = 1050.105 -> 1050.11 (half up; half-even would give 1050.10)
    out = cola_amounts(np.array([100_010]), 3, Fraction(5, 100))
    assert out.tolist() == [[100_010, 105_011, 110_262]]  # 1050.11 x 1.05 = 1102.6155


def test_constant_q_closed_form():
    # born 1 July, valued on a birthday that is a 1st: age-years are fiscal years
    q = 0.05
    v = date(2026, 7, 1)
    p = project(one(date(1960, 7, 1), date(2020, 1, 1), 100_000),
                Assumptions(v, [0.0], constant_table(q), horizon=10))
    for n, fy in enumerate(range(2027, 2037)):
        year_start = date(fy - 1, 7, 1)
        days = (date(fy, 7, 1) - year_start).days
        months = [date(fy - 1 + (m >= 6), (6 + m) % 12 + 1, 1) for m in range(12)]
        fractions = sum((d - year_start).days for d in months) / days
        expected = 100_000 * (1 - q) ** n * (12 - q * fractions)
        assert p.payments[n] == pytest.approx(expected, rel=1e-12)
        # paid on 1 June: alive n years and 11 months (UDD within the year)
        june = (date(fy, 6, 1) - year_start).days / days
        assert p.in_pay[n] == pytest.approx((1 - q) ** n * (1 - june * q), rel=1e-12)


@pytest.mark.parametrize("rate", [0.0, 0.04, 0.0625])
def test_present_value_matches_an_independent_annuity_factor(rate):
    table = gompertz_table(before_scale=0.6)  # employee rates lower than retiree ones
    birth, start = date(1968, 2, 29), date(2031, 9, 20)
    p = project(one(birth, start, 123_456, sex=0),
                Assumptions(V, [rate], table, Fraction(0)))
    ref = reference(birth, start, 123_456, V, gompertz_q("F", 0.6), gompertz_q("F"),
                    rate=rate)
    for fy, (pay, pv) in ref.items():
        k = fy - 2027
        assert p.payments[k] == pytest.approx(pay, rel=1e-9, abs=1e-6)
        assert p.pv[0][k] == pytest.approx(pv, rel=1e-9, abs=1e-6)
    assert p.member_pv[0][0] == pytest.approx(sum(v for _, v in ref.values()), rel=1e-9)


def test_blended_sex_is_the_weighted_mean_and_cola_with_mortality():
    table = gompertz_table()
    birth, start = date(1970, 10, 3), date(2032, 1, 2)
    a = lambda w: Assumptions(V, [0.05], table, Fraction(2, 100), female_weight=w)  # noqa: E731
    f = project(one(birth, start, 80_000, sex=0), a(0.5))
    m = project(one(birth, start, 80_000, sex=1), a(0.5))
    b = project(one(birth, start, 80_000, sex=-1), a(0.3))
    np.testing.assert_allclose(b.payments, 0.3 * f.payments + 0.7 * m.payments, rtol=1e-12)
    np.testing.assert_allclose(b.pv, 0.3 * f.pv + 0.7 * m.pv, rtol=1e-12)
    ref = reference(birth, start, 80_000, V, gompertz_q("M"), gompertz_q("M"), rate=0.05,
                    cola=0.02)
    for fy, (pay, pv) in ref.items():
        # to a millionth of a cent (the last years' values are cents)
        assert m.payments[fy - 2027] == pytest.approx(pay, rel=1e-9, abs=1e-6)
        assert m.pv[0][fy - 2027] == pytest.approx(pv, rel=1e-9, abs=1e-6)


def test_payments_stop_after_the_month_age_120_is_reached():
    # 120 on 2027-03-15: the payment of 1 March 2027 is the last
    p = project(one(date(1907, 3, 15), date(1970, 1, 1), 10_000),
                Assumptions(V, [0.0], no_mortality()))
    assert by_year(p, p.payments) == {2027: 4 * 10_000}  # Dec, Jan, Feb, Mar
    assert MAX_AGE == 120


def test_exact_age_follows_spec_4_for_29_february():
    b = np.array([date(1968, 2, 29)])
    days = np.array([day_number(date(2027, 2, 28)), day_number(date(2027, 2, 27)),
                     day_number(date(2028, 2, 29))])
    x, f = exact_age(2 * 0 + 1968, 2, 29, days)
    assert x.tolist() == [59, 58, 60]
    assert f[0] == 0 and f[2] == 0
    assert age(b[0], date(2027, 2, 27)) == (58, pytest.approx(f[1]))


def test_switch_from_before_to_after_rates_at_the_start():
    # with no payments before the start, lower before-start mortality raises the value
    birth, start = date(1975, 5, 5), date(2035, 5, 5)
    hi = project(one(birth, start, 100_000, sex=1),
                 Assumptions(V, [0.04], gompertz_table(before_scale=1.0)))
    lo = project(one(birth, start, 100_000, sex=1),
                 Assumptions(V, [0.04], gompertz_table(before_scale=0.5)))
    assert lo.pv[0].sum() > hi.pv[0].sum()


# ----------------------------------------------------------------- properties

members_st = st.lists(
    st.tuples(st.dates(date(1930, 1, 1), date(1995, 12, 31)),
              st.integers(0, 365 * 40), st.integers(1, 1_000_000), st.sampled_from([-1, 0, 1]),
              st.sampled_from([0, 1])),
    min_size=1, max_size=8)


def _members(rows) -> Members:
    return Members(
        np.array([day_number(b) for b, *_ in rows]),
        np.array([day_number(b) + 50 * 365 + d for b, d, *_ in rows]),
        np.array([c for _, _, c, *_ in rows]), np.array([s for *_, s, _ in rows],
                                                        dtype=np.int8),
        np.array([k for *_, k in rows], dtype=np.int8))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members_st, st.floats(0.0, 0.1), st.floats(0.001, 0.1))
def test_present_value_falls_as_the_rate_rises(rows, i, step):
    p = project(_members(rows), Assumptions(V, [i, i + step], gompertz_table()))
    total = p.pv.sum(axis=1)
    assert total[1] <= total[0] * (1 + 1e-12)
    if p.payments.sum() > 0:
        assert total[1] < total[0]
        assert total[0] <= p.payments.sum() * (1 + 1e-12)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members_st, st.floats(0.3, 0.99))
def test_present_value_rises_with_lower_mortality(rows, scale):
    m = _members(rows)
    base = project(m, Assumptions(V, [0.04], gompertz_table()))
    lower = project(m, Assumptions(V, [0.04], gompertz_table(scale)))
    assert lower.pv.sum() >= base.pv.sum() * (1 - 1e-12)
    none = project(m, Assumptions(V, [0.04], no_mortality()))
    assert none.pv.sum() >= lower.pv.sum() * (1 - 1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(members_st, st.integers(0, 5))
@pytest.mark.slow
def test_no_mortality_is_exact_to_the_cent(rows, cola_pct):
    m = _members(rows)
    p = project(m, Assumptions(V, [0.0], no_mortality(), Fraction(cola_pct, 100)))
    for i, row in enumerate(rows):
        birth = row[0]
        start = day_date(m.start[i])
        ref = reference(birth, start, row[2], V, np.zeros(121), np.zeros(121),
                        cola=cola_pct / 100)
        assert p.member_payments[i] == sum(v[0] for v in ref.values())
    assert all(float(x).is_integer() for x in p.payments)
    assert Decimal(int(p.payments.sum())) == Decimal(int(p.member_payments.sum()))


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.dates(date(1900, 1, 1), date(2010, 12, 31)), min_size=1, max_size=5),
       st.dates(date(2020, 1, 1), date(2040, 1, 1)), st.integers(1, 400))
def test_grid_age_equals_exact_age(births, first, n):
    from diferida.projection.engine import civil_from_days, grid_age, month_day, month_number

    b = np.array([day_number(x) for x in births])
    by, bm, bd = civil_from_days(b)
    days = month_day(month_number(np.array([day_number(first)]))[0] + np.arange(n))
    x, f = grid_age(by, bm, bd, days)
    x2, f2 = exact_age(by[:, None], bm[:, None], bd[:, None], days[None, :])
    assert np.array_equal(x, x2)
    assert np.array_equal(f, f2)
