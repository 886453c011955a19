"""The calculator's form: what was typed, what the core is given, what the
core said back, and the years-and-months helper.

The form's inputs are named after the rules §1 fields, so a value goes to
`diferida.evaluate` exactly as typed (the core trims and validates it); the
page never parses, rounds or defaults a participant's value itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

import diferida
from diferida.compare.person import PersonComparison, compare_person
from diferida.determination import Determination, plain
from diferida.fields import FIELD_NAMES, SERVICE_PLACES
from diferida.rules import builtin_names, illustrative, load_rules
from diferida.validation import asks_deferred_right
from diferida.words import error_message

from . import lenient
from .drafts import MAX_VALUE_CHARS
from .labels import labels, plural

DEFAULT_RULES = "article19"
HELPER_YEARS, HELPER_MONTHS = "svc_years", "svc_months"
# Inputs the page accepts besides the rules §1 fields.
# `compare`: a second rules set to compare the answer with (empty = none).
PAGE_FIELDS = ("rules", "compare", HELPER_YEARS, HELPER_MONTHS)
# A date is typed in three boxes (web/lenient.py): "birth_date-day",
# "birth_date-month", "birth_date-year"; a date posted whole is read too.
DATE_BOXES = lenient.box_names(lenient.DATE_FIELDS)
KNOWN = frozenset((*FIELD_NAMES, *PAGE_FIELDS, *DATE_BOXES))

# The order in which the form shows its fields; errors are listed in this order.
FORM_ORDER = (
    "birth_date", "entry_date", "separation_date", "creditable_service_years", HELPER_YEARS,
    HELPER_MONTHS, "average_compensation", "group", "refund_requested", "deferred_right_1960",
    "requested_start_date", "as_of", "rules", "compare", "participant_id",
)
RADIOS = {"group": ("general", "police", "firefighter"), "refund_requested": ("true", "false"),
          # an error on this field is a declared "true" the entry date refutes
          "deferred_right_1960": ("true", "derive", "false")}
_WHOLE = re.compile(r"^[0-9]{1,3}$")
MONTHS_A_YEAR = 12


def input_id(name: str, boxes: tuple[str, ...] = ()) -> str:
    """The id a message links to: the input, a radio group's first option,
    or a date's box in error (its day box when none is named)."""
    if name in RADIOS:
        return f"f-{name}-{RADIOS[name][0]}"
    if name in lenient.DATE_FIELDS:
        return f"f-{name}-{(boxes or ('day',))[0]}"
    return f"f-{name}"


@dataclass
class FormState:
    """Everything one rendering of the calculator needs."""

    lang: str
    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    note: str | None = None  # what the years-and-months helper did
    determination: Determination | None = None
    # the same case under the rules set of "compare with", when one was chosen
    comparison: PersonComparison | None = None
    # What was just done ("calculate" or "convert"): where a page loaded
    # without the script puts the keyboard focus (the answer, or the messages).
    focus: str | None = None
    # The values as the core read them (web/lenient.py), and notes on what was
    # read with a change the person must see ("22 años y 5 meses" = 22.4167)
    core: dict[str, str] | None = None
    result_url: str | None = None  # the answer's own page (web/drafts.py)
    notice: str | None = None  # a word about the page itself (an expired answer)
    notes: dict[str, str] = field(default_factory=dict)
    # a date's boxes in error, the one its message names first (web/lenient.py)
    boxes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the date typed in the scenario panel ("Otra fecha"), kept with the
    # answer's token so that its row is on the answer's page and its printout
    scenario_date: str = ""
    # the month-first guard (web/lenient.py): a date of two readings for its
    # writer, asked before any answer is given: (month first, as the boxes say)
    questions: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message[:1].upper() + message[1:])

    @property
    def summary(self) -> list[dict[str, str]]:
        """The errors in form order, each with the label of its field and a link."""
        t = labels(self.lang, self.rules_name)
        out = []
        order = [n for n in FORM_ORDER if n in self.errors]
        order += [n for n in self.errors if n not in FORM_ORDER]
        for name in order:
            label = _label(t, name)
            for message in self.errors[name]:
                out.append({"href": "#" + input_id(name, self.boxes.get(name, ())),
                            "label": label, "message": message})
        return out

    @property
    def asked(self) -> list[dict[str, Any]]:
        """The month-first guard's questions, one line a date, in form order."""
        t = labels(self.lang, self.rules_name)
        order = [n for n in FORM_ORDER if n in self.questions]
        return lenient.asked({n: self.questions[n] for n in order}, t["lenient"], self.lang,
                             {n: _label(t, n) for n in order})

    @property
    def rules(self) -> str:
        return self.values.get("rules") or DEFAULT_RULES

    @property
    def compare(self) -> str:
        """The rules set to compare with; "" for none."""
        return self.values.get("compare", "").strip()

    @property
    def asks_1960(self) -> bool:
        """Regla 19.6's question matters only for a first entry on or before
        its cut-off date (a later entry makes the answer "no"); it is asked
        then, or when it was answered or is in error."""
        if self.errors.get("deferred_right_1960") or self.values.get(
                "deferred_right_1960", "").strip():
            return True
        if not lenient.typed_date(self.values, "entry_date"):
            return False
        entry = lenient.read(self.values, labels(self.lang, self.rules_name),
                             ("entry_date",)).values.get("entry_date")
        # the engine's own condition (validation.asks_deferred_right)
        return asks_deferred_right(None if entry is None else date.fromisoformat(entry),
                                   load_rules(self.rules_name))

    @property
    def advanced_open(self) -> bool:
        """The analyst's options are shown when one was used or is in error."""
        return bool(lenient.typed_date(self.values, "as_of") or self.compare) or (
            self.rules != DEFAULT_RULES) or any(
                k in self.errors for k in ("as_of", "rules", "compare"))

    @property
    def rules_name(self) -> str:
        """The rules the page's words come from: the ones asked for, when
        shipped with the package (a typed path never reaches the loader)."""
        return self.rules if self.rules in builtin_names() else DEFAULT_RULES


