"""Properties over many random participants (hypothesis), each checked
against a reference written here from rules §1-§7 alone with the standard
library: exact fractions for money, `datetime.date` for the calendar."""

from __future__ import annotations

import calendar
import math
import random
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import diferida
from diferida.dates import date_reaching_age

from .conftest import AS_OF, examples

PROPERTY = settings(max_examples=examples(120), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
UNITS = 10_000  # service in 1/10,000 years (rules §1: at most 4 decimal places)


# ---- the reference, from rules alone -----------------------------------------

def reaching_age(birth: date, age: int) -> date:
    """rules §4: the age-th anniversary; 29 February -> 28 February in a common year."""
    year = birth.year + age
    if birth.month == 2 and birth.day == 29 and not calendar.isleap(year):
        return date(year, 2, 28)
    return birth.replace(year=year)


def exact_years(start: date, end: date) -> Fraction:
    """rules §1: completed years plus the fraction of the current year."""
    years = end.year - start.year
    if reaching_age(start, years) > end:
        years -= 1
    last, following = reaching_age(start, years), reaching_age(start, years + 1)
    return years + Fraction((end - last).days, (following - last).days)


def calendar_span(start: date, end: date) -> Fraction:
    """rules §7 Decision: the span counted as service is: whole months from
    `start` to `end` (exclusive; a month ends on the same day of a later month,
    or on its last day), plus the remaining days over the days of the month
    they start in; a month is 1/12 of a year; rounded half up to 4 places."""
    months = (end.year - start.year) * 12 + end.month - start.month
    while True:
        y, m = divmod(start.month - 1 + months, 12)
        y, m = start.year + y, m + 1
        anchor = date(y, m, min(start.day, calendar.monthrange(y, m)[1]))
        if anchor <= end:
            break
        months -= 1
    exact = (Fraction(months) + Fraction((end - anchor).days,
                                         calendar.monthrange(y, m)[1])) / 12
    return Fraction(math.floor(exact * 10_000 + Fraction(1, 2)), 10_000)


def round_half_up(x: Fraction) -> Decimal:
    """To the cent, half up, once (rules §6)."""
    return Decimal(math.floor(x * 100 + Fraction(1, 2))) / 100


ALL, UNIFORMED = {"general", "police", "firefighter"}, {"police", "firefighter"}
# rules §4: (route, regimes, groups, age, min service, max service (exclusive))
ROUTES = [
    ("19.1(a)", {"pre1990"}, ALL, 58, 10, 25),
    ("19.1(b)", {"pre1990"}, ALL, 55, 25, None),
    ("19.2", {"new"}, ALL, 65, 10, None),
    ("19.4(a)", {"pre1990", "new"}, UNIFORMED, 50, 25, None),
    ("19.4(b)", {"pre1990", "new"}, UNIFORMED, 58, 10, None),
]


def as_date(text: str | None) -> date | None:
    return None if text is None else date.fromisoformat(text)


def has_deferred_right_1960(p: dict) -> bool:
    """rules §6: a declared value stands; empty is true exactly when the first
    entry is on or before 1960-06-30."""
    declared = p.get("deferred_right_1960")
    if declared is None:
        return as_date(p["entry_date"]) <= date(1960, 6, 30)
    return declared == "true"


def reference_amount(p: dict) -> tuple[Fraction, Fraction, bool]:
    """(exact annual amount, exact formula, minimum applied) per rules §6."""
    s = Fraction(p["creditable_service_years"])
    ac = Fraction(p["average_compensation"])
    if as_date(p["entry_date"]) > date(1990, 4, 1):  # 19.5(b)
        formula = ac * Fraction(15, 1000) * s
    else:  # 19.5(a)
        formula = ac * (Fraction(15, 1000) * min(s, 20) + Fraction(2, 100) * max(s - 20, 0))
    if has_deferred_right_1960(p):
        minimum = ac * Fraction(30, 100)
        if minimum > formula:
            return minimum, formula, True
    return formula, formula, False


def reference(p: dict, as_of: date = AS_OF) -> dict:
    """The determination of rules §2-§7, as the keys of Determination.to_dict()."""
    birth, entry = as_date(p["birth_date"]), as_date(p["entry_date"])
    sep, req = as_date(p.get("separation_date")), as_date(p.get("requested_start_date"))
    s = Fraction(p["creditable_service_years"])
    regime = "new" if entry > date(1990, 4, 1) else "pre1990"
    holding = [r for r in ROUTES if regime in r[1] and p["group"] in r[2]
               and s >= r[4] and (r[5] is None or s < r[5])]
    reasons = [code for code, applies in [
        ("not_covered", entry >= date(2000, 1, 1)),
        ("not_separated", sep is None),
        ("refund_requested", p["refund_requested"] == "true"),
        ("insufficient_service", not holding),
    ] if applies]
    span = sep is not None and s > calendar_span(entry, sep + timedelta(days=1))
    implausible = entry < reaching_age(birth, 14)  # rules §7 data check
    warnings = [code for code, applies in [("service_exceeds_span", span),
                                            ("implausible_entry_age", implausible)] if applies]
    out = {"status": "not_entitled", "reasons": reasons, "regime": regime,
           "eligibility_date": None, "route": None, "routes_met": [], "start_date": None,
           "premature_request": False, "annual_amount": None, "monthly_amount": None,
           "minimum_applied": False}
    if reasons:
        return {**out, "warnings": warnings}
    opens = [(max(sep, reaching_age(birth, r[3])), i) for i, r in enumerate(holding)]
    elig, first = min(opens)  # ties: the first route of the table
    route = holding[first]
    start = req if req is not None and req >= elig else None
    # rules §5 and §7: every start asked for before as_of, premature or not
    if req is not None and req < as_of:
        warnings.insert(1 if span else 0, "start_before_determination")
    if sep >= reaching_age(birth, route[3]):
        warnings.append("retirement_annuity_may_apply")
    exact, _, minimum_applied = reference_amount(p)
    monthly = round_half_up(exact / 12)
    act_3_2013 = date(2013, 6, 30)  # rules §7: the later law, where it touches this case
    if sep > act_3_2013:
        warnings.append("act_3_2013_accruals_frozen")
    if elig > act_3_2013:
        warnings.append("act_3_2013_ages_may_apply")
    if monthly < 500:
        warnings.append("act_3_2013_minimum_may_apply")
    return {**out,
            "status": "eligible" if elig <= as_of else "not_yet_eligible",
            "eligibility_date": elig.isoformat(), "route": route[0],
            "routes_met": [r[0] for r in holding],
            "start_date": None if start is None else start.isoformat(),
            "premature_request": req is not None and req < elig,
            "annual_amount": f"{round_half_up(exact):.2f}",
            "monthly_amount": f"{monthly:.2f}",
            "minimum_applied": minimum_applied, "warnings": warnings}


# ---- random valid participants -----------------------------------------------

def _day(rng: random.Random, lo: date, hi: date) -> date:
    return lo + timedelta(days=rng.randint(0, (hi - lo).days))


def _years_text(units: int, rng: random.Random) -> str:
    text = f"{units // UNITS}.{units % UNITS:04d}"
    return text.rstrip("0").rstrip(".") if rng.random() < 0.5 else text


def make_participant(rng: random.Random) -> dict:
    """A valid participant (rules §1), with the cut-off dates and the service
    thresholds of the article drawn often."""
    birth = _day(rng, date(1900, 1, 1), date(1984, 12, 31))
    cutoffs = [d for d in (date(1960, 6, 30), date(1990, 4, 1), date(1990, 4, 2),
                           date(1999, 12, 31), date(2000, 1, 1)) if d >= birth]
    if cutoffs and rng.random() < 0.2:
        entry = rng.choice(cutoffs)
    else:
        entry = _day(rng, birth, min(reaching_age(birth, 60), date(2004, 12, 31)))
    sep = None if rng.random() < 0.1 else _day(rng, entry, entry + timedelta(days=45 * 366))
    end = sep or AS_OF
    # service up to the completed years of age at `end`, so it is always valid
    most = math.floor(exact_years(birth, end)) * UNITS
    near = [u for u in (10 * UNITS - 1, 10 * UNITS, 20 * UNITS, 20 * UNITS + 1,
                        25 * UNITS - 1, 25 * UNITS) if u <= most]
    units = rng.choice(near) if near and rng.random() < 0.3 else rng.randint(0, min(most,
                                                                                   45 * UNITS))
    cents = rng.choice([rng.randint(1, 100_000_00), rng.randint(1_000_00, 200_000_00)])
    p = {
        "birth_date": birth.isoformat(),
        "entry_date": entry.isoformat(),
        "separation_date": None if sep is None else sep.isoformat(),
        "creditable_service_years": _years_text(units, rng),
        "average_compensation": f"{cents // 100}.{cents % 100:02d}",
        "group": rng.choice(["general", "general", "police", "firefighter"]),
        "refund_requested": rng.choice(["false"] * 6 + ["true"]),
        # declared true (possible only with an entry by 1960-06-30), declared
        # false, or empty (derived from the entry date, rules §6)
        "deferred_right_1960": rng.choice(
            (["true"] if entry <= date(1960, 6, 30) else []) + ["false", None, None]),
        "requested_start_date": (None if rng.random() < 0.6
                                 else _day(rng, date(1960, 1, 1), date(2070, 1, 1)).isoformat()),
    }
    return p


participants = st.randoms(use_true_random=False).map(make_participant)


def determination(p: dict) -> dict:
    return diferida.evaluate({k: v for k, v in p.items() if v is not None},
                             as_of=AS_OF).to_dict()


# ---- properties ----------------------------------------------------------------

@PROPERTY
@given(participants)
@pytest.mark.slow
def test_determination_matches_the_reference_written_from_the_spec(p):
    got = determination(p)
    expected = reference(p)
    assert {k: got[k] for k in expected} == expected


@PROPERTY
@given(participants)
@pytest.mark.slow
def test_amount_equals_the_exact_fraction_rounded_once_half_up(p):
    d = determination(p)
    exact, formula, minimum_applied = reference_amount(p)
    if d["status"] == "not_entitled":
        assert d["annual_amount"] is None and d["monthly_amount"] is None
        return
    assert Decimal(d["annual_amount"]) == round_half_up(exact)
    assert Decimal(d["monthly_amount"]) == round_half_up(exact / 12)
    assert d["minimum_applied"] is minimum_applied
    assert Decimal(d["formula"]["formula_amount"]) == round_half_up(formula)


@PROPERTY
@given(participants, st.integers(0, 20 * UNITS))
@pytest.mark.slow
def test_more_service_never_lowers_the_amount(p, extra):
    end = as_date(p["separation_date"]) or AS_OF
    units = int(Fraction(p["creditable_service_years"]) * UNITS)
    more = min(units + extra, math.floor(exact_years(as_date(p["birth_date"]), end) * UNITS))
    assume(more > units)
    q = {**p, "creditable_service_years": _years_text(more, random.Random(more))}
    a, b = determination(p), determination(q)
    assert a["regime"] == b["regime"]
    if a["annual_amount"] is not None:
        assert b["annual_amount"] is not None, "more service never loses an entitlement"
        assert Decimal(b["annual_amount"]) >= Decimal(a["annual_amount"])
        assert Decimal(b["monthly_amount"]) >= Decimal(a["monthly_amount"])


@PROPERTY
@given(participants, st.integers(1, 40 * 366))
@pytest.mark.slow
def test_a_later_birth_date_never_makes_eligibility_earlier(p, days):
    birth = as_date(p["birth_date"])
    later = min(birth + timedelta(days=days), as_date(p["entry_date"]))
    assume(later > birth)
    end = as_date(p["separation_date"]) or AS_OF
    assume(Fraction(p["creditable_service_years"]) <= exact_years(later, end))
    a, b = determination(p), determination({**p, "birth_date": later.isoformat()})
    assert a["status"] == "not_entitled" or b["status"] != "not_entitled"
    if a["eligibility_date"] is not None and b["eligibility_date"] is not None:
        assert b["eligibility_date"] >= a["eligibility_date"]


@PROPERTY
@given(participants)
@pytest.mark.slow
def test_a_refund_is_never_entitled(p):
    d = determination({**p, "refund_requested": "true"})
    assert d["status"] == "not_entitled"
    assert "refund_requested" in d["reasons"]
    assert d["annual_amount"] is None and d["eligibility_date"] is None


@settings(max_examples=examples(300), deadline=None)
@given(st.dates(date(1800, 1, 1), date(2200, 12, 31)), st.integers(0, 120))
def test_date_of_reaching_an_age_matches_the_reference(birth, age):
    got = pl.select(date_reaching_age(pl.lit(birth, dtype=pl.Date), age)).item()
    assert got == reaching_age(birth, age)


@PROPERTY
@given(st.dates(date(1900, 1, 1), date(1985, 12, 31)), st.integers(0, 80 * 366))
@pytest.mark.slow
def test_service_equal_to_the_exact_age_is_accepted_and_a_ten_thousandth_more_is_not(
    birth, days
):
    sep = birth + timedelta(days=days)
    entry = birth
    age_units = math.floor(exact_years(birth, sep) * UNITS)  # service at most the age
    base = {"birth_date": birth.isoformat(), "entry_date": entry.isoformat(),
            "separation_date": sep.isoformat(), "average_compensation": "1000",
            "group": "general", "refund_requested": "false"}

    def codes(units: int) -> list[str]:
        try:
            diferida.evaluate({**base, "creditable_service_years": _years_text(
                units, random.Random(0))}, as_of=AS_OF)
        except diferida.InputError as exc:
            return [p.code for p in exc.problems]
        return []

    assert codes(age_units) == []
    assert codes(age_units + 1) == ["service_exceeds_age"]


# ---- one participant alone and inside a large table --------------------------

TABLE_ROWS = 20_000
FIELDS = ("participant_id", "birth_date", "entry_date", "separation_date",
          "creditable_service_years", "average_compensation", "group", "refund_requested",
          "deferred_right_1960", "requested_start_date")
BAD_VALUES = {"birth_date": "1970-02-30", "creditable_service_years": "-1",
              "average_compensation": "0", "group": "sheriff", "refund_requested": "",
              "entry_date": "2030-01-01"}


@pytest.fixture(scope="module")
def large_table():
    rng = random.Random(19)
    rows = []
    for i in range(TABLE_ROWS):
        p = make_participant(rng)
        if rng.random() < 0.03:  # some bad rows, to be rejected alone and in the table
            field = rng.choice(sorted(BAD_VALUES))
            p[field] = BAD_VALUES[field]
        rows.append({"participant_id": f"p{i}", **p})
    frame = pl.DataFrame(rows, schema={k: pl.String for k in FIELDS})
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    result.check_accounting()
    by_row: dict[int, list[tuple[str, str]]] = {}
    for row, field, code in result.rejected.select("row", "field", "code").iter_rows():
        by_row.setdefault(row, []).append((field, code))
    determined = {r["participant_id"]: r for r in result.determinations.iter_rows(named=True)}
    return rows, determined, by_row


def _frame_row_as_dict(r: dict) -> dict:
    split = lambda t: [c for c in t.split(";") if c]  # noqa: E731
    iso = lambda v: None if v is None else v.isoformat()  # noqa: E731
    money = lambda v: None if v is None else f"{v:.2f}"  # noqa: E731
    return {"participant_id": r["participant_id"], "status": r["status"],
            "reasons": split(r["reasons"]), "regime": r["regime"],
            "eligibility_date": iso(r["eligibility_date"]), "route": r["route"],
            "routes_met": split(r["routes_met"]), "start_date": iso(r["start_date"]),
            "premature_request": r["premature_request"],
            "annual_amount": money(r["annual_amount"]),
            "monthly_amount": money(r["monthly_amount"]),
            "minimum_applied": r["minimum_applied"], "warnings": split(r["warnings"]),
            "rules_version": r["rules_version"]}


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, TABLE_ROWS - 1))
@pytest.mark.slow
def test_a_participant_alone_gets_the_same_answer_as_inside_a_large_table(large_table, i):
    rows, determined, rejected = large_table
    p = {k: v for k, v in rows[i].items() if v is not None}
    try:
        alone = diferida.evaluate(p, as_of=AS_OF).to_dict()
    except diferida.InputError as exc:
        assert sorted((x.field, x.code) for x in exc.problems) == sorted(rejected[i])
        assert p["participant_id"] not in determined
        return
    assert i not in rejected
    in_table = _frame_row_as_dict(determined[p["participant_id"]])
    assert {k: alone[k] for k in in_table} == in_table


