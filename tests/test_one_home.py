"""Each fact of the law has one home (docs/architecture.md, "Where a rule is
restated"): the places that restate a rule read it from the engine and the
rules file, and these tests hold each equal to the engine, for the shipped
rules and for a reform that changes the fact."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from diferida.rules import load_rules
from diferida.validation import asks_deferred_right, validate
from diferida.web.forms import FormState

RULES = load_rules("article19")
CUTOFF = RULES.deferred_right_cutoff  # 1960-06-30 in the shipped rules
ROW = {"participant_id": "P-1", "birth_date": "1900-01-01", "entry_date": None,
       "separation_date": "2000-06-30", "creditable_service_years": "10",
       "average_compensation": "30000", "group": "general", "refund_requested": "false",
       "deferred_right_1960": None, "requested_start_date": None}

REFORM = """base = "article19"

[meta]
name = "reform-one-home"
title = "Reforma de prueba (no es ley)"
description = "ILLUSTRATIVE, NOT LAW: another 19.6 cut-off and another 19.1(a) threshold."
illustrative = true

[regime.deferred_right_cutoff]
value = "1962-03-15"

[route_overrides."19.1(a)"]
min_service = "12"
"""


@pytest.fixture(scope="module")
def reform(tmp_path_factory) -> object:
    path = Path(tmp_path_factory.mktemp("reform")) / "reform-one-home.toml"
    path.write_text(REFORM, encoding="utf-8")
    return load_rules(path)


def _engine_derives(entry: date, rules) -> bool:
    """The engine's own answer: the derived `deferred_right_1960` of a row
    that leaves it empty."""
    frame = pl.DataFrame([{**ROW, "entry_date": entry.isoformat()}],
                         schema={k: pl.String for k in ROW})
    done = validate(frame, rules, date(2026, 1, 1))
    assert done.errors.is_empty(), done.errors
    return bool(done.typed["deferred_right_1960"][0])


def _form_asks(entry: date) -> bool:
    return FormState(lang="es", values={"entry_date": entry.isoformat()}).asks_1960


dates_near = st.integers(-800, 800).map(lambda d: CUTOFF + timedelta(days=d))


@given(entry=dates_near)
@example(entry=CUTOFF)
@example(entry=CUTOFF + timedelta(days=1))
@example(entry=CUTOFF - timedelta(days=1))
def test_the_form_asks_19_6_exactly_where_the_engine_derives_it(entry):
    engine = _engine_derives(entry, RULES)
    assert _form_asks(entry) == engine == asks_deferred_right(entry, RULES)


@pytest.mark.parametrize("days", [-1, 0, 1])
def test_a_reform_moving_the_cutoff_moves_the_engine_and_the_question(reform, days):
    entry = reform.deferred_right_cutoff + timedelta(days=days)
    assert _engine_derives(entry, reform) == asks_deferred_right(entry, reform) == (days <= 0)
    # between the two cut-offs the shipped rules and the reform answer differently
    assert asks_deferred_right(date(1961, 1, 1), reform)
    assert not asks_deferred_right(date(1961, 1, 1), RULES)


def test_the_question_is_not_asked_without_an_entry_date():
    assert not asks_deferred_right(None, RULES)
    assert not FormState(lang="es", values={}).asks_1960


# -- the routes: thresholds and the tie, as the explanation reads them --------

POLICE_NEW = {"birth_date": "1960-01-10", "entry_date": "1995-01-01",
              "separation_date": "2006-06-30", "creditable_service_years": "11",
              "average_compensation": "30000", "group": "police", "refund_requested": False}

REFORM_19_2 = """base = "article19"

[meta]
name = "reform-19_2-service-12"
title = "Reforma de prueba (no es ley)"
description = "ILLUSTRATIVE, NOT LAW: Regla 19.2 asks for 12 years of service."
illustrative = true

