"""What the answer page offers besides the answer: the scenario panel
("Compare dates"), what to do next, and the glossary.

Every figure of the scenario panel is the core's own answer for that date
(`diferida.evaluate` with the date changed); nothing here applies a rule.
The words come from the catalogs of each language (i18n/<lang>/web/):

    scenarios.toml    the panel's words
    next_steps.toml   what to do next, per status and reason
    glossary.toml     the glossary page (/glosario)

`next_steps` and `glossary` may be replaced by an administrator: a file of
the same name in the directory named by DIFERIDA_WEB_TEXTS_DIR replaces the
shipped one. It must have the same keys, and use within braces only the
names the shipped text of that key uses; otherwise `TextsError` names the
file and the key (the service refuses to start, see `check_texts`).
"""

from __future__ import annotations

import calendar
import os
import re
import tomllib
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import diferida
from diferida.dates import years_months_days
from diferida.determination import Determination, plain
from diferida.explain import law_words, reason_texts
from diferida.fields import SERVICE_UNITS
from diferida.i18n import catalog, fmt_date
from diferida.money import format_money
from diferida.render import rules_of
from diferida.rules import load_rules
from diferida.textfiles import check_shape, read_texts

from ..errors import DiferidaError
from . import lenient
from .forms import FormState, participant
from .labels import LANGS, check_lang, labels, plural
from .view import estimate_words

TEXTS_DIR_ENV = "DIFERIDA_WEB_TEXTS_DIR"
EDITABLE = ("next_steps", "glossary")  # the texts an administrator may replace
# Later start dates and separation dates offered without typing: whole years
# after the eligibility date, or after the determination's date.
YEARS_LATER = (1, 2, 5)
MONTHS_A_YEAR = 12
ENTITLED = ("eligible", "not_yet_eligible")
# Reasons no other separation date can change: the panel does not show it.
FIXED_REASONS = ("not_covered", "refund_requested")
_DMY = re.compile(r"^\s*(\d{1,2})\s*[/.-]\s*(\d{1,2})\s*[/.-]\s*(\d{4})\s*$")
_ISO = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\s*$")


class TextsError(DiferidaError, ValueError):
    """An administrator's texts file that cannot be used as it is."""


# ---------------------------------------------------------------- the texts

def shipped_path(name: str, lang: str) -> Any:
    """The shipped texts file `name` of `lang`: i18n/<lang>/web/<name>.toml
    (a language is one folder of catalogs, the web page's included)."""
    return resources.files("diferida") / "i18n" / lang / "web" / f"{name}.toml"


@cache
def _shipped(name: str, lang: str) -> dict[str, Any]:
    check_lang(lang)
    text = shipped_path(name, lang).read_text("utf-8")
    return tomllib.loads(text)


def _override_path(name: str, lang: str) -> Path | None:
    folder = os.environ.get(TEXTS_DIR_ENV, "").strip()
    if not folder or name not in EDITABLE:
        return None
    path = Path(folder) / f"{name}_{lang}.toml"
    return path if path.is_file() else None


@cache
def _override(path: str, mtime_ns: int, size: int, name: str, lang: str) -> dict[str, Any]:
    """An administrator's file, read and checked once per version of it."""
    data = read_texts(path, TextsError)
    problems: list[str] = []
    check_shape(data, _shipped(name, lang), "", problems)
    url = data.get("system", {}).get("url") if name == "next_steps" else None
    if isinstance(url, str) and url and not url.startswith("https://"):
        problems.append(f"system.url: must start with https:// (or be empty), not {url!r}")
    if problems:
        raise TextsError(f"{path}: " + "; ".join(problems))
    return data


def texts(name: str, lang: str) -> dict[str, Any]:
    """The texts `name` in `lang`: the administrator's file when there is
    one (re-read when it changes), else the one shipped with the package."""
    path = _override_path(name, lang)
    if path is None:
        return _shipped(name, lang)
    st = path.stat()
    return _override(str(path), st.st_mtime_ns, st.st_size, name, lang)


def check_texts() -> list[Path]:
    """Read every administrator's file now, so that a mistake in one stops
    the service at start with its name and key, not a visitor's page later.
    Returns the files in use."""
    folder = os.environ.get(TEXTS_DIR_ENV, "").strip()
    if folder and not Path(folder).is_dir():
        raise TextsError(f"{TEXTS_DIR_ENV}={folder}: not a directory")
    used = []
    for name in EDITABLE:
        for lang in LANGS:
            texts(name, lang)
            path = _override_path(name, lang)
            if path is not None:
                used.append(path)
    return used


