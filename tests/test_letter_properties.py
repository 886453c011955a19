"""Every letter the workbench issues keeps the letter's duties, for
participants generated at random (Hypothesis): every route (19.1(a),
19.1(b), 19.2, 19.4(a), 19.4(b)), both regimes, members Article 19 does
not cover (entry in 2000-2013, and on or after 1 July 2013), the Regla 19.6
minimum, the refusals (insufficient service, a refund requested, not
separated), past and premature requested starts, in Spanish and in
English. Each case goes through the service as an analyst and a
supervisor take it (`open_draft` → `submit` → `approve`, with a note for
each warning that asks for a check), and the PDF the store keeps is read
back with pdftotext. On every letter:

- the amount sentence (`opening_amount`) cites Regla 19.6 when the minimum
  applies, else 19.5(a) or 19.5(b) by the regime, never the route (rules §6);
- the Régimen row names the regime, or the program of the entry date for
  a member Article 19 does not cover (rules §2), from the rules file's dates
  and names;
- one language: none of the other language's marker phrases;
- no code and no ISO date in the body;
- no start or earliest date offered before the determination's date (rules §5);
- each note saying what was checked stands under its own warning, and only
  under a warning that asks for a check;
- at most three pages, the salutation, both signers' names and titles.

A case whose facts contradict a check is refused at submission
(check_contradicted), as the workbench must. A letter costs about half a
CPU-second (WeasyPrint): each is rendered once, at approval, in one store
per test, and a failing case is reported as generated, not shrunk."""

from __future__ import annotations

import re
import shutil
import string
import subprocess
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, example, given, settings
from hypothesis import note as report
from hypothesis import strategies as st

import diferida
from diferida.i18n import catalog
from diferida.service import workflow as wf
from diferida.service.store import Store
from diferida.service.testing import database_for_tests

from .conftest import AS_OF, TIER, examples, need_part
from .workbench_helpers import SIGNERS, signer

pytestmark = pytest.mark.pdf

LANGS = ("es", "en")

# ---- the rules file: the dates, names and citations the letters must say ----

RULES = tomllib.loads((resources.files("diferida") / "rules" / "article19.toml")
                      .read_text("utf-8"))
REGIME = RULES["regime"]
NEW_AFTER = date.fromisoformat(REGIME["new_participant_after"]["value"])
NOT_COVERED_FROM = date.fromisoformat(REGIME["not_covered_from"]["value"])
HYBRID_FROM = date.fromisoformat(REGIME["hybrid_program_from"]["value"])
HYBRID_LAW = REGIME["hybrid_program_from"]["citation"]
CUTOFF_1960 = date.fromisoformat(REGIME["deferred_right_cutoff"]["value"])
LAWS = REGIME["laws"]
ROUTES = {r["id"]: r for r in RULES["routes"]}
AMOUNT_CITATION = {regime: RULES["amount"][regime]["citation"] for regime in ("pre1990", "new")}
MINIMUM_CITATION = RULES["minimum"]["citation"]
MIN_ENTRY_AGE = RULES["data_checks"]["min_entry_age"]

NAMES = ("María del Carmen Rivera Ortiz", "José Luis Santiago Cruz", "Ana Belén Torres",
         "Luis Méndez Ortiz", "Carmen Rosa Vélez Quiñones")
ANALYST, SUPERVISOR = "ana", "sofia"


def cited(citation: str, lang: str) -> str:
    """A citation as the language writes it (the catalog's citation words)."""
    for word, said in catalog(lang).get("citation_words", {}).items():
        citation = re.sub(rf"\b{re.escape(word)}\b", said, citation)
    return citation


def words(text: str) -> str:
    return " ".join(text.split())


# ---- the cases --------------------------------------------------------------

KINDS = ("19.1(a)", "19.1(b)", "19.2", "19.4(a)", "19.4(b)", "minimum_1960",
         "not_covered_2000", "not_covered_hybrid", "insufficient_service",
         "refund_requested", "not_separated")