[route_overrides."19.2"]
min_service = "12"
"""


def _reading(d) -> dict:
    (found,) = [f for f in d.explanation if f.condition == "reading_19_4"]
    return found


def test_the_other_reading_of_19_4_uses_the_reforms_service_threshold(tmp_path):
    """Under a reform where Regla 19.2 asks for 12 years, a new police
    officer with 11 years does not meet 19.2 (the service finding says so,
    naming 12); the finding on the other reading of 19.4 must not then give
    a 19.2 date under that reading, as it did when it read the thresholds of
    the other rules file instead of the reform's."""
    from diferida.core import evaluate

    path = tmp_path / "reform-19_2-service-12.toml"
    path.write_text(REFORM_19_2, encoding="utf-8")
    shipped = evaluate(POLICE_NEW, rules="article19", lang="en", as_of=date(2026, 1, 1))
    reform = evaluate(POLICE_NEW, rules=path, lang="en", as_of=date(2026, 1, 1))
    assert _reading(shipped).values["other_route"] == "19.2"  # 11 ≥ 10
    (service,) = [f for f in reform.explanation
                  if f.condition == "service" and f.values["route"] == "19.2"]
    assert service.values["min_service"] == "12" and service.held is False
    assert "at least 12 years" in service.text
    found = _reading(reform)
    assert found.values["other_route"] is None and found.values["other_eligibility_date"] is None
    assert "19.2" not in found.text.split("Under the strict reading")[1]
    assert "there would be no deferred pension" in found.text


@given(service=st.sampled_from(["9.9999", "10", "11", "24.9999", "25", "30"]),
       group=st.sampled_from(["general", "police", "firefighter"]),
       entry=st.sampled_from(["1975-03-01", "1990-04-01", "1990-04-02", "1995-01-01"]),
       separated=st.sampled_from(["1999-12-31", "2008-01-10", "2030-05-05"]))
@example(service="10", group="police", entry="1975-03-01", separated="1999-12-31")  # a tie
def test_the_engine_and_earliest_route_pick_the_same_route(service, group, entry, separated):
    """The engine's columns and the scalar hit policy the explanation uses
    give the same route and date, ties included (19.1(a) and 19.4(b) open
    on the same birthday for a pre-1990 police officer with 10 to 25
    years)."""
    from diferida.article19 import earliest_route, route_key, service_holds
    from diferida.core import run
    from diferida.fields import SERVICE_UNITS

    frame = pl.DataFrame([{**ROW, "birth_date": "1950-01-10", "entry_date": entry,
                           "separation_date": separated, "creditable_service_years": service,
                           "group": group}], schema={k: pl.String for k in ROW})
    full, errors, rules = run(frame, as_of=date(2040, 1, 1), rules=RULES)
    assert errors.is_empty()
    row = full.row(0, named=True)
    found = earliest_route([(r, row[f"{route_key(r)}_opens"]) for r in rules.routes])
    if row["reasons"]:
        return  # not entitled: no route is named
    assert found == (row["eligibility_date"], rules.route(row["route"]))
    units = row["service_units"]
    assert units == int(float(service) * SERVICE_UNITS)
    for r in rules.routes:
        assert bool(row[f"{route_key(r)}_holds"]) == (
            bool(row[f"{route_key(r)}_applies"]) and service_holds(r, units))


# -- the API's and the commands' words: from the catalogs, the date from the rules


def test_the_api_names_the_19_6_date_of_the_rules_it_describes(reform):
    from diferida.i18n import fmt_date
    from diferida.service.schemas import ParticipantBody, _body_model

    shipped = ParticipantBody.model_json_schema()["properties"]["deferred_right_1960"]
    assert fmt_date(CUTOFF, "en") in shipped["description"]  # June 30, 1960
    moved = _body_model("ReformBody", case=False, rules=reform).model_json_schema()
    text = moved["properties"]["deferred_right_1960"]["description"]
    assert fmt_date(reform.deferred_right_cutoff, "en") in text  # March 15, 1962
    assert "1960" not in text.split("Absent")[0] and reform.name in text


def _catalog_texts() -> tuple[set[str], list[str]]:
    """The English [help] texts: whole ones, and the fixed start of each
    one filled in from the code or the rules."""
    from diferida.i18n import catalog

    def texts(node):
        if isinstance(node, dict):
            for v in node.values():
                yield from texts(v)
        else:
            yield node

    english = set(texts(catalog("en")["help"]))
    return {t for t in english if "{" not in t}, [t.split("{")[0] for t in english if "{" in t]


