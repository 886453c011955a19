"""The audit trail's "Detalle" in the page's words: each event's detail,
as the store records it (codes and figures, in one fixed form per kind of
event, for the exports and the API), said as a sentence of the workbench's
catalog ([audit.details]). A detail of a form this page has no words for is
shown as recorded, marked as such (`Said.code`): never turned into a guess.

The forms read here are those the service writes: "version 2, corrects 14"
(a case opened or corrected), "letter sha256 …; acknowledged warnings: …"
(an approval), "refused: invalid birth_date:not_a_date" (a refusal, the
fields named), "filters: who, since" (a reading of the trail), the user
events' `{"name": …, "user_id": …}` and the others below."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from diferida.service import workflow
from diferida.service.workflow.names import Subject

from . import view


@dataclass(frozen=True)
class Said:
    """A detail in words (`text`, "" when there is nothing to say), or the
    detail as recorded when the page has no words for its form (`code`)."""

    text: str = ""
    code: str | None = None


def detail_words(action: str, detail: str | None, lang: str, *, event_id: int | None = None,
                 subjects: Mapping[int, Subject] | None = None,
                 when: Callable[[str], str] | None = None) -> Said:
    """The detail of one event of the trail, in `lang`; `subjects`: the users
    the user events are about (`names.trail_subjects`); `when`: a recorded
    time (ISO) in the page's words."""
    text = (detail or "").strip()
    if text in ("", "{}", "[]", "null"):
        return Said()
    d = view.words(lang)["audit"]["details"]
    said = _said(action, text, lang, d, event_id, subjects or {}, when or (lambda t: t))
    return Said(said) if said is not None else Said(code=text)


COLLAPSED = re.compile(r"(?P<said>.*); (?P<n>\d+) more like this \(collapsed, "
                       r"(?P<seconds>[0-9.]+) s window, last at (?P<last>\S+)\)")


def _said(action: str, text: str, lang: str, d: Mapping[str, Any], event_id: int | None,
          subjects: Mapping[int, Subject], when: Callable[[str], str]) -> str | None:
    m = COLLAPSED.fullmatch(text)
    if m:  # the rate limiter's summary of many alike: the first said, then how many
        first = _said(action, m["said"], lang, d, event_id, subjects, when)
        if first is None:
            return None
        return plural(d["collapsed"], int(m["n"]), said=first, seconds=m["seconds"],
                      last=when(m["last"]))
    if text.startswith("refused: "):
        return _refused(text[len("refused: "):], lang, d)
    if action.startswith("user."):
        return _user_event(action, text, d, event_id, subjects)
    for pattern, say in FORMS:
        found = pattern.fullmatch(text)
        if found:
            return say(found, lang, d)
    return None


def plural(forms: list[str], n: int, **values: Any) -> str:
    """The form of `forms` for `n` (one, or more than one), filled in."""
    return forms[0 if n == 1 else 1].format(n=n, **values)


def _user_event(action: str, text: str, d: Mapping[str, Any], event_id: int | None,
                subjects: Mapping[int, Subject]) -> str | None:
    subject = subjects.get(event_id) if event_id is not None else None
    if subject is None:  # the detail alone: the sign-in name it holds
        try:
            said = json.loads(text)
            login = str(said["name"])
        except (ValueError, TypeError, KeyError):
            return None
        subject = Subject(login, login, "")
    key = {"user.disable": "user_disabled", "user.passwd": "user_password",
           "user.profile": "user_added" if subject.command == "diferida users add"
           else "user_profile"}.get(action)
    return d[key].format(name=subject.name, login=subject.login) if key else None


def _field_name(name: str, lang: str, d: Mapping[str, Any]) -> str | None:
    name = name.split(".", 1)[0]  # a note per warning: "acknowledgement.<warning>"
    own = view.words(lang)["application"]["fields"].get(name)
    if own:
        return str(own[0])[:1].lower() + str(own[0])[1:]
    return d["fields"].get(name)


def _refused(rest: str, lang: str, d: Mapping[str, Any]) -> str | None:
    """A refusal's detail: its code, and the fields it names ("field:code")."""
    m = re.fullmatch(r"exists, (\d+) rows \(participants with a case\)", rest)
    if m:
        return plural(d["import_exists"], int(m[1]))
    if rest == "no letter in that language":
        return d["no_letter"]
    head, _, tail = rest.partition(" ")
    code = None if ":" in head or "," in head else head
    pairs = tail if code is not None else rest
    fields: list[str] = []
    for item in re.split(r",\s*", pairs) if pairs else []:
        name, colon, _ = item.partition(":")
        if not colon:
            return None
        if name in ("None", ""):
            continue
        named = _field_name(name, lang, d)
        if named is None:
            return None
        if named not in fields:
            fields.append(named)
    parts = []
    if code is not None:
        why = d["why"].get(code)
        if why is None:
            return None
        parts.append(d["refused"].format(why=why))
    if fields:
        parts.append(d["refused_fields"].format(fields=d["and"].join(fields)))
    return " ".join(parts) or None