def _label(t: dict[str, Any], name: str) -> str:
    if name == HELPER_YEARS:
        return f"{t['converter']['legend']} {t['converter']['years']}"
    if name == HELPER_MONTHS:
        return f"{t['converter']['legend']} {t['converter']['months']}"
    entry = t["fields"].get(name)
    return entry["label"] if entry else name


def read_values(items: Mapping[str, Any]) -> dict[str, str]:
    """The form's own inputs, as typed; anything else posted is not ours."""
    return {k: str(v) for k, v in items.items() if k in KNOWN and isinstance(v, str)}


# Unicode's control characters (category Cc): C0, DEL and C1.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def read_form(items: Mapping[str, Any], lang: str) -> FormState:
    """The posted form as a state to evaluate: its own inputs as typed,
    except what cannot be kept. A value longer than MAX_VALUE_CHARS (a post
    can carry about a megabyte in each field) is neither kept nor shown back:
    the field gets a message saying so. A reference holding a control
    character (a tab or a line break inside it) is refused as the API refuses
    such an id. Either way nothing is calculated, so nothing is remembered."""
    values = read_values(items)
    t = labels(lang)["form"]
    state = FormState(lang=lang)
    for name, value in values.items():
        if len(value) > MAX_VALUE_CHARS:
            if name in DATE_BOXES:  # the date's message, naming its box
                name, _, part = name.rpartition("-")
                state.boxes[name] = (*state.boxes.get(name, ()), part)
            state.add_error(name, t["too_long"].format(limit=MAX_VALUE_CHARS))
            continue
        control = _CONTROL.search(value.strip()) if name == "participant_id" else None
        if control is not None:
            state.add_error(name, t["control_character"].format(
                char=f"U+{ord(control.group()):04X}"))
            continue
        state.values[name] = value
    # a date posted whole with one reading goes into its boxes (web/lenient.py)
    lenient.split_whole(state.values, lenient.DATE_FIELDS, labels(lang)["lenient"])
    # a choice of the month-first guard writes its date in the boxes with the
    # month by its name (web/lenient.py): the boxes the form shows from then on
    choice = items.get(lenient.CHOICE)
    if isinstance(choice, str) and len(choice) <= MAX_VALUE_CHARS:
        lenient.choose(state.values, choice, labels(lang)["lenient"])
    return state


def settle_dates(state: FormState, typed_in: str) -> None:
    """The dates typed on the page of `typed_in`, now shown in the state's
    language (the language switch): each keeps the reading it had there
    (web/lenient.py `settle`)."""
    lenient.settle(state.values, lenient.DATE_FIELDS, labels(typed_in)["lenient"],
                   labels(state.lang)["lenient"])


def participant(values: Mapping[str, str]) -> dict[str, str]:
    """rules §1 fields for the core, as typed (a date's boxes in one text,
    "3/julio/1991"); an empty input is an absent value."""
    out = {}
    for k in FIELD_NAMES:
        text = lenient.typed_date(values, k) if k in lenient.DATE_FIELDS else values.get(k, "")
        if text.strip() != "":
            out[k] = text
    return out


def typed_inputs(values: Mapping[str, str]) -> dict[str, str]:
    """The form's own inputs of the rules §1 fields as typed, each date as
    its three boxes: what a hidden copy of the form carries to the next page,
    so that the boxes there show what was typed."""
    out: dict[str, str] = {}
    for k in FIELD_NAMES:
        boxes = lenient.date_boxes(values, k) if k in lenient.DATE_FIELDS else None
        if boxes is not None:
            if any(b.strip() for b in boxes):
                out.update(zip(lenient.box_names((k,)), boxes, strict=True))
        elif values.get(k, "").strip() != "":
            out[k] = values[k]
    return out


def _ym_text(lang: str, years: int, months: int) -> str:
    c = labels(lang)["converter"]
    parts = [plural(c["year"], years)]
    if months:
        parts.append(plural(c["month"], months))
    return c["join"].join(parts)