def _from_catalog(text: str) -> bool:
    """A text of the catalogs, or several of them joined (a field's own
    description, then its kind's)."""
    whole, starts = _catalog_texts()
    if text in whole or any(text.startswith(s) for s in starts):
        return True
    return any(text.startswith(w + " ") and _from_catalog(text[len(w) + 1:]) for w in whole) \
        or any(text.endswith(" " + w) and _from_catalog(text[:-len(w) - 1])
               for w in whole)


def test_the_openapi_documents_descriptions_come_from_the_catalogs():
    """Every description of a field or a parameter in the served document is
    a text of the catalogs' [help] section (Spanish has each of them too:
    tests/test_catalogs.py), the determination's fields included."""
    import dataclasses

    from diferida.determination import Determination
    from diferida.service.app import create_app
    from diferida.service.settings import Settings

    openapi = create_app(Settings(database_url="sqlite:///:memory:")).openapi()
    described = []

    def walk(node):
        if isinstance(node, dict):
            for prop in node.get("properties", {}).values():
                described.append(prop.get("description"))
            described.extend(p.get("description") for p in node.get("parameters", []))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(openapi)
    described = [d for d in described if d]
    assert len(described) > 50 and any("1960" in d for d in described)
    assert [d for d in described if not _from_catalog(d)] == []
    # the determination's fields, each described from its catalog entry
    schema = openapi["components"]["schemas"]["Determination"]["properties"]
    assert sorted(schema) == sorted(f.name for f in dataclasses.fields(Determination)
                                    if f.metadata.get("json", True))
    assert all(_from_catalog(p["description"]) for p in schema.values())


def test_every_response_description_comes_from_the_catalogs():
    from diferida.service.app import create_app
    from diferida.service.settings import Settings

    openapi = create_app(Settings(database_url="sqlite:///:memory:")).openapi()
    said = [r.get("description") for path in openapi["paths"].values()
            for op in path.values() if isinstance(op, dict)
            for r in op.get("responses", {}).values()]
    said += [s.get("description") for s in
             openapi["components"].get("securitySchemes", {}).values()]
    # FastAPI's own words for a plain success or its validation error stay
    ours = [d for d in said if d and d not in ("Successful Response", "Validation Error")]
    assert len(ours) > 20
    assert [d for d in ours if not _from_catalog(d)] == []


def test_every_commands_and_options_help_comes_from_the_catalogs():
    import click

    from diferida.cli import main

    commands: list[click.Command] = [main]

    def walk(group, ctx):
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            commands.append(cmd)
            if isinstance(cmd, click.Group):
                walk(cmd, click.Context(cmd, parent=ctx))

    walk(main, click.Context(main))
    helps = [p.help for c in commands for p in c.params  # but click's own --version
             if isinstance(p, click.Option) and p.help and p.name != "version"]
    assert len(helps) > 60
    assert [h for h in helps if not _from_catalog(h)] == []
    described = [c.help for c in commands if c.help]
    assert len(described) >= 20
    assert [h for h in described if not _from_catalog(h)] == []


@pytest.mark.parametrize("rules", ["article19", "article19-strict-19_4"])
def test_the_pages_script_compares_with_the_rules_cutoff(tmp_path, rules):
    """The calculator's script shows the 19.6 question while the entry date
    is typed (web/static/web.js: `iso <= data-cutoff`, the same comparison as
    `asks_deferred_right`); the date it compares with is the rules' own, in
    the page for the rules chosen."""
    import re
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    with TestClient(create_app(Settings(database_url=f"sqlite:///{tmp_path}/w.db"))) as c:
        html = c.post("/calcular", data={"rules": rules, "entry_date": "1950-01-01"}).text
    (cutoff,) = re.findall(r'id="q-deferred_right_1960" data-cutoff="([^"]+)"', html)
    assert cutoff == load_rules(rules).deferred_right_cutoff.isoformat()
    script = (Path(__file__).parents[1] / "src/diferida/web/static/web.js").read_text("utf-8")
    assert 'iso <= question.getAttribute("data-cutoff")' in script
