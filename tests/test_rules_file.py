"""The rules file: every number of Article 19 lives there with its citation;
the strict variant changes only 19.4; a bad file is refused with a RulesError
that names the problem; a custom file can be used by path."""

from __future__ import annotations

import json
import subprocess
import tomllib
from datetime import date
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest

import diferida
from diferida.rules import RulesError, rules_from_resolved

from .conftest import AS_OF, cli_command, participant

STRICT = "article19-strict-19_4"


def builtin_text(name: str) -> str:
    return (resources.files("diferida") / "rules" / f"{name}.toml").read_text("utf-8")


def test_builtin_rules_are_listed():
    assert {"article19", STRICT} <= set(diferida.builtin_names())


def test_every_route_amount_and_minimum_of_the_file_has_a_citation():
    raw = tomllib.loads(builtin_text("article19"))
    for route in raw["routes"]:
        assert route["citation"] == f"Regla {route['id']}"
    assert raw["amount"]["pre1990"]["citation"] == "Regla 19.5(a)"
    assert raw["amount"]["new"]["citation"] == "Regla 19.5(b)"
    assert raw["minimum"]["citation"] == "Regla 19.6"
    for key, value in raw["regime"].items():
        if key != "laws":  # the names of the laws themselves
            assert value["citation"].strip(), key
    assert raw["decisions"]["route_19_4_regimes"]["citation"] == "Regla 19.4"
    for law in raw["later_laws"].values():
        assert law["citation"].strip()


def test_rules_file_holds_the_numbers_of_spec_4_and_6():
    r = diferida.load_rules("article19")
    assert [(x.id, x.regimes, x.groups, x.age, x.min_service, x.max_service)
            for x in r.routes] == [
        ("19.1(a)", ("pre1990",), ("general", "police", "firefighter"), 58,
         Decimal(10), Decimal(25)),
        ("19.1(b)", ("pre1990",), ("general", "police", "firefighter"), 55, Decimal(25), None),
        ("19.2", ("new",), ("general", "police", "firefighter"), 65, Decimal(10), None),
        ("19.4(a)", ("pre1990", "new"), ("police", "firefighter"), 50, Decimal(25), None),
        ("19.4(b)", ("pre1990", "new"), ("police", "firefighter"), 58, Decimal(10), None),
    ]
    assert [(b.threshold, b.rate) for b in r.amount["pre1990"].brackets] == [
        (Decimal(0), Decimal("0.015")), (Decimal(20), Decimal("0.02"))]
    assert [(b.threshold, b.rate) for b in r.amount["new"].brackets] == [
        (Decimal(0), Decimal("0.015"))]
    assert r.minimum_rate == Decimal("0.30")
    assert r.new_participant_after == date(1990, 4, 1)
    assert r.not_covered_from == date(2000, 1, 1)
    assert r.deferred_right_cutoff == date(1960, 6, 30)


def test_strict_variant_differs_only_in_the_regimes_of_19_4():
    base = diferida.load_rules("article19").resolved
    strict = diferida.load_rules(STRICT).resolved
    # the reading (its routes' regimes, where that limit comes from) and its name
    assert {k for k in base if base[k] != strict[k]} == {"meta", "routes", "decisions"}
    changed = [(b["id"], {k for k in set(b) | set(s) if b.get(k) != s.get(k)})
               for b, s in zip(base["routes"], strict["routes"]) if b != s]
    assert changed == [("19.4(a)", {"regimes", "regimes_source"}),
                       ("19.4(b)", {"regimes", "regimes_source"})]
    b19_4 = base["decisions"]["route_19_4_regimes"]
    s19_4 = strict["decisions"]["route_19_4_regimes"]
    assert {k for k in b19_4 if b19_4[k] != s19_4[k]} == {"reading", "other_reading"}
    assert [r["regimes"] for r in strict["routes"][3:]] == [["pre1990"], ["pre1990"]]
    assert len(base["routes"]) == len(strict["routes"])


def test_version_names_the_rules_and_changes_with_any_number(tmp_path):
    same = tmp_path / "copy.toml"
    same.write_text(builtin_text("article19"))
    changed = tmp_path / "changed.toml"
    changed.write_text(builtin_text("article19").replace('rate = "0.30"', 'rate = "0.31"'))
    v = diferida.load_rules("article19").version
    assert v.startswith("article19@")
    assert diferida.load_rules(same).version == v  # same content, same version
    assert diferida.load_rules(changed).version != v


def test_rules_rebuilt_from_stored_content_give_the_same_determination():
    r = diferida.load_rules("article19")
    again = rules_from_resolved(json.loads(json.dumps(r.resolved)))
    assert again.version == r.version
    a = diferida.evaluate(participant(), as_of=AS_OF, rules=r)
    b = diferida.evaluate(participant(), as_of=AS_OF, rules=again)
    assert a.to_dict() == b.to_dict()


VALID_ROUTE = ('[[routes]]\nid = "19.2"\ncitation = "Regla 19.2"\nregimes = ["new"]\n'
               'groups = ["general"]\nage = 65\nmin_service = "10"\n')


