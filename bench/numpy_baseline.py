"""Article 19 written directly in numpy, as a yardstick for the engine.

It starts where `diferida.article19.determine` starts (valid, typed
participants: days since 1970-01-01, service in 1/10,000 years, compensation
in cents) and computes the same outputs with plain array arithmetic: no
validation, no explanation, no text columns. Every number comes from the
same rules file. Outputs are codes and integers:

* status: 0 eligible, 1 not_yet_eligible, 2 not_entitled
* reasons, routes_met, warnings: bit masks (bit i = i-th reason/route/warning)
* route: index of the winning route, -1 when none
* eligibility, start: days since 1970-01-01, NONE when empty
* annual_cents, monthly_cents: -1 when empty
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import numpy as np

from diferida.fields import SERVICE_UNITS
from diferida.rules import REGIMES, Rules

if TYPE_CHECKING:
    import polars as pl

NONE = np.iinfo(np.int64).min
EPOCH = date(1970, 1, 1)


def _days(d: date) -> int:
    return (d - EPOCH).days


def _is_leap(y: np.ndarray) -> np.ndarray:
    return ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)


def _civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of (y, m, d) (H. Hinnant's days_from_civil)."""
    y = y - (m <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = np.where(m > 2, m - 3, m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _ymd(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of days since 1970-01-01 (H. Hinnant's
    civil_from_days, integer arithmetic only)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    return yoe + era * 400 + (m <= 2), m, d


def _anniversary(y, m, d, years):
    yy = y + years
    return _civil(yy, m, np.where((m == 2) & (d == 29) & ~_is_leap(yy), 28, d))


def _years_exceed(units: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """units / SERVICE_UNITS years is longer than the exact time start..end."""
    y, m, d = _ymd(start)
    ey, em, ed = _ymd(end)
    smd = np.where((m == 2) & (d == 29) & ~_is_leap(ey), 228, m * 100 + d)
    years = ey - y - ((em * 100 + ed) < smd)
    last = _anniversary(y, m, d, years)
    span = _anniversary(y, m, d, years + 1) - last
    return np.where(end < start, units > 0,
                    units * span > (years * span + (end - last)) * SERVICE_UNITS)


def arrays_from_typed(typed: pl.DataFrame) -> dict[str, np.ndarray]:
    """The engine's typed input as numpy arrays (not timed: a zero-copy view
    for most columns)."""
    import polars as pl

    def days(c: str) -> np.ndarray:
        return typed[c].cast(pl.Int32).cast(pl.Int64).fill_null(NONE).to_numpy()

    groups = {"general": 0, "police": 1, "firefighter": 2}
    return {
        "birth": days("birth_date"), "entry": days("entry_date"),
        "sep": days("separation_date"), "req": days("requested_start_date"),
        "as_of": days("as_of"),
        "units": typed["service_units"].cast(pl.Int64).to_numpy(),
        "cents": typed["compensation_cents"].cast(pl.Int64).to_numpy(),
        "group": typed["group"].replace_strict(groups, return_dtype=pl.Int8).to_numpy(),
        "refund": typed["refund_requested"].to_numpy(),
        "right1960": typed["deferred_right_1960"].to_numpy(),
    }


def determine(a: dict[str, np.ndarray], rules: Rules) -> dict[str, np.ndarray]:
    birth, entry, sep, req, as_of = a["birth"], a["entry"], a["sep"], a["req"], a["as_of"]
    units, cents = a["units"], a["cents"]
    separated = sep != NONE
    new = entry > _days(rules.new_participant_after)
    covered = entry < _days(rules.not_covered_from)
    group_codes = {"general": 0, "police": 1, "firefighter": 2}

    by, bm, bd = _ymd(birth)
    big = np.iinfo(np.int64).max
    elig = np.full(birth.shape, big, dtype=np.int64)
    route = np.full(birth.shape, -1, dtype=np.int64)
    route_age = np.zeros(birth.shape, dtype=np.int64)
    met = np.zeros(birth.shape, dtype=np.int64)
    for i, r in enumerate(rules.routes):
        applies = np.zeros(birth.shape, dtype=bool)
        for reg in r.regimes:
            applies |= new if reg == "new" else ~new
        in_group = np.zeros(birth.shape, dtype=bool)
        for g in r.groups:
            in_group |= a["group"] == group_codes[g]
        holds = applies & in_group & (units >= int(r.min_service * SERVICE_UNITS))
        if r.max_service is not None:
            holds &= units < int(r.max_service * SERVICE_UNITS)
        met |= holds.astype(np.int64) << i
        age_day = _anniversary(by, bm, bd, r.age)
        opens = np.where(holds & separated, np.maximum(sep, age_day), big)
        better = opens < elig  # strictly earlier: ties stay with the first route
        elig = np.where(better, opens, elig)
        route = np.where(better, i, route)
        route_age = np.where(better, age_day, route_age)

    reasons = (~covered * 1) | (~separated * 2) | (a["refund"] * 4) | ((met == 0) * 8)
    entitled = reasons == 0

    # Regla 19.5: exact numerators over rate_scale × SERVICE_UNITS, per regime
    scale = rules.rate_scale
    formula = np.zeros(birth.shape, dtype=np.int64)
    for reg in REGIMES:
        brackets = rules.amount[reg].brackets
        part = np.zeros(birth.shape, dtype=np.int64)
        for j, b in enumerate(brackets):
            lo = int(b.threshold * SERVICE_UNITS)
            years = np.clip(units - lo, 0, None)
            if j + 1 < len(brackets):
                years = np.minimum(years, int(brackets[j + 1].threshold * SERVICE_UNITS) - lo)
            part += cents * int(b.rate * scale) * years
        formula = np.where(new == (reg == "new"), part, formula)
    minimum = np.where(a["right1960"], cents * int(rules.minimum_rate * scale) * SERVICE_UNITS,
                       -1)
    exact = np.maximum(formula, minimum)
    den = scale * SERVICE_UNITS
    annual = np.where(entitled, (2 * exact + den) // (2 * den), -1)
    monthly = np.where(entitled, (2 * exact + 12 * den) // (24 * den), -1)

    elig = np.where(entitled, elig, NONE)
    status = np.where(~entitled, 2, np.where(elig <= as_of, 0, 1))
    has_req = req != NONE
    start = np.where(entitled & has_req & (req >= elig), req, NONE)
    premature = entitled & has_req & (req < elig)
    # the separation day is the last day of service
    span = separated & _years_exceed(units, entry, np.where(separated, sep + 1, entry))
    annuity = entitled & (sep >= route_age)
    return {
        "status": status, "reasons": reasons, "route": np.where(entitled, route, -1),
        "routes_met": np.where(entitled, met, 0), "eligibility": elig, "start": start,
        "premature": premature, "annual_cents": annual, "monthly_cents": monthly,
        "minimum_applied": entitled & (minimum > formula),
        "warnings": span * 1 | annuity * 2,
    }
