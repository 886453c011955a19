"""The comparison names the rule that explains the change: the route that
decided A's answer (or B's, when A had none). Its finding says why that
route no longer decides under B, or, when it is unchanged, which route
decides instead and why. A route that decides neither answer is never the
explanation, even when its own findings differ (19.4(a), which fails under
both readings for a firefighter with 12 years).

Through every place the sentence is said: the finding of `compare.person`
in Spanish and English, `evaluate --rules A --rules B` (text and `--json`),
the web calculator's "Comparar con", and `diferida compare`'s changed
members (table and HTML report); and over generated populations."""

from __future__ import annotations

import json
import warnings
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from bench.generate import population
from click.testing import CliRunner

import diferida
from diferida.cli import main
from diferida.compare import compare_file, table_paths, why
from diferida.compare import engine as cmp
from diferida.compare.person import compare_person
from diferida.core import run
from diferida.explain import cite
from diferida.rules import load_rules

AS_OF = date(2026, 12, 1)
ARTICLE19, STRICT, AGE67 = "article19", "article19-strict-19_4", "reform-19_2-age-67"

# a firefighter, new participant (entry after 1990-04-01, before 2000), 12
# years: 19.4(b) at 58 as written, 19.2 at 65 under the strict reading; 19.4(a)
# (25 years) fails under both
FIREFIGHTER = {"participant_id": "ff-12", "birth_date": "1970-03-10",
               "entry_date": "1995-02-01", "separation_date": "2007-01-31",
               "creditable_service_years": "12", "average_compensation": "30000.00",
               "group": "firefighter", "refund_requested": "false"}
# a police officer, new participant, 27 years: 19.4(a) at 50 as written
POLICE_27 = {"participant_id": "pol-27", "birth_date": "1970-01-15",
             "entry_date": "1992-01-01", "separation_date": "2019-06-30",
             "creditable_service_years": "27", "average_compensation": "40000.00",
             "group": "police", "refund_requested": "false"}
# a firefighter, new participant, 12 years, separated at 60: 19.4(b) opens on
# the separation day as written
FIREFIGHTER_60 = {"participant_id": "ff-60", "birth_date": "1950-01-01",
                  "entry_date": "1991-01-01", "separation_date": "2010-06-30",
                  "creditable_service_years": "12", "average_compensation": "30000.00",
                  "group": "firefighter", "refund_requested": "false"}
# a police officer, pre-1990 participant, 15 years: 19.1(a) and 19.4(b) both
# open on the 58th birthday (a tie: 19.1(a), first in the table, decides)
POLICE_TIE = {"participant_id": "pol-tie", "birth_date": "1960-01-01",
              "entry_date": "1985-01-01", "separation_date": "1999-12-31",
              "creditable_service_years": "15", "average_compensation": "30000.00",
              "group": "police", "refund_requested": "false"}

# B's that change a route that decides neither answer as well as one that does
REFORMS = {
    # 19.4(a) opens at 60; 19.2 (deciding neither answer for POLICE_27) at 67
    "later-19_4a": '[route_overrides."19.2"]\nage = 67\n'
                   '[route_overrides."19.4(a)"]\nage = 60\n',
    # 19.2 at 60; 19.1(a) (deciding neither answer for a new participant)
    # only for general employees
    "tie-19_2": '[route_overrides."19.1(a)"]\ngroups = ["general"]\n'
                '[route_overrides."19.2"]\nage = 60\n',
    # 19.1(a) at 60: its tie with 19.4(b) is broken
    "later-19_1a": '[route_overrides."19.1(a)"]\nage = 60\n',
}