@pytest.mark.parametrize(
    "text, problem",
    [
        ("this is not = = toml", "not valid TOML"),
        ('base = "article18"\n', "unknown base rules 'article18'"),
        ('base = "article19"\n[route_overrides."19.9"]\nage = 60\n', "unknown route '19.9'"),
        ('base = "article19"\n[route_overrides."19.2"]\nage = "sixty"\n', "age"),
        ('base = "article19"\n[route_overrides."19.2"]\nregimes = ["old"]\n', "regimes"),
        ('base = "article19"\n[route_overrides."19.2"]\ngroups = ["army"]\n', "groups"),
        ('base = "article19"\n[route_overrides."19.2"]\nmin_service = 9.5\n',
         "write numbers as strings"),
        ('base = "article19"\n[route_overrides."19.2"]\nmin_service = "-1"\n', "negative"),
        ('base = "article19"\n[minimum]\nrate = "thirty"\n', "not a number"),
        ('base = "article19"\n[amount.pre1990]\ncitation = "Regla 19.5(a)"\n'
         'brackets = [{ threshold = "20", rate = "0.02" },'
         ' { threshold = "0", rate = "0.015" }]\n', "threshold 0"),
        ('base = "article19"\n[amount.pre1990]\ncitation = "Regla 19.5(a)"\n'
         'brackets = [{ threshold = "0", rate = "0.015" },'
         ' { threshold = "0", rate = "0.02" }]\n', "thresholds must increase"),
        ('base = "article19"\n[regime.new_participant_after]\nvalue = "1990-04-31"\n'
         'citation = "Regla 19.2"\n',
         "new_participant_after"),
        (builtin_text("article19").replace('citation = "Regla 19.1(b)"\n', ""),
         "missing 'citation'"),
        (builtin_text("article19").replace('[minimum]', '[minimum_x]'), "missing 'minimum'"),
        ('[meta]\nname = "x"\n' + VALID_ROUTE, "missing 'regime'"),
    ],
    ids=["not-toml", "unknown-base", "unknown-override", "age-text", "bad-regime", "bad-group",
         "float-number", "negative", "rate-text", "first-threshold", "thresholds-order",
         "bad-date", "no-citation", "no-minimum", "no-regime"],
)
def test_invalid_rules_file_is_refused_naming_the_problem(tmp_path, text, problem):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RulesError) as err:
        diferida.load_rules(path)
    assert problem in str(err.value)


def test_missing_rules_file_is_refused():
    with pytest.raises(RulesError, match="not found"):
        diferida.load_rules(Path("/nonexistent/rules.toml"))


def test_unknown_rules_name_is_refused():
    with pytest.raises(RulesError, match="article99"):
        diferida.load_rules("article99")


@pytest.mark.parametrize("where", ["min_service", "threshold"])
def test_service_threshold_finer_than_the_service_precision_is_refused(tmp_path, where):
    # Service is read with at most 4 decimal places (rules §1); a threshold of
    # 10.00001 years cannot be compared exactly and is a bad rules file.
    path = tmp_path / "fine.toml"
    if where == "min_service":
        path.write_text('base = "article19"\n[route_overrides."19.2"]\nmin_service = "10.00001"\n')
    else:
        path.write_text('base = "article19"\n[amount.pre1990]\n'
                        'citation = "Regla 19.5(a)"\nbrackets = ['
                        '{ threshold = "0", rate = "0.015" },'
                        '{ threshold = "20.00001", rate = "0.02" }]\n')
    with pytest.raises(RulesError) as err:
        rules = diferida.load_rules(path)
        diferida.evaluate(participant(), as_of=AS_OF, rules=rules)
    assert where in str(err.value)


# ---- a custom rules file by path -------------------------------------------

EXAMPLE_3 = participant(birth_date="1972-11-02", entry_date="1995-08-01",
                        separation_date="2015-07-31", creditable_service_years="12.25",
                        average_compensation="28500.00")


def test_custom_rules_variant_by_path_in_python(tmp_path):
    path = tmp_path / "age60.toml"
    path.write_text('base = "article19"\n[meta]\nname = "age60"\n'
                    '[route_overrides."19.2"]\nage = 60\n')
    d = diferida.evaluate(EXAMPLE_3, as_of=AS_OF, rules=path)
    assert d.eligibility_date == date(2032, 11, 2)
    assert d.rules_version.startswith("age60@")


def test_custom_standalone_rules_file_by_path_on_the_command_line(tmp_path):
    text = builtin_text("article19").replace('name = "article19"', 'name = "custom"')
    text = text.replace('rate = "0.015" },\n]', 'rate = "0.02" },\n]')  # 19.5(b) at 2%
    assert text.count('rate = "0.02"') == 2
    path = tmp_path / "custom.toml"
    path.write_text(text)
    proc = subprocess.run(
        [*cli_command(), "evaluate", "--birth-date", "1972-11-02", "--entry-date", "1995-08-01",
         "--separation-date", "2015-07-31", "--service", "12.25", "--compensation", "28500.00",
         "--no-refund", "--as-of", "2026-11-29", "--rules", str(path), "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    # 28500 × 0.02 × 12.25 = 6,982.50; /12 = 581.875 -> 581.88
    assert (d["annual_amount"], d["monthly_amount"]) == ("6982.50", "581.88")
    assert d["rules_version"].startswith("custom@")


def test_invalid_rules_file_on_the_command_line_exits_2(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('base = "article19"\n[route_overrides."19.2"]\nregimes = ["old"]\n')
    proc = subprocess.run([*cli_command(), "evaluate", "--rules", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("--rules: ") and "regimes" in proc.stderr


@pytest.mark.parametrize("text", [
    'base = "article19"\n[amount.new]\ncitation = "Regla 19.5(b)"\n'
    'brackets = [{ threshold = "0", rate = "1.5" }]\n',
    'base = "article19"\n[minimum]\ncitation = "Regla 19.6"\nrate = "3"\n',
])
def test_a_rate_above_100_percent_of_compensation_is_refused(tmp_path, text):
    path = tmp_path / "rates.toml"
    path.write_text(text)
    with pytest.raises(RulesError, match="above 1"):
        diferida.load_rules(path)