def _fill(value: Any, words: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format_map(words) if "{" in value else value
    if isinstance(value, list):
        return [_fill(v, words) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, words) for k, v in value.items()}
    return value


class _Words(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# -------------------------------------------------------------- next steps

def _open_service(d: Determination) -> bool:
    """Still in service, or leaving on a date after the determination's."""
    sep = next((f for f in d.explanation if f.condition == "separated"), None)
    if sep is None:
        return False
    day = sep.values.get("separation_date")
    return day is None or date.fromisoformat(day) > d.as_of


def still_in_service(d: Determination) -> bool:
    """No separation date at all (not a refund or Act 305 case alone): the
    page says "not separated yet" and what leaving now would give, not a
    plain "not entitled"."""
    return (d.status == "not_entitled" and "not_separated" in d.reasons
            and "not_covered" not in d.reasons)


def leaving_now(state: FormState) -> Determination | None:
    """For someone still in service, the core's answer if they left on the
    determination's date (the headline's "si se separa el …"), with the
    service they have then: the values the answer used, that date as the
    separation date. None for anyone else, or when the core refuses it."""
    d = state.determination
    if d is None or not still_in_service(d):
        return None
    a = _ask(state, d, separation_date=d.as_of.isoformat(), requested_start_date="")
    return None if isinstance(a, str) else a


def leave_title(lang: str) -> str:
    """The title of the table of separation dates, as sentences name it."""
    return _shipped("scenarios", lang)["leave"]["title"]


def leave_table_shown(d: Determination) -> bool:
    """Whether the scenario panel has the table "if you leave service on
    another date": for someone still in service or leaving after the
    determination's date, unless no separation date can change the answer."""
    return (_open_service(d) and _service_used(d) is not None
            and not any(r in FIXED_REASONS for r in d.reasons))


def next_steps(state: FormState) -> dict[str, Any]:
    """What to do next for the answer shown: a section per status and, for
    a person not entitled, one per reason, in the order of the reasons.
    A member Article 19 does not cover gets that block alone: no advice as
    if the article applied. A step pointing at the table of separation
    dates is shown only when that table is on the page."""
    d = state.determination
    assert d is not None
    lang = d.lang
    words = _Words(law_words(rules_of(d), lang))
    words["eligibility_date"] = fmt_date(d.eligibility_date, lang)
    words["leave_table"] = _shipped("scenarios", lang)["leave"]["title"]
    raw = texts("next_steps", lang)
    words["system"] = raw["system"]["name"]
    t = _fill(raw, words)
    section = t[d.status]
    intro, steps, blocks = section["intro"], section["steps"], []
    if d.status == "not_entitled" and "not_covered" in d.reasons:
        r = section["not_covered"]
        intro, steps = r["intro"], []
        blocks.append({"title": r["title"], "steps": r["steps"]})
    elif d.status == "not_entitled":
        if still_in_service(d):
            # someone still working: the headline says what leaving now would
            # give; no "not entitled … check the data" under it
            intro, steps = labels(lang)["result"]["in_service_intro"], []
        table = leave_table_shown(d)
        for reason in d.reasons:
            r = section[reason]
            reason_steps = r["steps"]
            if reason == "insufficient_service" and _open_service(d):
                reason_steps = r["steps_open"]
            if table and reason in ("not_separated", "insufficient_service"):
                reason_steps = reason_steps + r["table"]  # (the table implies open service)
            blocks.append({"title": r["title"], "steps": reason_steps})
    system = t["system"]
    # the administrator's phone, office and hours, each only when given
    reach = [{"label": system[f"{k}_label"], "value": system[k]}
             for k in ("phone", "office", "hours") if system[k].strip()]
    return {
        "title": t["title"], "decides": t["decides"], "contact": t["contact"],
        "system": {**system, "reach": reach},
        "intro": intro, "steps": steps, "blocks": blocks,
        "list_title": section.get("list_title"), "list": section.get("list", []),
    }


# --------------------------------------------------------------- scenarios

def add_months(day: date, months: int) -> date:
    """The same day `months` later, clamped to the month's last day."""
    y, m = divmod(day.month - 1 + months, MONTHS_A_YEAR)
    y, m = day.year + y, m + 1
    return date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


def add_years(day: date, years: int) -> date:
    """The same day `years` later; 29 February becomes 28 February in a
    common year (as the rules read an anniversary, rules §4)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)


def parse_day(text: str) -> date | None:
    """A typed date: day/month/year (30/06/2031) or year-month-day
    (2031-06-30). None when it is not one."""
    m = _DMY.match(text)
    if m:
        day, month, year = (int(x) for x in m.groups())
    else:
        m = _ISO.match(text)
        if not m:
            return None
        year, month, day = (int(x) for x in m.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None


def service_growth(as_of: date, until: date) -> int:
    """Service added by working from `as_of` to `until`, in 1/10,000 years:
    1/12 of a year for each whole month, cut (never rounded up) to the 4
    decimals service may have (rules §1). Days short of a month add nothing."""
    years, months, _days = years_months_days(as_of, until)
    return (years * MONTHS_A_YEAR + months) * SERVICE_UNITS // MONTHS_A_YEAR


def _units(text: str) -> int:
    units = Decimal(text) * SERVICE_UNITS
    assert units == units.to_integral_value(), text  # the core allows 4 decimals
    return int(units)


def _service_text(units: int) -> str:
    return plain(Decimal(units) / SERVICE_UNITS)


def _service_used(d: Determination) -> str | None:
    """The service the core read, as its findings state it."""
    f = next((f for f in d.explanation if f.condition == "service"), None)
    return None if f is None else f.values["service"]


def _ask(state: FormState, d: Determination, **changes: str) -> Determination | str:
    """The core's answer with some fields changed, or its message. The
    fields are the values the answer used: as the page read them
    (web/lenient.py: "14/2/1971", "$45,000", "21 años y 3 meses"), never
    the text as typed, which only the page reads."""
    read = state.core if state.core is not None else {}
    fields = {**participant(state.values), **read, "as_of": d.as_of.isoformat(), **changes}
    fields = {k: v for k, v in fields.items() if v != ""}
    try:
        return diferida.evaluate(fields, rules=rules_of(d), lang=d.lang)
    except diferida.InputError as exc:
        return estimate_words("; ".join(p.message for p in exc.problems), d.lang)


def _start_rows(state: FormState, d: Determination, t: dict[str, Any],
                typed: date | None) -> list[dict[str, Any]]:
    lang = d.lang
    # Regla 19.3 says from when the pension may be requested, not that it may
    # begin on a past date: for someone already eligible the table starts on
    # the determination's date, never before it (rules §5).
    assert d.eligibility_date is not None  # the rows are an entitled member's
    first = max(d.eligibility_date, d.as_of)
    days = [(first, t["row_eligibility"] if first == d.eligibility_date else t["row_now"], False)]
    days += [(add_years(first, n), plural(t["row_years"], n), False) for n in YEARS_LATER]
    today = date.today()
    if all(x < today for x, _, _ in days):
        # a determination dated years ago (an analyst's "as of"): a row for
        # today, so the rows are never all in the past
        days.append((today, t["row_today"], False))
    days = _with_typed(days, typed, t["row_typed"])
    days.sort(key=lambda x: x[0])
    rows = []
    for day, label, was_typed in days:
        a = _ask(state, d, requested_start_date=day.isoformat())
        row = {"day": day, "date": fmt_date(day, lang), "label": label, "typed": was_typed,
               "note": None, "error": None, "annual": None, "monthly": None,
               "annual_amount": None, "monthly_amount": None}
        if isinstance(a, str):
            row["error"] = a
        else:
            row.update(annual=format_money(a.annual_amount),
                       monthly=format_money(a.monthly_amount),
                       annual_amount=a.annual_amount, monthly_amount=a.monthly_amount)
            if a.premature_request:
                row["note"] = t["premature"].format(earliest=fmt_date(a.eligibility_date, lang))
        rows.append(row)
    return rows


def _months_to_reach(base: int, needed: int) -> int:
    """The fewest whole months of work after which `service_growth` brings
    `base` service units to `needed`."""
    months = -(-(needed - base) * MONTHS_A_YEAR // SERVICE_UNITS)
    while months * SERVICE_UNITS // MONTHS_A_YEAR < needed - base:
        months += 1
    return months


def frozen_after(d: Determination) -> date:
    """The last day whose service counts (Act 3-2013, from the rules data):
    the separation-date rows never add service after it."""
    return rules_of(d).act_3_2013.accruals_frozen_after


def grown_service(d: Determination, base: int, day: date) -> int:
    """`base` service units plus the time worked from the determination's
    date until `day`, never past the freeze date."""
    until = min(day, frozen_after(d))
    return base + (service_growth(d.as_of, until) if until > d.as_of else 0)


def _leave_rows(state: FormState, d: Determination, t: dict[str, Any], service: str,
                typed: date | None) -> list[dict[str, Any]]:
    lang, c = d.lang, catalog(d.lang)
    base = _units(service)
    days = [(d.as_of, t["row_now"], False)] if still_in_service(d) else []
    days += [(add_years(d.as_of, n), plural(t["row_years"], n), False) for n in YEARS_LATER]
    short = next((f for f in d.explanation if f.condition == "insufficient_service"), None)
    if short is not None and short.values and _units(short.values["needed"]) > base:
        # the first separation date with the service the core says is
        # missing, when it is reached before the freeze date
        needed = _units(short.values["needed"])
        day = add_months(d.as_of, _months_to_reach(base, needed))
        if grown_service(d, base, day) >= needed:
            label = t["row_needed"].format(needed=plain(Decimal(short.values["needed"])))
            days = [x for x in days if x[0] != day] + [(day, label, False)]
    days = _with_typed(days, typed, t["row_typed"])
    days.sort(key=lambda x: x[0])
    rows = []
    for day, label, was_typed in days:
        units = grown_service(d, base, day)
        grown = _service_text(units)
        a = _ask(state, d, separation_date=day.isoformat(),
                 creditable_service_years=f"{Decimal(units) / SERVICE_UNITS:.4f}",
                 requested_start_date="")
        row = {"day": day, "date": fmt_date(day, lang), "label": label, "typed": was_typed,
               "service": grown, "answer": None, "amount": t["no_amount"], "error": None,
               "determination": None, "warnings": [], "warning_codes": []}
        if isinstance(a, str):
            row["error"] = a
        else:
            row["determination"] = a
            # the row's own warnings, as `diferida evaluate` gives them for these
            # facts (those every row shares are said once: `_shared_warnings`)
            said = [(w, estimate_words(f.text, lang)) for w in a.warnings
                    for f in a.explanation if f.condition == w]
            row["warning_codes"] = [w for w, _ in said]
            row["warnings"] = [text for _, text in said]
            status = c["status"][a.status]
            if a.status in ENTITLED:
                row["answer"] = t["eligible_from"].format(
                    status=status, date=fmt_date(a.eligibility_date, lang))
                row["amount"] = t["amounts"].format(annual=format_money(a.annual_amount),
                                                    monthly=format_money(a.monthly_amount))
            else:
                row["answer"] = t["not_entitled"].format(
                    status=status, reasons=estimate_words(
                        "; ".join(reason_texts(a.reasons, rules_of(a), lang)), lang))
        rows.append(row)
    return rows


def _with_typed(days: list[tuple[date, str, bool]], typed: date | None,
                words: str) -> list[tuple[date, str, bool]]:
    """The table's dates with the typed one: a row of its own, or, when it is
    already a row's date, that row marked as the typed one too (so that "Ver
    esa fecha" always has a row to land on)."""
    if typed is None:
        return days
    if typed not in [x for x, _, _ in days]:
        return [*days, (typed, words, True)]
    return [(x, f"{label}; {words}" if x == typed else label, x == typed)
            for x, label, _ in days]


def _shared_warnings(rows: list[dict[str, Any]], t: dict[str, Any]) -> list[str]:
    """The warnings every row of the table gives, said once above it and
    taken out of the rows (each row keeps only its own): a warning with the
    same words in every row, as it is; one whose words name each row's own
    date or amount, in the table's words for all of them (`shared` of the
    scenario texts), or left in the rows when there are none."""
    decided = [r for r in rows if r["determination"] is not None]
    if len(decided) < 2:
        return []
    said = [dict(zip(r["warning_codes"], r["warnings"], strict=True)) for r in decided]
    out = []
    for code in said[0]:
        if not all(code in each for each in said[1:]):
            continue
        texts = {each[code] for each in said}
        if len(texts) == 1:
            out.append(texts.pop())
        elif code in t.get("shared", {}):
            out.append(t["shared"][code])
        else:
            continue
        for r in decided:
            keep = [i for i, c in enumerate(r["warning_codes"]) if c != code]
            r["warning_codes"] = [r["warning_codes"][i] for i in keep]
            r["warnings"] = [r["warnings"][i] for i in keep]
    return out


def scenarios(state: FormState, typed_text: str = "") -> dict[str, Any]:
    """The panel under the answer: for an entitled participant, the pension
    at later start dates; for someone still in service (or leaving on a
    future date), the answer if they left on other dates, their service
    grown by the time worked until then. Each row is the core's answer."""
    d = state.determination
    assert d is not None
    lang = d.lang
    words = _Words(law_words(rules_of(d), lang))
    t = _fill(_shipped("scenarios", lang), words)
    typed_text = (typed_text or "").strip()
    typed = parse_day(typed_text) if typed_text else None
    error = t["other"]["bad"] if typed_text and typed is None else None
    both = lenient.date_choices(typed_text, labels(lang)["lenient"]) if typed else None
    if both:
        # its day and month could be swapped: not read silently, asked
        error = t["other"]["ambiguous"].format(value=typed_text, first=both[0][1],
                                               second=both[1][1], first_iso=both[0][0],
                                               second_iso=both[1][0])
        typed = None
    if typed is not None and typed < d.as_of:
        # neither a start nor a separation is looked at before that date
        error = t["other"]["before_as_of"].format(as_of=fmt_date(d.as_of, lang))
        typed = None

    start = None
    if d.status in ENTITLED and d.eligibility_date is not None:
        rows = _start_rows(state, d, t["start"], typed)
        amounts = {(r["annual_amount"], r["monthly_amount"]) for r in rows if r["error"] is None}
        same = len(amounts) == 1
        sentence = t["start"]["no_increase"] if same else t["start"]["changes"].format(
            rules_name=d.rules_name)
        past = None
        if d.eligibility_date < d.as_of:
            past = t["start"]["past_months"].format(
                eligibility_date=fmt_date(d.eligibility_date, lang))
        start = {**t["start"], "rows": rows, "same": same, "sentence": sentence,
                 "past": past}

    leave = None
    service = _service_used(d)
    if leave_table_shown(d) and service is not None:
        rows = _leave_rows(state, d, t["leave"], service, typed)
        if d.as_of >= frozen_after(d):
            assumptions = [t["leave"]["frozen"]]
        else:
            assumptions = [t["leave"]["assumption_service"].format(
                as_of=fmt_date(d.as_of, lang), service=plain(Decimal(service)))]
        comp = next((r["determination"].formula.average_compensation for r in rows
                     if r["determination"] is not None
                     and r["determination"].formula is not None), None)
        if comp is not None:
            assumptions.append(t["leave"]["assumption_compensation"].format(
                compensation=format_money(comp)))
        sep = next(f for f in d.explanation if f.condition == "separated")
        if sep.values.get("separation_date") is not None:
            assumptions.append(t["leave"]["assumption_plan"].format(
                separation_date=fmt_date(date.fromisoformat(sep.values["separation_date"]), lang),
                service=plain(Decimal(service))))
        leave = {**t["leave"], "rows": rows, "assumptions": assumptions,
                 "shared_warnings": _shared_warnings(rows, t["leave"])}

    return {"title": t["title"], "intro": t["intro"], "start": start, "leave": leave,
            "other": {**t["other"], "value": typed_text, "error": error},
            "shown": start is not None or leave is not None}


# ---------------------------------------------------------------- glossary

GLOSSARY_PATH = {"es": "/glosario", "en": "/glosario?lang=en"}


def glossary_href(lang: str, anchor: str = "") -> str:
    return GLOSSARY_PATH[lang] + (f"#{anchor}" if anchor else "")


def glossary(lang: str) -> dict[str, Any]:
    """The glossary page's texts, the law's words from the default rules."""
    t = _fill(texts("glossary", lang), _Words(law_words(load_rules(), lang)))
    return {**t, "terms": [{"id": k, **v} for k, v in t["terms"].items()]}


__all__ = ["TEXTS_DIR_ENV", "TextsError", "add_years", "check_texts", "glossary",
           "glossary_href", "next_steps", "parse_day", "scenarios", "service_growth", "texts"]