@pytest.mark.slow
def test_every_row_of_the_large_table_matches_the_reference(large_table):
    rows, determined, rejected = large_table
    checked = 0
    for i, p in enumerate(rows):
        if i in rejected:
            continue
        got = _frame_row_as_dict(determined[p["participant_id"]])
        expected = reference(p)
        assert {k: got[k] for k in expected} == expected, p
        checked += 1
    assert checked > TABLE_ROWS * 0.9


def test_typed_columns_give_the_same_answers_as_text(large_table):
    rows, determined, rejected = large_table
    valid = [p for i, p in enumerate(rows) if i not in rejected]
    text = pl.DataFrame(valid, schema={k: pl.String for k in FIELDS})
    typed = text.with_columns(
        *[pl.col(c).str.to_date("%Y-%m-%d") for c in
          ("birth_date", "entry_date", "separation_date", "requested_start_date")],
        pl.col("creditable_service_years").cast(pl.Decimal(12, 4)),
        pl.col("average_compensation").cast(pl.Decimal(14, 2)),
        pl.col("refund_requested") == "true",
        pl.col("deferred_right_1960") == "true",
    )
    result = diferida.evaluate_frame(typed, as_of=AS_OF)
    assert result.rejected.height == 0
    got = result.determinations.rows(named=True)
    assert len(got) == len(valid)
    for r in got:
        assert r == determined[r["participant_id"]]