def convert(state: FormState) -> FormState:
    """Years and months to years with at most SERVICE_PLACES decimals, put
    into the service input for the person to see and confirm.

    months/12 has an exact decimal of 4 places only when months is a
    multiple of 3; otherwise the value put in the field is rounded half up
    and the note says so, with the exact fraction (nothing rounded unseen)."""
    c = labels(state.lang)["converter"]
    if HELPER_YEARS in state.errors or HELPER_MONTHS in state.errors:
        return state  # refused as posted (too long): its message says so
    y_raw = state.values.get(HELPER_YEARS, "").strip()
    m_raw = state.values.get(HELPER_MONTHS, "").strip()
    if not y_raw and not m_raw:
        state.add_error(HELPER_YEARS, c["nothing"])
        return state
    if y_raw and not _WHOLE.match(y_raw):
        state.add_error(HELPER_YEARS, c["bad_years"])
    if m_raw and not (_WHOLE.match(m_raw) and int(m_raw) < MONTHS_A_YEAR):
        state.add_error(HELPER_MONTHS, c["bad_months"])
    if state.errors:
        return state
    # An empty box next to a filled one reads as zero; the note shows the sum.
    years, months = int(y_raw or 0), int(m_raw or 0)
    units = 10**SERVICE_PLACES
    q, r = divmod(months * units, MONTHS_A_YEAR)
    rounded = q + (1 if 2 * r >= MONTHS_A_YEAR else 0)
    value = plain(Decimal(years) + Decimal(rounded) / units)
    state.values["creditable_service_years"] = value
    ym = _ym_text(state.lang, years, months)
    if r == 0:
        state.note = c["exact"].format(ym=ym, value=value)
    else:
        frac = Fraction(months, MONTHS_A_YEAR)
        exact = Decimal(years * frac.denominator + frac.numerator) / frac.denominator
        shown = f"{years} {frac.numerator}/{frac.denominator} ({exact:.6f}…)"
        state.note = c["rounded"].format(ym=ym, fraction=shown, value=value)
    return state


def offered(name: str) -> bool:
    """A rules set the page offers: shipped with the package (a path typed
    into a web form must never reach the rules loader) and not illustrative
    (a reform that is not law is never offered to decide, or to compare, a
    person's case)."""
    return name in builtin_names() and not illustrative(name)


def evaluate(state: FormState) -> FormState:
    """Ask the core; keep its answer or its messages, each by its field.
    With "compare with", the same fields are evaluated under that rules set
    too, and the two answers compared (diferida.compare.person, the same
    comparison as `diferida evaluate … --rules A --rules B`)."""
    t = labels(state.lang, state.rules_name)
    # fields refused as posted (read_form) are absent for the core: its
    # "missing" would only repeat what their own message says
    refused = set(state.errors)
    rules = state.rules
    if not offered(rules):
        state.add_error("rules", t["fields"]["rules"]["unknown"].format(value=rules))
        rules = DEFAULT_RULES
    other = state.compare or None
    if other is not None and not offered(other):
        state.add_error("compare", t["fields"]["compare"]["unknown"].format(value=other))
        other = None
    elif other is not None and other == state.rules:
        state.add_error("compare", t["fields"]["compare"]["same"].format(
            reading=t["fields"]["rules"]["options"].get(other, other)))
        other = None
    # the page reads numbers and dates as people write them (web/lenient.py);
    # a value it cannot read goes to the core as typed, so the core names
    # every other problem too, and the page's own message is the one shown
    typed = participant(state.values)
    reading = lenient.read(state.values, t, [n for n in FIELD_NAMES if n not in refused])
    state.core, state.notes = reading.values, reading.notes
    state.boxes = {**state.boxes, **reading.boxes}
    # a date the month-first guard asks is not given to the core: no answer
    # is made of a reading the person has not chosen, and the core's words on
    # that date (it is "missing") are not shown; the other fields are checked
    state.questions = reading.questions
    given = {k: v for k, v in {**typed, **reading.values}.items() if k not in reading.questions}
    comparison = None
    try:
        d = diferida.evaluate(given, rules=rules, lang=state.lang)
        if other is not None:
            comparison = compare_person(d, diferida.evaluate(given, rules=other,
                                                             lang=state.lang))
    except diferida.InputError as exc:
        d = None
        for p in exc.problems:
            if p.field not in reading.errors and p.field not in refused \
                    and p.field not in reading.questions:
                state.add_error(p.field, error_message(state.lang, p.code, p.value, p.field))
    for name, message in reading.errors.items():
        state.add_error(name, message)
    service_typed = state.values.get("creditable_service_years", "").strip()
    helper_typed = [state.values.get(n, "").strip() for n in (HELPER_YEARS, HELPER_MONTHS)]
    if not service_typed and any(helper_typed) and all(
        not v or _WHOLE.match(v) for v in helper_typed
    ):
        ym = _ym_text(state.lang, int(helper_typed[0] or 0), int(helper_typed[1] or 0))
        state.add_error("creditable_service_years", t["converter"]["unused"].format(ym=ym))
    if not state.errors and not state.questions:
        state.determination = d
        state.comparison = comparison
    return state