@dataclass(frozen=True)
class Case:
    kind: str
    inputs: dict[str, str]
    letter_lang: str
    lang: str            # the analyst's page (the determination as stored)
    name: str

    def __repr__(self) -> str:  # as a failing example is reported
        return (f"Case({self.kind!r}, letter_lang={self.letter_lang!r}, lang={self.lang!r}, "
                f"name={self.name!r}, inputs={self.inputs!r})")

    def application(self, n: int) -> dict[str, str]:
        return {**self.inputs, "participant_id": f"P-{n:05d}", "name": self.name,
                "letter_lang": self.letter_lang,
                "address": "Calle Sol 12\nSan Juan, PR 00901",
                "application_date": min(AS_OF, date.today()).isoformat()}


def _years_later(day: date, years: int, days: int = 0) -> date:
    try:
        moved = day.replace(year=day.year + years)
    except ValueError:  # 29 February in a common year
        moved = day.replace(year=day.year + years, day=28)
    return moved + timedelta(days=days)


def _days(start: date, end: date) -> st.SearchStrategy[date]:
    return st.dates(min_value=start, max_value=end)


def _service(low: Decimal, high: Decimal) -> st.SearchStrategy[Decimal]:
    """Creditable service from `low` up to below `high`: whole years, or up
    to 4 decimal places (rules §1)."""
    units = st.integers(int(low * 10_000), int(high * 10_000) - 1)
    return st.one_of(units.map(lambda u: Decimal(u) / 10_000),
                     st.integers(int(low), int(high) - 1).map(Decimal)
                     .filter(lambda y: low <= y < high))


