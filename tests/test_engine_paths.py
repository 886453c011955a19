"""The projection engine's two ways to the same sums: key by key (the
fiscal-year totals, each member's own totals, the expected payment of each
payment date) and record by record (the totals by group, as the employers'
schedule takes them). Each member's totals and each group's fiscal years
must agree between the two, with and without a COLA, with claim entries."""

from __future__ import annotations

from datetime import date
from fractions import Fraction

import numpy as np
import pytest

from diferida.projection.engine import Assumptions, Members, day_number, project

from .projection_helpers import gompertz_table


def _members(n: int, seed: int) -> Members:
    rng = np.random.default_rng(seed)
    birth = rng.integers(day_number(date(1935, 1, 1)), day_number(date(1990, 1, 1)), n)
    start = birth + rng.integers(50 * 365, 70 * 365, n)
    return Members(birth, start, rng.integers(10_000, 400_000, n),
                   rng.integers(-1, 2, n).astype(np.int8), rng.integers(0, 2, n).astype(np.int8),
                   weight=rng.choice([1.0, 0.5, 0.25], n), in_pay=rng.random(n) < 0.2)


@pytest.mark.parametrize("cola", [Fraction(0), Fraction(3, 100)])
@pytest.mark.parametrize("v", [date(2026, 6, 30), date(2026, 11, 29)])
def test_member_totals_and_monthly_payments_agree_with_the_record_path(cola, v):
    m = _members(600, 3)
    a = Assumptions(v, [0.04, 0.0625], gompertz_table(), cola, None, 0.5)
    keyed = project(m, a, per_member=True)
    m.group, m.groups = np.arange(len(m.birth)) % 4, 4
    by_record = project(m, a, per_member=True)
    close = {"rtol": 1e-9, "atol": 1e-3}  # cents: the sums differ in their order only
    np.testing.assert_allclose(keyed.member_payments, by_record.member_payments, **close)
    np.testing.assert_allclose(keyed.member_pv, by_record.member_pv, **close)
    np.testing.assert_allclose(by_record.group_payments.sum(axis=0), keyed.payments, **close)
    np.testing.assert_allclose(by_record.group_pv.sum(axis=0), keyed.pv, **close)
    m.group = None
    monthly = project(m, a, per_member=False, monthly=True)
    fy = np.searchsorted(keyed.fiscal_years * 12 + 5,
                         [(date.fromordinal(date(1970, 1, 1).toordinal() + int(d)).year * 12
                           + date.fromordinal(date(1970, 1, 1).toordinal() + int(d)).month - 1)
                          for d in monthly.month_days])
    np.testing.assert_allclose(np.bincount(fy, weights=monthly.month_payments,
                                           minlength=len(keyed.payments)), keyed.payments,
                               rtol=1e-9, atol=1e-3)
