"""rules §8: every worked example, through the Python API, the command line
and a table, determined on 2026-11-29.

The expected values are written here by hand from rules §8 (and, for the
keys §8 does not state, from rules §2-§7), never computed with
the code under test.
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import resources

import polars as pl
import pytest

import diferida

from .conftest import AS_OF, cli_command

SCOPE = ("Nota de alcance", "scope", None)
DATA_CHECK = "Verificación de datos"
AGES, FROZEN, MINIMUM = ("act_3_2013_ages_may_apply", "act_3_2013_accruals_frozen",
                          "act_3_2013_minimum_may_apply")
COVERED_RULE = "Ley 305-1999, 3 L.P.R.A. § 786-1"


def _inputs(birth, entry, sep, service, comp, group="general", refund="false"):
    return {"birth_date": birth, "entry_date": entry, "separation_date": sep,
            "creditable_service_years": service, "average_compensation": comp,
            "group": group, "refund_requested": refund}


def _entitled(status, regime, elig, route, routes_met, annual, monthly, warnings=(),
              minimum_applied=False):
    return {"status": status, "reasons": [], "regime": regime, "eligibility_date": elig,
            "route": route, "routes_met": list(routes_met), "start_date": None,
            "premature_request": False, "annual_amount": annual, "monthly_amount": monthly,
            "minimum_applied": minimum_applied, "warnings": list(warnings)}


def _not_entitled(regime, reasons):
    return {"status": "not_entitled", "reasons": list(reasons), "regime": regime,
            "eligibility_date": None, "route": None, "routes_met": [], "start_date": None,
            "premature_request": False, "annual_amount": None, "monthly_amount": None,
            "minimum_applied": False, "warnings": []}


# (number, inputs, expected determination, findings that must appear, in order,
#  as (rule, condition, held))
EXAMPLES = [
    (1, _inputs("1970-05-10", "1988-07-01", "2010-06-30", "22", "30000.00"),
     # 30000 × (0.015×20 + 0.02×2) = 10,200.00; 58 on 2028-05-10, after as_of
     _entitled("not_yet_eligible", "pre1990", "2028-05-10", "19.1(a)", ["19.1(a)"],
               "10200.00", "850.00", [AGES]),
     [("Regla 19.1(a)", "service", True), ("Regla 19.1(a)", "age", False),
      ("Regla 19.1(b)", "service", False), ("Regla 19.1(a)", "eligibility", False)]),
    (2, _inputs("1965-03-15", "1985-01-15", "2012-12-31", "27.5", "42000.00"),
     # 42000 × (0.30 + 0.02×7.5) = 18,900.00; 55 on 2020-03-15
     _entitled("eligible", "pre1990", "2020-03-15", "19.1(b)", ["19.1(b)"],
               "18900.00", "1575.00", [AGES]),
     [("Regla 19.1(a)", "service", False), ("Regla 19.1(b)", "service", True),
      ("Regla 19.1(b)", "age", True), ("Regla 19.1(b)", "eligibility", True)]),
    (3, _inputs("1972-11-02", "1995-08-01", "2015-07-31", "12.25", "28500.00"),
     # 28500 × 0.015 × 12.25 = 5,236.875 -> 5,236.88; /12 = 436.40625 -> 436.41
     _entitled("not_yet_eligible", "new", "2037-11-02", "19.2", ["19.2"],
               "5236.88", "436.41", [FROZEN, AGES, MINIMUM]),
     [("Regla 19.1(a)", "route_applies", False), ("Regla 19.1(b)", "route_applies", False),
      ("Regla 19.2", "service", True), ("Regla 19.2", "age", False),
      ("Regla 19.2", "eligibility", False)]),
    (4, _inputs("1975-06-20", "1996-02-01", "2021-03-31", "25.1667", "36000.00", "police"),
     # 50 on 2025-06-20; 19.5(b): 36000 × 0.015 × 25.1667 = 13,590.018 -> 13,590.02;
     # /12 = 1,132.5015 -> 1,132.50. Entry to separation is 25 years and 2 months
     # = 25.1667 years as service is counted (rules §7): not shorter, no warning.
     _entitled("eligible", "new", "2025-06-20", "19.4(a)", ["19.2", "19.4(a)", "19.4(b)"],
               "13590.02", "1132.50", [FROZEN, AGES]),
     [("Regla 19.2", "service", True), ("Regla 19.2", "age", False),
      ("Regla 19.4(a)", "service", True), ("Regla 19.4(a)", "age", True),
      ("Regla 19.4(b)", "service", True), ("Regla 19.4(b)", "age", False),
      ("Regla 19.4(a)", "eligibility", True), ("Regla 19.4", "reading_19_4", None)]),
    (5, _inputs("1968-02-29", "1989-09-01", "2009-08-31", "20", "25000.00"),
     # born 29 February: 58 on 28 February 2026 (a common year)
     _entitled("eligible", "pre1990", "2026-02-28", "19.1(a)", ["19.1(a)"],
               "7500.00", "625.00", [AGES]),
     [("Regla 19.1(a)", "service", True), ("Regla 19.1(a)", "age", True),
      ("Regla 19.1(a)", "eligibility", True)]),
    (6, _inputs("1960-01-01", "1990-04-01", "2000-03-31", "10", "20000.00"),
     # entry on the cut-off day is pre-1990
     _entitled("eligible", "pre1990", "2018-01-01", "19.1(a)", ["19.1(a)"],
               "3000.00", "250.00", [AGES, MINIMUM]),
     [("Regla 19.2", "regime", None), ("Regla 19.1(a)", "service", True),
      ("Regla 19.1(a)", "eligibility", True)]),
    (7, _inputs("1960-01-01", "1990-04-02", "2000-04-01", "10", "20000.00"),
     _entitled("eligible", "new", "2025-01-01", "19.2", ["19.2"], "3000.00", "250.00",
               [AGES, MINIMUM]),
     [("Regla 19.2", "regime", None), ("Regla 19.1(a)", "route_applies", False),
      ("Regla 19.2", "service", True), ("Regla 19.2", "eligibility", True)]),
    (8, _inputs("1976-01-01", "1998-01-01", "2006-01-01", "8", "30000.00"),
     _not_entitled("new", ["insufficient_service"]),
     [("Regla 19.2", "service", False), ("Regla 19.2", "insufficient_service", False)]),
    (9, _inputs("1970-05-10", "1988-07-01", "2010-06-30", "22", "30000.00", refund="true"),
     _not_entitled("pre1990", ["refund_requested"]),
     [("Regla 19.1", "no_refund", False)]),
    (10, _inputs("1975-01-01", "2000-01-01", "2010-01-01", "10", "30000.00"),
     _not_entitled("new", ["not_covered"]),
     [(COVERED_RULE, "covered", False)]),
    (11, _inputs("1935-06-01", "1955-01-01", "1975-01-01", "12", "10000.00"),
     # deferred_right_1960 empty, entry before 1960-06-30: derived true (rules §6);
     # formula 10000 × 0.015 × 12 = 1,800.00 < 30% × 10000 = 3,000.00: the minimum
     _entitled("eligible", "pre1990", "1993-06-01", "19.1(a)", ["19.1(a)"],
               "3000.00", "250.00", [MINIMUM], minimum_applied=True),
     [("Regla 19.1(a)", "service", True), ("Regla 19.1(a)", "age", True),
      ("Regla 19.1(a)", "eligibility", True), ("Regla 19.5(a)", "amount", None),
      ("Regla 19.6", "minimum", True), ("Regla 19.6", "totals", None)]),
]
IDS = [f"example_{n}" for n, *_ in EXAMPLES]


def _is_subsequence(wanted: list, seen: list) -> bool:
    it = iter(seen)
    return all(any(w == s for s in it) for w in wanted)


def check_determination(d: dict, n: int, expected: dict, findings: list) -> None:
    assert set(d) >= {"participant_id", "status", "reasons", "regime", "eligibility_date",
                      "route", "routes_met", "start_date", "premature_request",
                      "annual_amount", "monthly_amount", "minimum_applied", "warnings",
                      "rules_version", "rules_name", "rules_title", "as_of", "explanation"}
    assert d["rules_name"] == "article19"
    assert d["deferred_right_1960"] is (n == 11)
    assert d["deferred_right_1960_source"] == "derived"
    assert d["participant_id"] == f"spec-{n}"
    for key, value in expected.items():
        assert d[key] == value, f"{key}: {d[key]!r} != {value!r}"
    assert d["as_of"] == "2026-11-29"
    assert re.fullmatch(r"article19@[0-9a-f]{12}", d["rules_version"])
    assert d["rules_version"] == diferida.load_rules("article19").version

    explanation = d["explanation"]
    assert explanation, "an explanation is always given"
    for f in explanation:
        assert set(f) == {"rule", "condition", "values", "held", "text"}
        assert f["rule"] and f["condition"] and f["text"]
        assert f["held"] in (True, False, None)
        assert isinstance(f["values"], dict)
    seen = [(f["rule"], f["condition"], f["held"]) for f in explanation]
    assert _is_subsequence(findings, seen), seen
    assert seen[-1] == SCOPE
    by_condition = {f["condition"]: f for f in explanation}
    if "not_covered" in expected["reasons"]:
        # Article 19 does not apply: no regime of it is named (rules §2)
        assert "regime" not in by_condition
    else:
        assert by_condition["regime"]["values"]["regime"] == expected["regime"]
    if expected["status"] == "not_entitled":
        assert "eligibility" not in by_condition
        assert "totals" not in by_condition
    else:
        elig = by_condition["eligibility"]
        assert elig["values"]["eligibility_date"] == expected["eligibility_date"]
        assert elig["values"]["route"] == expected["route"]
        assert elig["rule"] == f"Regla {expected['route']}"
        assert by_condition["totals"]["values"] == {"annual": expected["annual_amount"],
                                                    "monthly": expected["monthly_amount"]}
    if "insufficient_service" in expected["reasons"]:
        assert by_condition["insufficient_service"]["values"] == {"needed": "10", "service": "8"}


@pytest.mark.parametrize("n, inputs, expected, findings", EXAMPLES, ids=IDS)
def test_worked_example_through_the_python_api(n, inputs, expected, findings):
    d = diferida.evaluate({**inputs, "participant_id": f"spec-{n}"}, as_of=AS_OF)
    check_determination(d.to_dict(), n, expected, findings)


CLI_OPTIONS = {
    "birth_date": "--birth-date", "entry_date": "--entry-date",
    "separation_date": "--separation-date", "creditable_service_years": "--service",
    "average_compensation": "--compensation", "group": "--group",
}


def cli_args(inputs: dict) -> list[str]:
    args = [a for k, opt in CLI_OPTIONS.items() if k in inputs for a in (opt, inputs[k])]
    args.append("--refund" if inputs["refund_requested"] == "true" else "--no-refund")
    return args


@pytest.mark.parametrize("n, inputs, expected, findings", EXAMPLES, ids=IDS)
def test_worked_example_through_the_command_line(n, inputs, expected, findings):
    proc = subprocess.run(
        [*cli_command(), "evaluate", "--id", f"spec-{n}", *cli_args(inputs),
         "--as-of", "2026-11-29", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    check_determination(json.loads(proc.stdout), n, expected, findings)


def test_worked_examples_in_one_table_match_spec_8():
    frame = pl.DataFrame(
        [{**inputs, "participant_id": f"spec-{n}"} for n, inputs, _, _ in EXAMPLES]
    )
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.rejected.height == 0
    out = result.determinations
    assert out["participant_id"].to_list() == [f"spec-{n}" for n, *_ in EXAMPLES]
    for row, (_, _, expected, _) in zip(out.iter_rows(named=True), EXAMPLES):
        assert row["status"] == expected["status"]
        assert row["reasons"] == ";".join(expected["reasons"])
        assert row["route"] == expected["route"]
        assert row["routes_met"] == ";".join(expected["routes_met"])
        assert (None if row["eligibility_date"] is None
                else row["eligibility_date"].isoformat()) == expected["eligibility_date"]
        for key in ("annual_amount", "monthly_amount"):
            assert (None if row[key] is None else str(row[key])) == expected[key]
        assert row["warnings"] == ";".join(expected["warnings"])


def test_packaged_examples_file_holds_the_spec_8_participants():
    text = (resources.files("diferida") / "data" / "spec_examples.csv").read_bytes()
    frame = pl.read_csv(text, infer_schema=False)
    assert frame["participant_id"].to_list() == [f"spec-{n}" for n, *_ in EXAMPLES]
    for row, (_, inputs, _, _) in zip(frame.iter_rows(named=True), EXAMPLES):
        assert {k: row[k] for k in inputs} == inputs
        # rules §6: left empty, derived from the entry date
        assert row["deferred_right_1960"] is None
