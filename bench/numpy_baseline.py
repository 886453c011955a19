"""Article 19 written directly in numpy, as a yardstick for the engine.

It starts where `diferida.article19.determine` starts (valid, typed
participants: days since 1970-01-01, service in 1/10,000 years, compensation
in cents) and computes every output of the determination with plain array
arithmetic, exactly (integers only): the status, the reasons, the regime,
the eligibility date and its route, the routes met, the start date, the
premature request, the annual and monthly amounts, whether the 19.6 minimum
applied, and all seven warnings of `diferida.outcomes.WARNINGS`. Every number comes
from the same rules file (`load_rules()`); none of the law is written here.

Left out: validation (the input is taken to be valid: dates within years
1..9999, compensation above zero, entry not after separation, ...), the
explanation, the intermediate columns (bracket parts, formula, minimum).
Outputs are codes and integers, not text:

* status: index in STATUSES; regime: index in `rules.REGIMES`
* reasons, routes_met, warnings: bit masks (bit i: the i-th of REASONS, of
  the rules' routes, of WARNINGS)
* route: index of the winning route, -1 when none
* eligibility, start: days since 1970-01-01 (int32), NONE when empty
* annual_cents, monthly_cents: int64, -1 when empty

`decide` gives them all (and `entitled`); `determine` the ones that
bench/bench_core.py compares with the engine's.

Calendar: every date is turned once into its year and day of the year
counted from 1 March (H. Hinnant's civil_from_days), where 29 February is
the year's last day; anniversaries and spans are sums and table look-ups
from there. A person reaches age N on the N-th anniversary of birth, 29
February falling on 28 February in a common year (rules §4 Decision). The
span check (service longer than entry to separation) is exact only where
the days between the dates leave it in doubt (between days/366 and
days/365 years).

Arithmetic: int32 for days and service, 8-bit codes and masks, int64 for
the amounts' numerators; a row whose numerator would not fit in int64 (a
compensation near the largest rules §1 allows) is computed in Python
integers. Row-by-row choices are bit operations (`pick`), not np.where.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import numpy as np

from diferida.fields import MONEY_PLACES, SERVICE_UNITS
from diferida.outcomes import REASONS, WARNINGS
from diferida.rules import GROUPS, REGIMES, Rules

if TYPE_CHECKING:
    import polars as pl

# the outputs bench/bench_core.py compares with the engine's
COMPARED = ("status", "reasons", "route", "routes_met", "eligibility", "start", "premature",
            "annual_cents", "monthly_cents", "minimum_applied", "warnings")

NONE = np.iinfo(np.int32).min  # an empty date
NEVER = np.iinfo(np.int32).max  # a route that does not open
EPOCH = date(1970, 1, 1)
MAX_YEAR = 9999  # dates are within years 1..9999 (validated by diferida)
_TO_MARCH_1 = 719468  # days from 0000-03-01 to 1970-01-01


def day_of(d: date) -> int:
    return (d - EPOCH).days


def _units(years) -> int:
    """Years of a rules file in 1/SERVICE_UNITS years (exact: rules.py refuses
    finer thresholds)."""
    return int(years * SERVICE_UNITS)


def _mask_type(bits: int) -> type:
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                if np.iinfo(t).bits >= bits)


def _u8(b: np.ndarray) -> np.ndarray:
    return b.view(np.uint8)


def _march(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(year, day of the year) of int32 days since 1970-01-01, the year
    starting on 1 March (day 0; 29 February is day 365, and January and
    February belong to the year before). H. Hinnant's civil_from_days, for
    years >= 0."""
    z = days + np.int32(_TO_MARCH_1)
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    return yoe + era * 400, doe - (365 * yoe + yoe // 4 - yoe // 100)


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of int32 days since 1970-01-01 (civil_from_days)."""
    y, doy = _march(days)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    return y + (m <= 2), m, d


def _month_days(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    short = (m == 4) | (m == 6) | (m == 9) | (m == 11)
    return np.where(m == 2, 28 + leap, np.where(short, 30, 31)).astype(np.int64)


def span_exceeds(units: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """units / SERVICE_UNITS years is more than the span from start to end
    (exclusive) counted as service is (dates.with_span_exceeds, rules §7):
    whole months plus the remaining days over the days of their month,
    rounded half up to 1/SERVICE_UNITS years."""
    sy, sm, sd = _civil(start)
    ey, em, ed = _civil(end)
    ad = np.minimum(sd, _month_days(ey, em))
    back = ad > ed
    py, pm = ey - (em == 1), (em + 10) % 12 + 1
    months = ((ey - sy) * 12 + (em - sm) - back).astype(np.int64)
    length = np.where(back, _month_days(py, pm), _month_days(ey, em))
    days = np.where(back, length - np.minimum(sd, length) + ed, ed - ad).astype(np.int64)
    num = (months * length + days) * SERVICE_UNITS
    span = (2 * num + 12 * length) // (24 * length)
    return np.where(end <= start, units > 0, units.astype(np.int64) > span)


class _Calendar:
    """Tables by year (counted from 1 March): whether the calendar year is
    leap, and the day (since 1970-01-01) its 1 March falls on."""

    def __init__(self, spare_years: int):
        y = np.arange(MAX_YEAR + spare_years + 3, dtype=np.int32)
        self.leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
        self.march_1 = 365 * y + y // 4 - y // 100 + y // 400 - np.int32(_TO_MARCH_1)

    def anniversary(self, year: np.ndarray, doy: np.ndarray, feb29: np.ndarray,
                    n: int) -> np.ndarray:
        """The day of the n-th anniversary of (year, doy); `feb29`: the
        positions where doy is 29 February (it falls on 28 February in a
        common year)."""
        day = self.march_1.take(year + np.int32(n)) + doy
        if feb29.size:
            # 29 February of the March-year y is in calendar year y + 1
            day[feb29] -= ~self.leap.take(year[feb29] + np.int32(n + 1))
        return day

    def years_exceed(self, units: np.ndarray, start: np.ndarray,
                     end: np.ndarray) -> np.ndarray:
        """units / SERVICE_UNITS years is strictly longer than the exact time
        from start to end (dates.with_years_exceed). That time, in years, is
        between days/366 and days/365: outside those bounds the answer needs
        no calendar, and the exact measure is taken between them only."""
        days = np.maximum(end - start, 0)  # before the start: any service exceeds
        wide = (int(units.max(initial=0)) * 366 >= 2**31
                or int(days.max(initial=0)) * SERVICE_UNITS >= 2**31)
        kind = np.int64 if wide else np.int32
        span = days.astype(kind) * kind(SERVICE_UNITS)
        low = units.astype(kind) * kind(365)
        exceeds = low > span
        doubt = np.flatnonzero((low <= span) & (low + units > span))
        if doubt.size:
            exceeds[doubt] = self._years_exceed(units[doubt], start[doubt], end[doubt])
        return exceeds

    def _years_exceed(self, units: np.ndarray, start: np.ndarray,
                      end: np.ndarray) -> np.ndarray:
        """The exact measure: completed years (anniversaries of start up to
        end) plus the days since the last one over the length of that year
        of life, the same arithmetic as dates.with_years_exceed."""
        sy, sd = _march(start)
        ey, ed = _march(end)
        s29 = np.flatnonzero(sd == 365)
        # the start's anniversary in the end's year (28 February when common)
        sd_end = sd.copy()
        if s29.size:
            sd_end[s29] -= ~self.leap.take(ey[s29] + 1)
        years = ey - sy - (ed < sd_end)
        last_year = sy + years
        last = self.march_1.take(last_year) + sd
        if s29.size:
            last[s29] -= ~self.leap.take(last_year[s29] + 1)
        # the year of life from `last` holds the next 29 February: that of
        # calendar year last_year + 1, or + 2 when it starts on 28/29 February
        after = last_year + 1
        if s29.size:
            after[s29] += 1
        span = 365 + self.leap.take(after).astype(np.int32)
        lhs = units.astype(np.int64) * span
        rhs = (years * span + (end - last)).astype(np.int64) * SERVICE_UNITS
        return np.where(end < start, units > 0, lhs > rhs)


def arrays_from_typed(typed: pl.DataFrame) -> dict[str, np.ndarray]:
    """The engine's typed input as numpy arrays (not timed)."""
    import polars as pl

    def days(c: str) -> np.ndarray:
        return typed[c].cast(pl.Int32).fill_null(NONE).to_numpy()

    return {
        "birth": days("birth_date"), "entry": days("entry_date"),
        "sep": days("separation_date"), "req": days("requested_start_date"),
        "as_of": days("as_of"),
        "units": typed["service_units"].cast(pl.Int32).to_numpy(),
        "cents": typed["compensation_cents"].cast(pl.Int64).to_numpy(),
        "group": typed["group"].replace_strict({g: i for i, g in enumerate(GROUPS)},
                                               return_dtype=pl.Int8).to_numpy(),
        "refund": typed["refund_requested"].to_numpy(),
        "right1960": typed["deferred_right_1960"].to_numpy(),
    }


def routes_table(rules: Rules) -> tuple[list[int], np.ndarray]:
    """The routes as a decision table: the service thresholds of the rules
    (sorted), and the mask of routes met (bit i: route i) of every (regime,
    group, service band), band b holding thresholds[b-1] <= S < thresholds[b].
    Look-up index: (regime × len(GROUPS) + group) × (len(thresholds) + 1) + band."""
    lows = [_units(r.min_service) for r in rules.routes]
    highs = [None if r.max_service is None else _units(r.max_service) for r in rules.routes]
    thresholds = sorted({*lows, *(h for h in highs if h is not None)})
    mask = _mask_type(len(rules.routes))
    table = np.zeros(len(REGIMES) * len(GROUPS) * (len(thresholds) + 1), dtype=mask)
    k = 0
    for reg in REGIMES:
        for g in GROUPS:
            for band in range(len(thresholds) + 1):
                s = thresholds[band - 1] if band else -1  # any service of the band
                for i, r in enumerate(rules.routes):
                    if (reg in r.regimes and g in r.groups and lows[i] <= s
                            and (highs[i] is None or s < highs[i])):
                        table[k] |= mask(1 << i)
                k += 1
    return thresholds, table


def pick(mask: np.ndarray, a: np.ndarray, b) -> np.ndarray:
    """np.where(mask, a, b) for integers, by bit operations: a mask that
    changes from row to row makes np.where (and copyto's where=) ten times
    slower than plain arithmetic."""
    ones = mask.astype(a.dtype)
    np.negative(ones, out=ones)  # every bit set where mask holds
    return b ^ ((a ^ b) & ones)


def _weights(units: np.ndarray, rules: Rules, reg: str) -> np.ndarray:
    """Regla 19.5 under a regime: sum over brackets of rate × rate_scale ×
    service in the bracket (1/SERVICE_UNITS years): the annual amount is
    compensation × this over rate_scale × SERVICE_UNITS. int64 (int32 when
    the largest service allows it)."""
    brackets = rules.amount[reg].brackets
    rates = [int(b.rate * rules.rate_scale) for b in brackets]
    top = int(units.max(initial=0)) * max(rates)
    kind = np.int32 if top < 2**31 else np.int64
    w = np.zeros(units.shape, dtype=kind)
    for j, (b, rate) in enumerate(zip(brackets, rates)):
        lo = _units(b.threshold)
        hi = _units(brackets[j + 1].threshold) - lo if j + 1 < len(brackets) else None
        years = units if lo == 0 and hi is None else np.clip(units - np.int32(lo), 0, hi)
        w += np.multiply(years, rate, dtype=kind)
    return w


def decide(a: dict[str, np.ndarray], rules: Rules) -> dict[str, np.ndarray]:
    """Every output (see the module's docstring), and `entitled`."""
    i32 = np.int32
    birth, entry = np.asarray(a["birth"], i32), np.asarray(a["entry"], i32)
    sep, req = np.asarray(a["sep"], i32), np.asarray(a["req"], i32)
    as_of = np.asarray(a["as_of"], i32)
    units, cents = np.asarray(a["units"], i32), np.asarray(a["cents"], np.int64)
    refund, right1960 = np.asarray(a["refund"], bool), np.asarray(a["right1960"], bool)
    n = birth.shape[0]
    separated = sep != NONE
    # Regla 19.2: "después del" the date; the day itself is still pre-1990
    new = entry > day_of(rules.new_participant_after)
    regime = pick(new, np.full(n, REGIMES.index("new"), np.uint8), REGIMES.index("pre1990"))
    covered = entry < day_of(rules.not_covered_from)

    # rules §4: the routes met, from the decision table
    thresholds, table = routes_table(rules)
    band = np.zeros(n, dtype=np.int8)
    for t in thresholds:
        band += units >= t
    klass = regime * np.int8(len(GROUPS)) + np.asarray(a["group"], np.int8)
    met = table.take(klass * np.int8(len(thresholds) + 1) + band)

    flags = {"not_covered": ~covered, "not_separated": ~separated,
             "refund_requested": refund, "insufficient_service": met == 0}
    reasons = np.zeros(n, dtype=np.uint8)
    for bit, name in enumerate(REASONS):
        reasons |= _u8(flags[name]) << np.uint8(bit)
    entitled = reasons == 0

    # Each route opens on max(separation, the day its age is reached); the
    # earliest opening wins, ties going to the first route of the rules file:
    # the least of opening × R + route index (R a power of two above the
    # number of routes) gives both at once.
    cal = _Calendar(max(max(r.age for r in rules.routes), rules.min_entry_age))
    by, bd = _march(birth)
    b29 = np.flatnonzero(bd == 365)
    shift = max(len(rules.routes) - 1, 1).bit_length()
    opens: dict[int, np.ndarray] = {}
    best = np.full(n, NEVER, dtype=i32)
    for i, r in enumerate(rules.routes):
        if r.age not in opens:  # not separated (NONE): not entitled
            day = np.maximum(sep, cal.anniversary(by, bd, b29, r.age))
            opens[r.age] = day << np.int32(shift)
        holds = (met >> met.dtype.type(i)) & met.dtype.type(1)
        np.minimum(best, pick(holds, opens[r.age] | np.int32(i), NEVER), out=best)
    elig = best >> np.int32(shift)
    route = (best & np.int32((1 << shift) - 1)).astype(np.int8)

    # Reglas 19.5 and 19.6, exact: compensation × weight over rate_scale ×
    # SERVICE_UNITS, rounded half up once; the minimum counts when strictly higher
    weight = _weights(units, rules, REGIMES[0])
    for k, reg in enumerate(REGIMES[1:], start=1):
        other = _weights(units, rules, reg)
        kind = np.result_type(weight, other)
        weight = pick(regime == k, other.astype(kind, copy=False), weight.astype(kind))
    floor = int(rules.minimum_rate * rules.rate_scale) * SERVICE_UNITS
    minimum = right1960 & (weight < floor)  # compensation is above zero
    den = rules.rate_scale * SERVICE_UNITS
    weight = weight.astype(np.int64 if floor >= 2**31 else weight.dtype, copy=False)
    weight = np.maximum(weight, np.multiply(right1960, floor, dtype=weight.dtype))
    exact2 = weight * cents
    exact2 <<= 1
    annual = exact2 + den
    annual //= 2 * den
    exact2 += 12 * den
    exact2 //= 24 * den
    monthly = exact2
    limit = (2**63 - 1 - 24 * den) // 2  # the largest numerator int64 holds here
    if n and int(cents.max()) * int(weight.max()) > limit:
        # the rows beyond 64-bit numerators (if any: the bound is of the
        # largest of each), exact in Python integers
        wide = np.flatnonzero(cents.astype(np.float64) * weight >= limit / 2)
        for i in wide.tolist():
            e2 = int(cents[i]) * int(weight[i]) * 2
            annual[i], monthly[i] = (e2 + den) // (2 * den), (e2 + 12 * den) // (24 * den)

    # not entitled: status 2, the rest empty
    status = np.maximum(_u8(elig > as_of), _u8(~entitled) * np.uint8(2)).view(np.int8)
    start_ok = entitled & (req >= elig)
    premature = entitled & (req != NONE) & (req < elig)

    act3 = rules.act_3_2013
    end = pick(separated, sep + np.int32(1), entry)  # the separation day is served
    checks = {
        "service_exceeds_span": separated & span_exceeds(units, entry, end),
        # premature or not, as the batch (rules §5): any start asked before as_of
        "start_before_determination": entitled & (req != NONE) & (req < as_of),
        "implausible_entry_age": entry < cal.anniversary(by, bd, b29, rules.min_entry_age),
        # separated on or after the winning route's age: it opened on separation
        "retirement_annuity_may_apply": entitled & (elig == sep),
        "act_3_2013_accruals_frozen": entitled & (sep > day_of(act3.accruals_frozen_after)),
        "act_3_2013_ages_may_apply": entitled & (elig > day_of(act3.ages_changed_after)),
        "act_3_2013_minimum_may_apply": entitled & (
            monthly < int(act3.minimum_monthly * 10**MONEY_PLACES)),
    }
    warnings = np.zeros(n, dtype=np.uint8)
    for bit, name in enumerate(WARNINGS):
        warnings |= _u8(checks[name]) << np.uint8(bit)
    return {
        "status": status, "reasons": reasons, "regime": regime,
        "route": pick(entitled, route, -1), "routes_met": pick(entitled, met, 0),
        "eligibility": pick(entitled, elig, NONE), "start": pick(start_ok, req, NONE),
        "premature": premature, "annual_cents": pick(entitled, annual, -1),
        "monthly_cents": pick(entitled, monthly, -1),
        "minimum_applied": entitled & minimum, "warnings": warnings, "entitled": entitled,
    }


def determine(a: dict[str, np.ndarray], rules: Rules) -> dict[str, np.ndarray]:
    """The outputs of `decide` that bench/bench_core.py compares (COMPARED)."""
    out = decide(a, rules)
    return {k: out[k] for k in COMPARED}