def reform(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(f'base = "article19"\n[meta]\nname = "{name}"\n{REFORMS[name]}')
    return path


@pytest.fixture(scope="module")
def reforms(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("reforms")
    return {name: reform(tmp, name) for name in REFORMS}


def rules_of(name: str, reforms: dict[str, Path]):
    return load_rules(reforms.get(name, name))


def person_comparison(person: dict, a: str, b: str, reforms: dict, lang: str):
    ra, rb = rules_of(a, reforms), rules_of(b, reforms)
    da = diferida.evaluate(person, as_of=AS_OF, rules=ra, lang=lang)
    db = diferida.evaluate(person, as_of=AS_OF, rules=rb, lang=lang)
    return compare_person(da, db)


def names(route: str, lang: str) -> str:
    return cite(load_rules().route(route).citation, lang)


OTHER_ROUTES = ("19.1(a)", "19.1(b)", "19.2", "19.4(a)", "19.4(b)")

# (person, A, B, routes A -> B, the route that explains, its condition, the
# fields that differ)
CASES = {
    "19.4(b)->19.2": (FIREFIGHTER, ARTICLE19, STRICT, ("19.4(b)", "19.2"), "19.4(b)",
                      "route_applies", ("route", "eligibility_date")),
    # (the condition named is B's: 19.4(b) applies to a new participant under
    # B's reading, which A's does not open to them)
    "19.2->19.4(b)": (FIREFIGHTER, STRICT, ARTICLE19, ("19.2", "19.4(b)"), "19.4(b)",
                      "route_applies", ("route", "eligibility_date")),
    "19.4(a)->19.4(b)": (POLICE_27, ARTICLE19, "later-19_4a", ("19.4(a)", "19.4(b)"),
                         "19.4(a)", "age", ("status", "route", "eligibility_date")),
    # a tie under B: 19.2 now opens the day 19.4(b) does, and decides (first in
    # the table); 19.4(b) is unchanged, so 19.2 explains: it decides instead
    "tie under B": (FIREFIGHTER_60, ARTICLE19, "tie-19_2", ("19.4(b)", "19.2"), "19.2",
                    "age", ("route",)),
    # a tie under A broken under B: 19.1(a) decided A and opens later under B;
    # 19.4(b), which tied with it, decides the same day
    "tie under A": (POLICE_TIE, ARTICLE19, "later-19_1a", ("19.1(a)", "19.4(b)"), "19.1(a)",
                    "age", ("route",)),
}


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_finding_is_about_the_route_that_decides(case, lang, reforms):
    person, a, b, (route_a, route_b), explains, condition, fields = CASES[case]
    c = person_comparison(person, a, b, reforms, lang)
    assert (c.a.route, c.b.route) == (route_a, route_b)
    assert c.fields == fields
    assert c.route == explains
    assert c.finding.condition == condition
    # each side's sentence names the explaining route, and no route that
    # decides neither answer
    for f in (c.under_a, c.under_b):
        assert f is not None and names(explains, lang) in f.text
        for other in OTHER_ROUTES:
            if other not in (route_a, route_b):
                assert names(other, lang) not in f.text, (case, f.text)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_firefighter_is_told_that_19_4b_no_longer_applies(lang):
    c = person_comparison(FIREFIGHTER, ARTICLE19, STRICT, {}, lang)
    # under A, the reading that opens 19.4(b) to a new participant (not its
    # service condition, which both readings hold alike)
    met = (("se aplica también a participantes nuevos", "por la lectura de estas reglas",
            "no se aplica a participantes nuevos") if lang == "es" else
           ("applies to new participants too", "by the reading of these rules",
            "does not apply to new participants"))
    assert met[0] in c.under_a.text and met[1] in c.under_a.text
    assert (c.under_a.condition, c.under_a.held) == ("route_applies", True)
    assert met[2] in c.under_b.text and STRICT in c.under_b.text
    for f in (c.under_a, c.under_b):
        assert "25" not in f.text and "19.4(a)" not in f.text
    assert c.finding.values["route"] == "19.4(b)"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_spec_example_4_is_still_explained_by_19_4a(lang):
    """The police officer of rules §8 example 4: 19.4(a) decided A and does not
    apply under the strict reading (as before)."""
    police = {"birth_date": "1975-06-20", "entry_date": "1996-02-01",
              "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
              "average_compensation": "36000.00", "group": "police",
              "refund_requested": "false"}
    c = person_comparison(police, ARTICLE19, STRICT, {}, lang)
    assert c.route == "19.4(a)" and c.finding.condition == "route_applies"
    assert "19.4(a)" in c.under_a.text and "3 L.P.R.A. § 766" in c.under_b.text
    assert c.under_a.held is True and c.under_b.held is False


def test_the_definition_skips_a_route_that_decides_neither_answer():
    """`why.explaining_finding` itself, on the explanations: the first route
    whose findings differ (19.4(a)) is passed over for the deciding one."""
    ra, rb = load_rules(ARTICLE19), load_rules(STRICT)
    da = diferida.evaluate(FIREFIGHTER, as_of=AS_OF, rules=ra, lang="en")
    db = diferida.evaluate(FIREFIGHTER, as_of=AS_OF, rules=rb, lang="en")
    subjects = [why.subject(f) for f in da.explanation]
    differing = [s for s in subjects if s[0] == "route"
                 and [f for f in da.explanation if why.subject(f) == s]
                 != [f for f in db.explanation if why.subject(f) == s]]
    assert differing[0] == ("route", "19.4(a)")  # differs first, decides neither
    fa, fb = why.explaining_finding(list(da.explanation), list(db.explanation))
    assert fa.values["route"] == fb.values["route"] == "19.4(b)"
    assert why.deciding_route(list(da.explanation)) == "19.4(b)"
    assert why.deciding_route(list(db.explanation)) == "19.2"


# ---- evaluate --rules A --rules B -------------------------------------------------------

OPTIONS = {"birth_date": "--birth-date", "entry_date": "--entry-date",
           "separation_date": "--separation-date", "creditable_service_years": "--service",
           "average_compensation": "--compensation", "group": "--group"}


def evaluate_two(person: dict, a: str, b: str, lang: str, *extra: str) -> str:
    args = ["evaluate", "--as-of", AS_OF.isoformat(), "--lang", lang, "--rules", a,
            "--rules", b, "--no-refund", *extra]
    for name, option in OPTIONS.items():
        args += [option, person[name]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_evaluate_json_names_the_deciding_route(case, lang, reforms):
    person, a, b, _, explains, condition, fields = CASES[case]
    out = json.loads(evaluate_two(person, str(reforms.get(a, a)), str(reforms.get(b, b)),
                                  lang, "--json"))
    assert tuple(out["differences"]) == fields
    why_ = out["explaining_finding"]
    assert why_["condition"] == condition
    for side in ("under_a", "under_b"):
        assert names(explains, lang) in why_[side]
    (person_, *_) = CASES[case]
    c = person_comparison(person_, a, b, reforms, lang)
    assert why_ == {"rule": c.finding.rule, "condition": c.finding.condition,
                    "under_a": c.under_a.text, "under_b": c.under_b.text}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_evaluate_text_quotes_19_4b_not_19_4a(lang):
    out = evaluate_two(FIREFIGHTER, ARTICLE19, STRICT, lang)
    tail = out.split("=" * 78)[-1]
    assert names("19.4(b)", lang) in tail
    assert "19.4(a)" not in tail


# ---- the web calculator's "Comparar con" ------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-why") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("a,b", [(ARTICLE19, STRICT), (STRICT, ARTICLE19)])
def test_the_web_comparison_names_the_deciding_route(client, lang, a, b):
    from tests.test_web_compare import section

    form = {k: v for k, v in FIREFIGHTER.items() if k != "participant_id"}
    r = client.post("/calcular", data={**form, "as_of": AS_OF.isoformat(), "lang": lang,
                                       "rules": a, "compare": b}, follow_redirects=True)
    assert r.status_code == 200
    why_ = section(r.text, "comparison-why")
    assert names("19.4(b)", lang) in why_ and "19.4(a)" not in why_
    c = person_comparison(FIREFIGHTER, a, b, {}, lang)
    assert section(r.text, "comparison-why-a") == c.under_a.text
    assert section(r.text, "comparison-why-b") == c.under_b.text


# ---- diferida compare: the changed members' table and the HTML report -------------------


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_compare_outputs_name_the_deciding_route(case, lang, reforms, tmp_path):
    person, a, b, (route_a, route_b), explains, condition, _ = CASES[case]
    members = tmp_path / "members.csv"
    pl.DataFrame([person]).write_csv(members)
    out, html = tmp_path / "c.csv", tmp_path / "c.html"
    s = compare_file(members, out, [reforms.get(a, a), reforms.get(b, b)], html=html,
                     as_of=AS_OF, lang=lang)
    assert s.changed == 1
    row = pl.read_csv(table_paths(out)["changed_members"], infer_schema=False).row(
        0, named=True)
    assert (row["route_a"], row["route_b"]) == (route_a, route_b)
    assert row["finding_condition"] == condition
    c = person_comparison(person, a, b, reforms, lang)
    assert (row["finding_rule"], row["finding_under_a"], row["finding_under_b"]) == (
        c.finding.rule, c.under_a.text, c.under_b.text)
    for side in ("finding_under_a", "finding_under_b"):
        assert names(explains, lang) in row[side]
        assert citations_named(row[side], lang) <= {route_a, route_b}
    page = html.read_text("utf-8")
    import html as html_
    assert html_.escape(c.under_a.text) in page and html_.escape(c.under_b.text) in page


# ---- over generated populations ---------------------------------------------------------


def changed_members(frame: pl.DataFrame, ra, rb, as_of: date):
    fields = frame.select([c for c in frame.columns if c in cmp.FIELD_NAMES])
    a, _, _ = run(fields, as_of=as_of, rules=ra)
    b, _, _ = run(fields, as_of=as_of, rules=rb)
    fields = fields[a["_row"]]
    mask = pl.Series([False] * a.height)
    for c in ("status", "regime", "route", "eligibility_date", "start_date", "annual_cents",
              "monthly_cents", "minimum_applied", "reasons"):
        mask = mask | a[c].ne_missing(b[c])
    return fields.filter(mask), a.filter(mask), b.filter(mask)


def citations_named(text: str | None, lang: str) -> set[str]:
    return {r for r in OTHER_ROUTES if names(r, lang) in (text or "")}


@pytest.mark.parametrize("b", [STRICT, AGE67, "later-19_4a", "tie-19_2", "later-19_1a"])
@pytest.mark.parametrize("a_first", [True, False], ids=["A-B", "B-A"])
@pytest.mark.slow
def test_no_changed_members_why_cites_a_route_that_decides_neither(b, a_first, reforms):
    """In a generated population (bench.generate), every changed member whose
    answer a route decides on either side is explained by that route (or by a
    finding that names no other route), column-wise and member by member."""
    ra, rb = load_rules(ARTICLE19), rules_of(b, reforms)
    if not a_first:
        ra, rb = rb, ra
    frame = population(4000, seed=7)
    for as_of in (date(2015, 6, 30), AS_OF):
        fields, a, b_ = changed_members(frame, ra, rb, as_of)
        assert fields.height > 0
        for lang in ("es", "en"):
            found = cmp.explain_changes(fields, ra, rb, as_of, lang)
            assert found.equals(cmp.explain_changes(fields, ra, rb, as_of, lang,
                                                    by_route=False))
            assert found["finding_rule"].null_count() == 0  # every change is explained
            for i, row in enumerate(found.iter_rows(named=True)):
                deciding = {a["route"][i], b_["route"][i]} - {None}
                named = (citations_named(row["finding_under_a"], lang)
                         | citations_named(row["finding_under_b"], lang))
                if deciding:
                    assert named <= deciding, (i, deciding, row)
                else:  # entitled under neither: what is missing, not a route
                    assert row["finding_condition"] not in why.ROUTE_CONDITIONS, row


def test_a_member_entitled_under_neither_side_is_told_what_is_missing(tmp_path):
    """Not separated, 12 years; B asks 15 for 19.2: A's reasons are the
    separation, B's the separation and the service. No route decides either
    answer: the finding is the missing service, not a route's."""
    path = tmp_path / "service.toml"
    path.write_text('base = "article19"\n[meta]\nname = "service"\n'
                    '[route_overrides."19.2"]\nmin_service = "15"\n')
    person = {**FIREFIGHTER, "group": "general", "separation_date": ""}
    c = compare_person(diferida.evaluate(person, as_of=AS_OF, lang="en"),
                       diferida.evaluate(person, as_of=AS_OF, rules=load_rules(path),
                                         lang="en"))
    assert c.fields == ("reasons",)
    assert c.finding.condition == "insufficient_service" and c.under_a is None
    assert "15 years" in c.under_b.text
