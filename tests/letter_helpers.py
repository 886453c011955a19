"""Shared by the letter's tests: rules §8's participants, the determination
`diferida evaluate --json` gives for them (the command, as a user runs it),
and the letter read back as its parts (the HTML parsed as a browser does)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime
from importlib import resources
from typing import Any

import tinyhtml5

import diferida
from diferida.letter import LetterFacts

from .conftest import AS_OF

XHTML = "{http://www.w3.org/1999/xhtml}"
# 23:30 in Puerto Rico on 1 December 2026 (AST, UTC-4)
PREPARED_AT = datetime(2026, 12, 2, 3, 30, tzinfo=UTC)
# 22:05 in Puerto Rico on 30 June 2026
APPROVED_AT = datetime(2026, 7, 1, 2, 5, tzinfo=UTC)
CLI_OPTIONS = {"participant_id": "--id", "birth_date": "--birth-date",
               "entry_date": "--entry-date", "separation_date": "--separation-date",
               "creditable_service_years": "--service", "average_compensation": "--compensation",
               "group": "--group", "requested_start_date": "--start"}


def spec_examples() -> dict[int, dict[str, str]]:
    """rules §8's participants, by number, as the shipped file writes them
    (the empty fields left out)."""
    text = (resources.files("diferida") / "data" / "spec_examples.csv").read_text("utf-8")
    rows = {}
    for row in csv.DictReader(text.splitlines()):
        n = int(row["participant_id"].removeprefix("spec-"))
        rows[n] = {k: v for k, v in row.items() if v != ""}
    return rows


def cli_args(inputs: dict[str, str], lang: str, rules: str | None = None) -> list[str]:
    args = ["evaluate", "--json", "--lang", lang, "--as-of", AS_OF.isoformat()]
    for name, option in CLI_OPTIONS.items():
        if name in inputs:
            args += [option, inputs[name]]
    args.append("--refund" if inputs["refund_requested"] == "true" else "--no-refund")
    if "deferred_right_1960" in inputs:
        args.append("--deferred-right-1960" if inputs["deferred_right_1960"] == "true"
                    else "--no-deferred-right-1960")
    if rules:
        args += ["--rules", rules]
    return args


def run_cli(jobs: list[tuple[Any, dict[str, str], str, str | None]]) -> dict[Any, dict]:
    """`diferida evaluate --json` for each (key, inputs, lang, rules): the
    command itself, run in this process (click's runner), which spares the
    start of a Python process per answer."""
    from click.testing import CliRunner

    from diferida.cli import main

    answers = {}
    for key, inputs, lang, rules in jobs:
        r = CliRunner().invoke(main, cli_args(inputs, lang, rules))
        assert r.exit_code == 0, (r.output, r.exception)
        answers[key] = json.loads(r.stdout)
    return answers


def stored(inputs: dict[str, str], lang: str, rules: str | None = None) -> dict:
    """The determination as the case store keeps it (the Python API's)."""
    return diferida.evaluate(inputs, as_of=AS_OF, rules=rules, lang=lang).to_dict()


def facts(inputs: dict[str, str], result: dict, lang: str, **more: Any) -> LetterFacts:
    base: dict[str, Any] = dict(
        case_id=4711, version=2, lang=lang, inputs=inputs, result=result, as_of=AS_OF,
        rules_version=result["rules_version"], prepared_by="Ana Analista",
        prepared_title="Analista de Beneficios", approved_title="Supervisora de Beneficios",
        prepared_at=PREPARED_AT, addressee_name="María del Carmen Rivera Ortiz",
        addressee_address="Calle Luna 12\nSan Juan, PR 00901",
        application_date=date(2026, 10, 15))
    return LetterFacts(**{**base, **more})


# ---- the letter, read back --------------------------------------------------

def words(text: str) -> str:
    return " ".join(text.split())


def text_of(el) -> str:
    return words("".join(el.itertext()))


class Letter:
    """A letter's HTML as its parts: sections by class, rows of tables."""

    def __init__(self, html: str):
        self.html = html
        self.root = tinyhtml5.parse(html)
        self.body = self.root.find(f"{XHTML}body")

    def all(self, tag: str, cls: str | None = None) -> list:
        return [e for e in self.root.iter(f"{XHTML}{tag}")
                if cls is None or cls in (e.get("class") or "").split()]

    def one(self, tag: str, cls: str):
        found = self.all(tag, cls)
        assert len(found) == 1, (tag, cls, len(found))
        return found[0]

    def section(self, cls: str):
        return self.one("section", cls)

    def rows(self, table_cls: str) -> dict[str, str]:
        table = self.one("table", table_cls)
        return {text_of(tr.find(f"{XHTML}th")): text_of(tr.find(f"{XHTML}td"))
                for tr in table.iter(f"{XHTML}tr") if tr.find(f"{XHTML}th") is not None
                and tr.find(f"{XHTML}td") is not None}

    def grounds(self) -> list[dict[str, str]]:
        """The conditions examined, each with the group it is listed in
        (held, pending, not-held, na, amount, info) and that group's heading."""
        out: list[dict[str, str]] = []
        kind = heading = None
        if not self.all("section", "grounds"):  # nothing left to list (a denial's own part)
            return out
        for el in self.section("grounds"):
            if el.tag == f"{XHTML}h3":
                kind, heading = el.get("class"), text_of(el)
            elif el.tag == f"{XHTML}ul":
                out += [{"kind": kind, "heading": heading, "text": text_of(li)}
                        for li in el.iter(f"{XHTML}li")]
        return out

    def items(self, section_cls: str) -> list[str]:
        return [text_of(li) for li in self.section(section_cls).iter(f"{XHTML}li")]

    @property
    def text(self) -> str:
        return text_of(self.body)

    def order(self, *needles: str) -> list[int]:
        """Where each text first appears in the letter's running text."""
        return [self.text.index(n) for n in needles]