def _text(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral_value() \
        else format(value, "f").rstrip("0")


@st.composite
def cases(draw, kinds: tuple[str, ...] = KINDS) -> Case:
    kind = draw(st.sampled_from(kinds))
    day = timedelta(days=1)
    group = "general"
    refund = "false"
    separated = True
    right_1960: str | None = None
    if kind in ROUTES:
        route = ROUTES[kind]
        regime = draw(st.sampled_from(route["regimes"]))
        group = draw(st.sampled_from(route["groups"]))
        low = Decimal(route["min_service"])
        high = Decimal(route.get("max_service") or low + 15)
    elif kind == "minimum_1960":
        regime, low, high = "pre1990", Decimal(10), Decimal(20)  # the formula under 30%
        right_1960 = draw(st.sampled_from([None, "true"]))
    elif kind == "insufficient_service":
        regime, low, high = draw(st.sampled_from(["pre1990", "new"])), Decimal(0), Decimal(10)
        group = draw(st.sampled_from(["general", "police", "firefighter"]))
    elif kind.startswith("not_covered"):
        regime, low, high = "not_covered", Decimal(0), Decimal(30)
    else:
        regime, low, high = draw(st.sampled_from(["pre1990", "new"])), Decimal(10), Decimal(30)
        refund = "true" if kind == "refund_requested" else "false"
        separated = kind != "not_separated"
    if kind == "minimum_1960":
        entry = draw(_days(date(1940, 1, 1), CUTOFF_1960))
    elif regime == "pre1990":
        entry = draw(_days(CUTOFF_1960 + day, NEW_AFTER))
    elif regime == "new":
        entry = draw(_days(NEW_AFTER + day, NOT_COVERED_FROM - day))
    elif kind == "not_covered_2000":
        entry = draw(_days(NOT_COVERED_FROM, HYBRID_FROM - day))
    else:
        entry = draw(_days(HYBRID_FROM, date(2024, 12, 31)))
    entry_age = draw(st.integers(MIN_ENTRY_AGE, 45))
    birth = _years_later(entry, -entry_age, -draw(st.integers(0, 364)))
    service = draw(_service(low, high))
    # the span to separation: about the service (now and then shorter, so
    # that service longer than the span is asked about), and never past the
    # determination's date by more than two years (a planned separation)
    span_days = int(service * 365) + draw(st.integers(-200, 4000))
    separation = max(entry, min(entry + timedelta(days=max(span_days, 0)),
                                AS_OF + timedelta(days=730)))
    inputs = {"birth_date": birth.isoformat(), "entry_date": entry.isoformat(),
              "creditable_service_years": _text(service),
              "average_compensation": f"{draw(st.integers(8_000_00, 150_000_00)) / 100:.2f}",
              "group": group, "refund_requested": refund}
    if separated:
        inputs["separation_date"] = separation.isoformat()
    if right_1960 is not None:
        inputs["deferred_right_1960"] = right_1960
    start = draw(st.sampled_from(["none", "none", "past", "future"]))
    if start == "past":
        inputs["requested_start_date"] = draw(_days(max(entry, date(1980, 1, 1)),
                                                    AS_OF - day)).isoformat()
    elif start == "future":
        inputs["requested_start_date"] = draw(_days(AS_OF + day,
                                                    AS_OF + timedelta(days=20 * 365))).isoformat()
    return Case(kind, inputs, draw(st.sampled_from(LANGS)), draw(st.sampled_from(LANGS)),
                draw(st.sampled_from(NAMES)))


def _case(kind: str, letter_lang: str, lang: str | None = None, **inputs: str) -> Case:
    base = {"average_compensation": "30000.00", "group": "general", "refund_requested": "false"}
    return Case(kind, {**base, **inputs}, letter_lang, lang or letter_lang, NAMES[0])


# one of each kind, both languages among them, always run (a few examples
# at random could miss one); rules §8's participants where one fits
EXPLICIT = (
    # 19.1(a), eligible in 2028, a later start asked for (rules §8 example 1)
    _case("19.1(a)", "es", birth_date="1970-05-10", entry_date="1988-07-01",
          separation_date="2010-06-30", creditable_service_years="22",
          requested_start_date="2029-01-01"),
    # 19.1(b), eligible since 2020, a past start asked for (after eligibility)
    _case("19.1(b)", "en", "es", birth_date="1965-03-15", entry_date="1985-01-15",
          separation_date="2012-12-31", creditable_service_years="27.5",
          average_compensation="42000.00", requested_start_date="2021-01-01"),
    # 19.2, new participant, separated after 2013: a check and its notes
    _case("19.2", "es", "en", birth_date="1972-11-02", entry_date="1995-08-01",
          separation_date="2015-07-31", creditable_service_years="12.25",
          average_compensation="28500.00"),
    # 19.4(a), a police officer of the pre-1990 regime, eligible since 2013
    _case("19.4(a)", "en", birth_date="1963-06-20", entry_date="1984-02-01",
          separation_date="2011-03-31", creditable_service_years="26",
          group="police", average_compensation="36000.00"),
    # 19.4(b), a firefighter of the new regime, a premature request in the past
    _case("19.4(b)", "es", birth_date="1961-04-03", entry_date="1992-05-01",
          separation_date="2008-04-30", creditable_service_years="15.5",
          group="firefighter", requested_start_date="2015-01-01"),
    # the Regla 19.6 minimum, entered before 1 July 1960 (rules §8 example 11)
    _case("minimum_1960", "en", birth_date="1935-06-01", entry_date="1955-01-01",
          separation_date="1975-01-01", creditable_service_years="12",
          average_compensation="10000.00", requested_start_date="2020-01-01"),
    _case("minimum_1960", "es", "en", birth_date="1938-02-01", entry_date="1958-09-15",
          separation_date="1972-09-14", creditable_service_years="14",
          average_compensation="9000.00"),
    # not covered: the savings-account program (entry 2000-2013), the hybrid one
    _case("not_covered_2000", "es", birth_date="1975-01-01", entry_date="2000-01-01",
          separation_date="2010-01-01", creditable_service_years="10"),
    _case("not_covered_hybrid", "en", birth_date="1990-08-08", entry_date="2014-03-01",
          separation_date="2025-02-28", creditable_service_years="11"),
    _case("not_covered_hybrid", "es", "en", birth_date="1991-01-10", entry_date="2013-07-01",
          separation_date="2024-06-30", creditable_service_years="11"),
    # the cut-off day itself is pre-1990 (rules §8 example 6)
    _case("19.1(a)", "en", birth_date="1960-01-01", entry_date="1990-04-01",
          separation_date="2000-03-31", creditable_service_years="10",
          average_compensation="20000.00"),
    # entered at 13 and separated after 2013, a premature start in the past:
    # two warnings asking for a check, one note each
    _case("19.1(b)", "es", "en", birth_date="1975-01-01", entry_date="1988-07-01",
          separation_date="2020-06-30", creditable_service_years="25",
          requested_start_date="2020-01-01"),
    # 23 years of service in a span of 22: credited prior service, checked
    _case("19.1(a)", "en", birth_date="1970-05-10", entry_date="1988-07-01",
          separation_date="2010-06-30", creditable_service_years="23"),
    # rules §8 example 4: more service than entry to 30 June 2013 allows,
    # a check its own facts contradict: never sent
    _case("19.4(a)", "es", birth_date="1975-06-20", entry_date="1996-02-01",
          separation_date="2021-03-31", creditable_service_years="25.1667",
          group="police", average_compensation="36000.00"),
    # refusals
    _case("insufficient_service", "en", birth_date="1976-01-01", entry_date="1998-01-01",
          separation_date="2006-01-01", creditable_service_years="8"),
    _case("refund_requested", "es", birth_date="1970-05-10", entry_date="1988-07-01",
          separation_date="2010-06-30", creditable_service_years="22",
          refund_requested="true"),
    _case("not_separated", "en", "es", birth_date="1968-09-09", entry_date="1991-02-01",
          creditable_service_years="30"),
)


# ---- the workbench: one store per test --------------------------------------

@dataclass
class Office:
    store: Store
    analyst: Any
    supervisor: Any
    folder: Path                    # where each letter's PDF is read back
    count: Counter = field(default_factory=Counter)


@contextmanager
def office(folder: Path) -> Iterator[Office]:
    """One SQLite store for a whole test, with an analyst and a supervisor
    who sign (a store per example would cost its migration each time)."""
    with database_for_tests("sqlite", folder) as url:
        store = Store(url)
        try:
            store.upgrade()
            yield Office(store, store.add_user(ANALYST, "analyst", **signer(ANALYST))[0],
                         store.add_user(SUPERVISOR, "supervisor", **signer(SUPERVISOR))[0],
                         folder)
        finally:
            store.dispose()


# a note of the length people write (the workbench's own tests' notes)
NOTE = {"es": "Nota {n} de {who}: documentos de la agencia vistos, coinciden",
        "en": "Note {n} by {who}: the agency's documents seen, they agree"}


def note(who: str, n: int, lang: str) -> str:
    """What `who` checked for the `n`-th warning asking for a check, in the
    letter's language: each note its own words."""
    return NOTE[lang].format(n=n, who=who)


@dataclass
class Issued:
    case: Case
    result: dict[str, Any]          # the determination, as stored
    told: dict[str, Any]            # the same in the letter's language
    pages: list[str]
    text: str                       # every page, the page footers left out
    notes: dict[str, list[str]]     # each check's notes, analyst's then supervisor's


def pdf_pages(pdf: bytes, folder: Path) -> list[str]:
    exe = shutil.which("pdftotext")
    need_part(exe is not None, "pdftotext (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    path = folder / "letter.pdf"
    path.write_bytes(pdf)
    out = subprocess.run([exe, "-enc", "UTF-8", str(path), "-"], capture_output=True,
                         check=True, timeout=120).stdout.decode("utf-8")
    # pdftotext ends every page with a form feed: one piece a page
    return out.split("\f")[:out.count("\f")]


def without_footers(pages: list[str], lang: str, number: int, version: int) -> str:
    """The pages' text, run together, without each page's footer lines (the
    case and version, "Página i de n"), which split a sentence at a page
    break."""
    L = catalog(lang)["letter"]
    footer = L["footer"].format(case_id=number, version=version)
    kept = []
    for i, page in enumerate(pages, start=1):
        numbered = f"{L['page']} {i} {L['page_of']} {len(pages)}"
        kept += [line for line in page.splitlines()
                 if line.strip() not in (footer, numbered)]
    return words("\n".join(kept))


def issue(o: Office, case: Case) -> Issued | None:
    """The case through the workbench to its issued letter, read back;
    None when the workbench refuses it as invalid input (counted) or
    refuses to send it because its facts contradict a check (asserted)."""
    o.count["tried"] += 1
    try:
        v = wf.open_draft(o.store, o.analyst, case.application(o.count["tried"]),
                          lang=case.lang, as_of=AS_OF)
    except wf.Refused as refusal:
        assert refusal.code == "invalid", (refusal.code, refusal.values)
        o.count["invalid"] += 1
        return None
    if v.contradicted:
        with pytest.raises(wf.Refused) as info:
            wf.submit(o.store, o.analyst, v.case_id, lang=case.lang, acknowledgement={
                c: note("Ana", 1, case.letter_lang) for c in v.checks} or None)
        assert info.value.code == "invalid"
        assert {p["code"] for p in info.value.problems} == {"check_contradicted"}, \
            info.value.problems
        assert wf.view(o.store, o.analyst, v.case_id).state == "draft"
        o.count["contradicted"] += 1
        return None
    assert set(v.checks) <= set(wf.CHECK_WARNINGS)
    notes = {c: [note("Ana", i, case.letter_lang), note("Sofía", i, case.letter_lang)]
             for i, c in enumerate(v.checks, 1)}
    wf.submit(o.store, o.analyst, v.case_id, lang=case.lang,
              acknowledgement={c: n[0] for c, n in notes.items()} or None)
    done = wf.approve(o.store, o.supervisor, v.case_id,
                      acknowledgement={c: n[1] for c, n in notes.items()} or None)
    assert done.state == "approved"
    pdf = wf.letter(o.store, o.supervisor, v.case_id)
    assert pdf.startswith(b"%PDF-")
    pages = pdf_pages(pdf, o.folder)
    told = v.result if v.lang == case.letter_lang else diferida.evaluate(
        {k: x for k, x in v.inputs.items()}, as_of=AS_OF, lang=case.letter_lang).to_dict()
    o.count["issued"] += 1
    o.count[f"issued {case.kind}"] += 1
    o.count[f"route {v.result.get('route')}"] += 1
    o.count[f"lang {case.letter_lang}"] += 1
    return Issued(case, v.result, told, pages,
                  without_footers(pages, case.letter_lang, v.number, v.version), notes)


# ---- reading the letter ------------------------------------------------------

def template_pattern(template: str, groups: dict[str, str]) -> re.Pattern[str]:
    """A catalog text as a pattern: its words as written (any spacing), each
    {placeholder} a named group; a final full stop ends a sentence."""
    out = []
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        out.append(r"\s+".join(re.escape(w) for w in literal.split(" ")))
        if name is not None:
            out.append(f"(?P<{name}>{groups.get(name, '.+?')})")
    pattern = "".join(out)
    if pattern.endswith(r"\."):
        pattern = pattern[:-2] + r"\.(?=\s|$)"
    return re.compile(pattern)


def date_pattern(lang: str) -> str:
    c = catalog(lang)
    months = "|".join(c["months"])
    return c["date_format"].format(day=r"\d{1,2}", month=f"(?:{months})", year=r"\d{4}")


def dates_in(text: str, lang: str) -> Iterator[tuple[int, date]]:
    """Every date written in words in `text`: where it starts, and the day."""
    c = catalog(lang)
    months = {m: i for i, m in enumerate(c["months"], 1)}
    for m in re.finditer(date_pattern(lang), text):
        said = m.group(0)
        year = int(re.search(r"\d{4}", said).group(0))
        month = next(i for name, i in months.items() if re.search(rf"\b{name}\b", said))
        day = int(re.match(r"\D*(\d{1,2})", said).group(1))
        yield m.start(), date(year, month, day)


def money(value: Any) -> str:
    return f"${Decimal(str(value)):,.2f}"


def body(letter: Issued) -> str:
    """The letter up to its reference line for the System (which alone
    names the rules version)."""
    L = catalog(letter.case.letter_lang)["letter"]
    head = L["reference"].split("{")[0].strip()
    at = letter.text.find(head)
    return letter.text if at < 0 else letter.text[:at]


def sentence_at(text: str, at: int) -> str:
    start = max(text.rfind(". ", 0, at), text.rfind("; ", 0, at), text.rfind(" • ", 0, at))
    end = min(i for i in (text.find(". ", at), text.find("; ", at), len(text)) if i >= 0)
    return text[start + 1:end + 1].strip()


# ---- the duties ----------------------------------------------------------------

def duty_amount_sentence(letter: Issued) -> None:
    """rules §6: the sentence that states the amount cites 19.6 when the
    minimum applied, else 19.5(a) or 19.5(b) by the regime; never the route."""
    lang, d = letter.case.letter_lang, letter.result
    L = catalog(lang)["letter"]
    pattern = template_pattern(L["opening_amount"], {"monthly": r"\$[\d,]+\.\d{2}",
                                                     "annual": r"\$[\d,]+\.\d{2}"})
    assert {"monthly", "annual", "citation"} <= set(pattern.groupindex), L["opening_amount"]
    found = list(pattern.finditer(letter.text))
    if d["status"] == "not_entitled":
        assert not found, [m.group(0) for m in found]
        return
    assert len(found) == 1, ("the amount sentence", [m.group(0) for m in found])
    m = found[0]
    expected = cited(MINIMUM_CITATION if d["minimum_applied"] else AMOUNT_CITATION[d["regime"]],
                     lang)
    assert (m["monthly"], m["annual"]) == (money(d["monthly_amount"]), money(d["annual_amount"])), \
        m.group(0)
    assert m["citation"] == expected, (m.group(0), expected, d["route"], d["minimum_applied"])


def expected_regime(entry: date, lang: str) -> str:
    """rules §2: the regime by the entry date, or the program of a member
    Article 19 does not cover, named as the rules file names it."""
    words_ = catalog(lang)["regime"]
    if entry >= HYBRID_FROM:
        return words_["not_covered_hybrid"].format(law=cited(HYBRID_LAW, lang))
    if entry >= NOT_COVERED_FROM:
        return words_["not_covered"].format(law=cited(LAWS["not_covered"], lang))
    regime = "pre1990" if entry <= NEW_AFTER else "new"
    return words_[regime].format(law=cited(LAWS[regime], lang))


def duty_regime_program(letter: Issued) -> None:
    """rules §2: the Régimen row names the regime of the entry date (Act 447,
    Act 1-1990) or, not covered, the program of the entry date (Act
    305-1999's savings accounts; Act 3-2013's hybrid program)."""
    lang = letter.case.letter_lang
    entry = date.fromisoformat(letter.case.inputs["entry_date"])
    label = catalog(lang)["letter"]["regime"]
    row = f"{label} {expected_regime(entry, lang)}"
    assert row in letter.text, (row, letter.text[:1500])
    # and no other regime or program in that row
    others = {expected_regime(day, lang) for day in (NEW_AFTER, NEW_AFTER + timedelta(1),
                                                      NOT_COVERED_FROM, HYBRID_FROM)}
    for other in others - {expected_regime(entry, lang)}:
        assert f"{label} {other}" not in letter.text, other


def _catalog_markers(lang: str) -> set[str]:
    """Phrases only `lang`'s letters use: its statuses, its headlines' words
    before the first date, the letter's headings and closing."""
    c = catalog(lang)
    L = c["letter"]
    found = set(c["status"].values())
    found |= {t.split("{")[0].rstrip(" :") for t in c["headline"].values()}
    found |= {L[k] for k in ("facts_title", "findings_title", "warnings_title",
                             "decisions_title", "closing", "prepared_by", "approved_by")}
    found.add(L["salutation"].split("{")[0])
    return {m for m in found if len(m.strip()) >= 6}


MARKERS = {
    # English phrases of the English catalogs, never in a Spanish letter
    "en": {"Entitled to", "Not entitled", "Entered the System", "deferred pension", "Dear ",
           "under Rule", "Under Rule", "COLA", "may be requested", "Rule 19"}
    | _catalog_markers("en"),
    # and the Spanish ones, never in an English letter
    "es": {"Tiene derecho", "Tendrá derecho", "Estimado", "Regla ", "pensión diferida",
           "Ingresó", "puede solicitar", "Cordialmente"} | _catalog_markers("es"),
}


def duty_one_language(letter: Issued) -> None:
    """A letter speaks its language alone."""
    lang = letter.case.letter_lang
    other = next(x for x in LANGS if x != lang)
    found = sorted(m for m in MARKERS[other] if m in letter.text)
    assert not found, [(m, sentence_at(letter.text, letter.text.index(m))) for m in found]


CODES = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b|\bpre1990\b|article19-strict"
                   r"|article19@|acknowledged warnings")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def duty_no_code_no_iso_date(letter: Issued) -> None:
    """No code (snake_case, a rules variant's name) and no ISO date in
    the body: every date in words."""
    said = body(letter)
    assert not ISO_DATE.search(letter.text), [
        sentence_at(letter.text, m.start()) for m in ISO_DATE.finditer(letter.text)]
    assert not CODES.search(said), [sentence_at(said, m.start()) for m in CODES.finditer(said)]


# the words before a date that offer it as the start or the earliest date
# (to request) — said of a date before the determination, rules §5 forbids
# them; a request stated as asked ("pidió que comience el", "asked for the
# pension to start on") is not an offer
OFFERS = {
    "es": [r"(?:puede|podrá|pueden|podrán|podría)\s+solicitar\w*(?:\s+\S+){0,8}?\s+"
           r"(?:desde|a\s+partir\s+de)(?:\s+el)?",
           r"fecha\s+más\s+temprana\s+(?:es|será|sería)(?:\s+el)?",
           r"(?:puede|podrá|podría|pueda)\s+(?:comenzar|empezar|iniciarse)\s+"
           r"(?:el|desde\s+el|a\s+partir\s+del)",
           r"pensión\s+(?:comienza|comenzará|empieza|empezará)\s+(?:el|desde\s+el)",
           r"\b(?:comenzar|empezar)\s+(?:el|desde\s+el|a\s+partir\s+del)",
           r"tiene\s+derecho\s+a\s+(?:una|la)\s+pensión(?:\s+diferida)?\s+desde(?:\s+el)?"],
    "en": [r"(?:may|can|could|will)\s+(?:be\s+requested|apply|request\s+it)(?:\s+\S+){0,10}?"
           r"\s+(?:from|on|as\s+of)",
           r"earliest(?:\s+\w+){0,3}\s+(?:is|will\s+be|would\s+be)",
           r"(?:may|can|could|will|would)\s+(?:start|begin)\s+(?:on|from)",
           r"pension\s+(?:starts|begins|will\s+start|will\s+begin)\s+(?:on|from)",
           r"entitled\s+to\s+(?:a|the)\s+(?:deferred\s+)?pension\s+(?:from|since)"],
}


def duty_no_past_start_offered(letter: Issued) -> None:
    """rules §5: no text offers a start, or an earliest date to request
    the pension, before the determination's date; a bare past date never
    stands in the start row."""
    lang = letter.case.letter_lang
    start_row = re.escape(catalog(lang)["letter"]["start_date"])
    offers = [re.compile(rf"(?:{p})\s*$", re.IGNORECASE) for p in OFFERS[lang]]
    offers.append(re.compile(rf"{start_row}\s*$"))
    bad = []
    for at, day in dates_in(letter.text, lang):
        if day >= AS_OF:
            continue
        before = letter.text[max(0, at - 160):at]
        if any(p.search(before) for p in offers):
            bad.append((day.isoformat(), sentence_at(letter.text, at)))
    assert not bad, bad


def duty_notes_under_their_warnings(letter: Issued) -> None:
    """Each note saying what was checked stands under its own warning, and
    only under a warning that asks for a check (workflow.CHECK_WARNINGS)."""
    lang = letter.case.letter_lang
    L = catalog(lang)["letter"]
    checked = template_pattern(L["checked_note"], {"date": date_pattern(lang),
                                                   "note": r"[^«»“”]+?"})
    every = list(checked.finditer(letter.text))
    start = letter.text.index(f"{L['warnings_title']} ")
    ends = [letter.text.find(t, start) for t in (L["decisions_title"], L["scope_title"],
                                                   L["reference"].split("{")[0].strip())]
    end = min(i for i in [*ends, len(letter.text)] if i > start)
    assert all(start < m.start() < end for m in every), \
        [m.group(0) for m in every if not start < m.start() < end]
    part = letter.text[start:end]
    codes = list(letter.told["warnings"])
    items = part.split(" • ")[1:]
    if not codes:
        assert not items and not every, part
        return
    assert len(items) == len(codes), (codes, items)
    names = {"Ana": SIGNERS[ANALYST][0], "Sofía": SIGNERS[SUPERVISOR][0]}
    for code, item in zip(codes, items, strict=True):
        said, *under = item.split(" ◦ ")
        finding = next((f for f in letter.told["explanation"] if f["condition"] == code), None)
        if finding is not None:
            assert words(finding["text"])[:60] in said, (code, said)
        notes = letter.notes.get(code, [])
        assert (code in wf.CHECK_WARNINGS) == bool(notes), (code, notes)
        got = [checked.fullmatch(u.strip()) for u in under]
        assert all(got), (code, under)
        expected = [(names[who], n) for who, n in zip(("Ana", "Sofía"), notes)]
        assert [(m["name"], words(m["note"])) for m in got] == expected, (code, under, notes)


def duty_at_most_three_pages(letter: Issued) -> None:
    """The letter takes three pages at most."""
    assert len(letter.pages) <= 3, (len(letter.pages), letter.pages[-1][-600:])


def duty_salutation_signatures(letter: Issued) -> None:
    """The salutation by name; both signers' full names and titles."""
    L = catalog(letter.case.letter_lang)["letter"]
    assert L["salutation"].format(name=letter.case.name) in letter.text
    for who in (ANALYST, SUPERVISOR):
        for said in SIGNERS[who]:
            assert said in letter.text, said


Duty = Callable[[Issued], None]
DUTIES: dict[str, Duty] = {
    "amount_sentence": duty_amount_sentence,
    "regime_program": duty_regime_program,
    "one_language": duty_one_language,
    "no_code_no_iso_date": duty_no_code_no_iso_date,
    "no_past_start_offered": duty_no_past_start_offered,
    "notes_under_their_warnings": duty_notes_under_their_warnings,
    "at_most_three_pages": duty_at_most_three_pages,
    "salutation_signatures": duty_salutation_signatures,
}

# Long letters found by this test: a Spanish letter of a police officer or
# firefighter who entered after 1 April 1990 (the Regla 19.4 reading), with
# warnings that ask for a check (a note each, by two people) and the Act
# 3-2013 warnings; they took four pages before the annex was set in smaller
# type across the page's width
LONG_SHOWN: tuple[Case, ...] = (
    Case("19.4(b)", {"birth_date": "1972-05-02", "entry_date": "1992-10-03",
                     "separation_date": "2015-09-28", "creditable_service_years": "23",
                     "average_compensation": "12529.42", "group": "police",
                     "refund_requested": "false"}, "es", "es", "Ana Belén Torres"),
    Case("19.4(b)", {"birth_date": "1969-11-10", "entry_date": "1990-05-17",
                     "separation_date": "2006-02-04", "creditable_service_years": "16",
                     "average_compensation": "22507.83", "group": "firefighter",
                     "refund_requested": "false",
                     "requested_start_date": "1993-10-15"}, "es", "en",
         "Ana Belén Torres"),
)


def run(folder: Path, duties: tuple[str, ...], strategy: st.SearchStrategy[Case], n: int,
        explicit: tuple[Case, ...] = EXPLICIT) -> Counter:
    """Each case issued once, in one store, and held to `duties`: the
    explicit cases, then `n` generated ones; the counts of the run."""
    with office(folder) as o:
        # no shrinking: each example costs a PDF, and a failing case is
        # reported as generated (its inputs, its languages)
        # the default tier (make test, CI) draws the same cases every run, so
        # that a landing is judged on a known set; the full tier explores
        @settings(max_examples=n, database=None, phases=(Phase.explicit, Phase.generate),
                  derandomize=TIER != "full",
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        @given(case=strategy)
        def check(case: Case) -> None:
            report(repr(case))
            letter = issue(o, case)
            assume(letter is not None)
            for name in duties:
                DUTIES[name](letter)

        for case in reversed(explicit):
            check = example(case=case)(check)
        check()
        return o.count


@pytest.mark.slow
def test_every_issued_letter_keeps_every_duty(tmp_path):
    duties = tuple(DUTIES)
    count = run(tmp_path, duties, cases(), examples(20))
    # most generated cases are valid input: the strategies follow rules §1
    assert count["invalid"] <= count["tried"] // 5, count
    assert count["issued"] >= count["tried"] * 2 // 3, count
    assert count["contradicted"] >= 1, count  # rules §8 example 4 at least
    for kind in KINDS:
        assert count[f"issued {kind}"], (kind, count)
    for route in ROUTES:
        assert count[f"route {route}"], (route, count)
    assert count["lang es"] and count["lang en"], count


# the long letters: police and firefighters (the Regla 19.4 reading),
# separated after 2013 (a check), now and then with a past start
LONG = ("19.4(a)", "19.4(b)", "19.1(b)")


@pytest.mark.slow
def test_the_long_letters_keep_every_duty(tmp_path):
    run(tmp_path, tuple(DUTIES), cases(LONG), examples(5), explicit=LONG_SHOWN)