def _version(m: re.Match[str], lang: str, d: Mapping[str, Any]) -> str:
    if m["corrects"]:
        return d["version_corrects"].format(version=m["version"], corrects=m["corrects"])
    return d["version"].format(version=m["version"])


def _checked(codes: str, lang: str, d: Mapping[str, Any]) -> str | None:
    names = [c.strip() for c in codes.split(",") if c.strip()]
    if not names or any(c not in workflow.CHECK_WARNINGS for c in names):
        return None
    return d["checked"].format(warnings=workflow.check_names(names, lang))


def _approved(m: re.Match[str], lang: str, d: Mapping[str, Any]) -> str | None:
    said = d["approved"].format(sha=m["sha"])
    if m["checks"]:
        checked = _checked(m["checks"], lang, d)
        if checked is None:
            return None
        said += " " + checked
    return said


def _filters(m: re.Match[str], lang: str, d: Mapping[str, Any]) -> str | None:
    named = []
    for item in m["filters"].split(", "):
        if item == "none":
            continue
        if item == "reads folded":
            named.append(d["folded"])
        elif item in d["filters_named"]:
            named.append(d["filters_named"][item])
        else:
            return None
    if m["page"]:
        named.append(d["page"].format(page=m["page"]))
    return d["filters"].format(filters=d["and"].join(named)) if named else d["filters_none"]


def _verified(m: re.Match[str], lang: str, d: Mapping[str, Any]) -> str:
    return plural(d["verify_ok" if m["result"] == "intact" else "verify_bad"], int(m["n"]))


def _needs(m: re.Match[str], lang: str, d: Mapping[str, Any]) -> str | None:
    roles = view.words(lang)["roles"]
    named = [roles.get(r) for r in m["roles"].split(" or ")]
    if any(r is None for r in named):
        return None
    return d["needs"].format(roles=d["or"].join(str(r) for r in named))


def _const(key: str) -> Callable[[re.Match[str], str, Mapping[str, Any]], str]:
    return lambda m, lang, d: d[key]


FORMS: list[tuple[re.Pattern[str], Callable[[re.Match[str], str, Mapping[str, Any]],
                                             str | None]]] = [
    (re.compile(r"version (?P<version>\d+)(?:, (?:corrects|supersedes) (?P<corrects>\d+))?"),
     _version),
    (re.compile(r"(?P<rows>\d+) rows: (?P<drafts>\d+) drafts, (?P<rejected>\d+) rejected"),
     lambda m, lang, d: d["import_rows"].format(**m.groupdict())),
    (re.compile(r"(?P<drafts>\d+) drafts: cases (?P<first>\d+)-(?P<last>\d+), version 1"),
     lambda m, lang, d: d["import_drafts"].format(**m.groupdict())),
    (re.compile(r"acknowledged warnings: (?P<checks>.+)"),
     lambda m, lang, d: _checked(m["checks"], lang, d)),
    (re.compile(r"letter sha256 (?P<sha>[0-9a-f]{64})(?:; acknowledged warnings: (?P<checks>.+))?"),
     _approved),
    (re.compile(r"issued letter \(html\)"), _const("letter_issued_html")),
    (re.compile(r"draft letter \(html\)"), _const("letter_draft_html")),
    (re.compile(r"issued letter"), _const("letter_issued")),
    (re.compile(r"draft letter"), _const("letter_draft")),
    (re.compile(r"history"), _const("history")),
    (re.compile(r"(?P<kind>cases|events|summary) (?P<fmt>csv|xlsx): (?P<n>\d+) rows"),
     lambda m, lang, d: plural(d["export"], int(m["n"]), kind=d["kinds"][m["kind"]],
                               fmt="CSV" if m["fmt"] == "csv" else ".xlsx")),
    (re.compile(r"by (?P<by>case number|participant id|case number and participant id): "
                r"(?P<n>\d+) found"),
     lambda m, lang, d: plural(d["search"], int(m["n"]), by=d["by"][m["by"]])),
    (re.compile(r"filters: (?P<filters>.+?)(?:; page (?P<page>\d+))?"), _filters),
    (re.compile(r"(?P<result>intact|TAMPERING DETECTED); (?P<n>\d+) findings(?:; chains: .*)?"),
     _verified),
    (re.compile(r"workbench"), _const("workbench")),
    (re.compile(r"workbench; the form kept at the session's end shown again"),
     _const("workbench_kept")),
    (re.compile(r"workbench sign-in refused"), _const("signin_refused")),
    (re.compile(r"no token"), _const("no_token")),
    (re.compile(r"unknown or disabled token"), _const("bad_token")),
    (re.compile(r"too many failed attempts from this client"), _const("too_many")),
    (re.compile(r"needs (?P<roles>[a-z]+(?: or [a-z]+)*)"), _needs),
    (re.compile(r"(?P<n>\d+) cases: [0-9,]*"),
     lambda m, lang, d: plural(d["listed"], int(m["n"]))),
    (re.compile(r"identical"), _const("identical")),
    (re.compile(r"decision identical, texts differ"), _const("texts_differ")),
    (re.compile(r"DIFFERENT"), _const("different")),
    (re.compile(r"no such case"), _const("no_such_case")),
]
