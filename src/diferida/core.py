"""The public entry points: one participant, or a whole table of them.

Both go through the same path — `validation.validate` then
`article19.determine` over a Polars table — so a participant evaluated alone
and inside a million-row file get the same answer by construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from . import article19
from .determination import Determination
from .errors import DiferidaError
from .explain import explain, formula_of, headline, law_words
from .fields import FIELD_NAMES
from .i18n import DATE_VALUES, DEFAULT_LANG, msg, written_date
from .money import cents_to_decimal
from .rules import Rules, load_rules
from .speed.plan import PreparedPlans
from .speed.unstable import small_collect_options
from .validation import (
    ERROR_CODES,
    PID_HASH,
    ROW,
    shared_validation,
    split_errors,
    unknown_field_errors,
    validate_lazy,
)
from .words import error_message, error_text, field_label

RulesArg = str | Path | Rules | None


@dataclass(frozen=True)
class Participant:
    """One participant as rules §1 describes it. Values may be typed (date,
    Decimal, bool) or text in the file formats; either way they are validated."""

    birth_date: date | str | None = None
    entry_date: date | str | None = None
    separation_date: date | str | None = None
    creditable_service_years: Decimal | int | str | None = None
    average_compensation: Decimal | int | str | None = None
    group: str | None = None
    refund_requested: bool | str | None = None
    deferred_right_1960: bool | str | None = None
    requested_start_date: date | str | None = None
    participant_id: str | None = None
    as_of: date | str | None = None


@dataclass(frozen=True)
class Problem:
    """One bad field: where, which, what was given, why."""

    field: str
    code: str
    value: str | None
    message: str
    row: int | None = None
    participant_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "code": self.code, "value": self.value,
                "message": self.message, "row": self.row, "participant_id": self.participant_id}


class InputError(DiferidaError, ValueError):
    """The input cannot be evaluated; `problems` names every bad field."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))


@dataclass
class FrameResult:
    """`determinations`: one row per valid input row, in input order, with the
    input's other columns carried through. `rejected`: one row per bad field
    of each rejected row (`row` is the 0-based position in the input)."""

    determinations: pl.DataFrame
    rejected: pl.DataFrame
    rows_in: int
    rules: Rules

    @property
    def rows_rejected(self) -> int:
        return self.rejected["row"].n_unique() if self.rejected.height else 0

    def check_accounting(self) -> None:
        """Rows in = rows determined + rows rejected, or fail loudly."""
        if self.rows_in != self.determinations.height + self.rows_rejected:
            raise AssertionError(
                f"row accounting broken: {self.rows_in} in, {self.determinations.height} "
                f"determined, {self.rows_rejected} rejected"
            )


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()  # not a date: validation will say so
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    return str(value)


def text_row(participant: Participant | Mapping[str, Any]) -> tuple[dict[str, str | None], list]:
    """The rules §1 fields given, as text, and the names of keys that are not fields."""
    if isinstance(participant, Participant):
        data = {f.name: getattr(participant, f.name) for f in fields(participant)}
        data = {k: v for k, v in data.items() if v is not None}
    else:
        data = dict(participant)
    unknown = [k for k in data if k not in FIELD_NAMES]
    return {k: _as_text(v) for k, v in data.items() if k in FIELD_NAMES}, unknown


def participant_frame(participant: Participant | Mapping[str, Any]) -> tuple[pl.DataFrame, list]:
    """A one-row table of text from a Participant or a mapping of rules §1 fields,
    and the names of keys that are not fields."""
    row, unknown = text_row(participant)
    if not row:  # still one participant, with every field missing
        row = {"participant_id": None}
    # from_dicts: one row built in one call (a DataFrame from a dict of
    # lists builds a Series per column, several times slower)
    return pl.from_dicts([row], schema={k: pl.String for k in row}), unknown


def _rejected(errors: pl.DataFrame, lang: str, rules: Rules | None = None) -> pl.DataFrame:
    """Error rows with their message, "<label> (<field>): <why>", in `lang`;
    the law's words in labels and messages come from `rules`."""
    words = law_words(load_rules(rules), lang)
    labels = {f: f"{field_label(lang, f, words)} ({f}): " for f in FIELD_NAMES}
    # one message per (field, code): some agree with their field
    texts = {f"{f}|{code}": error_text(lang, code, f, words)
             for f in FIELD_NAMES for code in ERROR_CODES}
    # a date the message compares is written out (`value_text`), once per value
    dated = errors.filter(pl.col("code").is_in(DATE_VALUES))["value"].unique().drop_nulls()
    shown = pl.col("value").fill_null("")
    if dated.len():
        written = {v: written_date(v, lang) for v in dated.to_list()}
        shown = pl.when(pl.col("code").is_in(DATE_VALUES)).then(
            shown.replace(written)).otherwise(shown)
    return errors.select(
        pl.col(ROW).alias("row"), "participant_id", "field", "code", "value",
        pl.concat_str(
            pl.col("field").replace_strict(labels, default=pl.col("field") + ": "),
            pl.concat_str(pl.col("field"), pl.lit("|"), pl.col("code"))
            .replace_strict(texts, default=pl.col("code"), return_dtype=pl.String)
            .str.replace("{value}", shown, literal=True),
        ).alias("message"),
    )


def _today() -> date:
    return date.today()


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def date_argument(value: Any, name: str = "as_of", lang: str = DEFAULT_LANG) -> date | None:
    """A date argument of the Python API (`as_of`): a `datetime.date`, or
    its ISO text "YYYY-MM-DD", read as that date; None stays None (today).
    Anything else is refused naming the argument (ValueError for text that
    is not an ISO date, TypeError for another kind of value), never guessed:
    "03/12/2026" could be either of two days."""
    if value is None:
        return None
    if isinstance(value, datetime):  # a datetime is a date too: its time would be dropped
        raise TypeError(msg(lang, "api_arguments", "not_a_date_type", name=name,
                            kind=type(value).__name__))
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _ISO_DATE.fullmatch(text):
            try:
                return date.fromisoformat(text)
            except ValueError:
                pass
        raise ValueError(msg(lang, "api_arguments", "not_an_iso_date", name=name, value=value))
    raise TypeError(msg(lang, "api_arguments", "not_a_date_type", name=name,
                        kind=type(value).__name__))


SMALL_TABLE = 1_000  # rows; below this, planning costs more than computing


def _small(frame: pl.DataFrame | pl.LazyFrame) -> bool:
    return isinstance(frame, pl.DataFrame) and frame.height < SMALL_TABLE


def _collect_options(frame: pl.DataFrame | pl.LazyFrame) -> dict:
    """A few rows (one web or API request) run fastest on the in-memory engine
    without the optimiser, each stage's expressions one after the other: the
    stages are already explicit, so the optimiser has nothing to gain there,
    and the thread pool only adds hand-overs (`speed.unstable`: Polars calls
    its optimiser flags unstable). Large tables keep Polars' defaults."""
    if _small(frame):
        return small_collect_options()
    return {}


def run(
    frame: pl.DataFrame, *, as_of: date | None = None, rules: RulesArg = None,
    require_id: bool = True, keep: list[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, Rules]:
    """Validate and determine; returns (result frame, errors, rules). The
    building block of everything. The result has every intermediate column
    (what explanations read), or with `keep` only those columns — then
    Polars skips computing what nothing reads."""
    r = load_rules(rules)
    day = date_argument(as_of) or _today()
    seq = _small(frame)

    def build(lf: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
        plan = article19.determine(
            validate_lazy(lf, r, day, require_id, sequential=seq), r, sequential=seq)
        return plan if keep is None else plan.select(_kept(frame, require_id, keep))

    if seq:  # a few rows: the plan prepared once per shape (see plan.Prepared)
        key = (tuple(zip(frame.columns, frame.dtypes, strict=True)), r.version, day, require_id,
               None if keep is None else tuple(keep))
        typed = _PREPARED.collect(key, frame, build, **_collect_options(frame))
    else:
        typed = build(frame).collect(**_collect_options(frame))
    v = split_errors(typed, valid_only=True)
    return v.typed, v.errors, r


_PREPARED = PreparedPlans(32)  # about 1 MiB each


def _kept(frame: pl.DataFrame, require_id: bool, keep: list[str]) -> list[str]:
    """The columns a plan keeps: what `split_errors` reads, then `keep`."""
    needed = [ROW, "_ok", *[f"_{kind}_{k}" for k in FIELD_NAMES for kind in ("raw", "err")]]
    if require_id and "participant_id" in frame.columns:
        needed.append(PID_HASH)
    return list(dict.fromkeys([*needed, *keep]))


MONEY = pl.Decimal(20, 2)
OUTPUT_NAMES = tuple(c.replace("_cents", "_amount") for c in article19.RESULT_COLUMNS)


def public_columns(full: pl.DataFrame, carry: list[str],
                   inputs: tuple[str, ...] = ()) -> pl.DataFrame:
    """The determination columns (rules §7) plus the input's own extra columns
    (and `inputs`, typed input fields, last); amounts as exact decimals with 2
    places."""
    amounts = {"annual_cents": "annual_amount", "monthly_cents": "monthly_amount"}
    return full.select(
        *carry,
        *[
            (pl.col(c).cast(MONEY) / 100).cast(MONEY).alias(amounts[c]) if c in amounts
            else pl.col(c)
            for c in article19.RESULT_COLUMNS if c not in carry
        ],
        *inputs,
    )


def evaluate_frame(
    frame: pl.DataFrame, *, as_of: date | str | None = None, rules: RulesArg = None,
    lang: str = DEFAULT_LANG, require_id: bool = True, inputs: tuple[str, ...] = (),
) -> FrameResult:
    """Evaluate every row of a table of participants (columns named as the
    rules §1 fields, in any dtypes). Rows that fail validation are returned in
    `rejected` with a message per bad field; the others in `determinations`.
    `inputs`: rules §1 fields to add to the determinations as validated and
    typed (a projection needs the birth date and the group)."""
    as_of = date_argument(as_of, "as_of", lang)
    unknown = [f for f in inputs if f not in FIELD_NAMES or f in OUTPUT_NAMES]
    if unknown:
        raise ValueError(f"inputs must be input fields not in the result: {unknown}")
    hidden, carry = _carried(frame, lang)
    full, errors, r = run(frame.rename(hidden), as_of=as_of, rules=rules, require_id=require_id,
                          keep=[*carry, *article19.RESULT_COLUMNS, *inputs])
    return _frame_result(full, errors, r, frame.height, carry, hidden, inputs, lang)


def _carried(frame: pl.DataFrame, lang: str) -> tuple[dict[str, str], list[str]]:
    """The input's own columns travel under reserved names, so one named like
    a working column of the engine ("covered", "status") is never touched:
    (their hidden names, the columns a result carries)."""
    extra = [c for c in frame.columns if c not in FIELD_NAMES]
    clashes = [c for c in extra if c in OUTPUT_NAMES or c == ROW]
    if clashes:
        raise InputError([Problem(c, "reserved_column", c,
                                  error_message(lang, "reserved_column", c)) for c in clashes])
    hidden = {c: f"\x00carried{i}" for i, c in enumerate(extra)}
    return hidden, ["participant_id", *hidden.values()]  # participant_id: null when not given


def _frame_result(full: pl.DataFrame, errors: pl.DataFrame, r: Rules, rows_in: int,
                  carry: list[str], hidden: dict[str, str], inputs: tuple[str, ...],
                  lang: str) -> FrameResult:
    out = public_columns(full, carry, tuple(inputs)).rename({v: k for k, v in hidden.items()})
    result = FrameResult(out, _rejected(errors, lang, r), rows_in, r)
    result.check_accounting()
    return result


def run_pair(
    frame: pl.DataFrame, *, as_of: date | None = None, rules_a: RulesArg = None,
    rules_b: RulesArg = None, require_id: bool = True, keep: list[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, Rules, Rules]:
    """`run` under two rule sets over the same rows, for a comparison:
    (result A, result B, errors, rules A, rules B). A row is rejected under
    both when either rejects it, so both results hold the same rows. Rules
    that validate alike (the same 19.6 cut-off) share one validation, with
    the later of their oldest route ages (so every birthday both count is a
    date)."""
    ra, rb = load_rules(rules_a), load_rules(rules_b)
    day = date_argument(as_of) or _today()
    opts = _collect_options(frame)
    shared = shared_validation(ra, rb)

    def kept(plan: pl.LazyFrame) -> pl.LazyFrame:
        return plan if keep is None else plan.select(_kept(frame, require_id, keep))

    if shared is not None:
        base = validate_lazy(frame, shared, day, require_id).collect(**opts).lazy()
        plans = [kept(article19.determine(base, r)) for r in (ra, rb)]
    else:
        plans = [kept(article19.determine(validate_lazy(frame, r, day, require_id), r))
                 for r in (ra, rb)]
    va, vb = (split_errors(p.collect(**opts)) for p in plans)
    errors = va.errors
    if not vb.errors.equals(va.errors):
        order = {k: i for i, k in enumerate(FIELD_NAMES)}
        errors = (pl.concat([va.errors, vb.errors])
                  .unique(subset=[ROW, "field"], keep="first", maintain_order=True)
                  .sort(pl.col(ROW), pl.col("field").replace_strict(order, return_dtype=pl.Int32)))
    bad = errors.get_column(ROW).unique().implode()
    full_a, full_b = (v.typed.filter(pl.col("_ok") & ~pl.col(ROW).is_in(bad)).drop("_ok")
                      for v in (va, vb))
    return full_a, full_b, errors, ra, rb


def evaluate_pair(
    frame: pl.DataFrame, *, as_of: date | str | None = None, rules_a: RulesArg = None,
    rules_b: RulesArg = None, lang: str = DEFAULT_LANG, require_id: bool = True,
    inputs: tuple[str, ...] = (),
) -> tuple[FrameResult, FrameResult]:
    """`evaluate_frame` under two rule sets (see `run_pair`): the same rows
    determined on both sides, the same rejects."""
    as_of = date_argument(as_of, "as_of", lang)
    hidden, carry = _carried(frame, lang)
    full_a, full_b, errors, ra, rb = run_pair(
        frame.rename(hidden), as_of=as_of, rules_a=rules_a, rules_b=rules_b,
        require_id=require_id, keep=[*carry, *article19.RESULT_COLUMNS, *inputs])
    return (_frame_result(full_a, errors, ra, frame.height, carry, hidden, inputs, lang),
            _frame_result(full_b, errors, rb, frame.height, carry, hidden, inputs, lang))


def codes(joined: str | None) -> list[str]:
    """The engine keeps lists of codes as ';'-joined text; as a Python list."""
    return [c for c in (joined or "").split(";") if c]


def determination_from_row(row: dict[str, Any], rules: Rules, lang: str) -> Determination:
    row = {**row, **{k: codes(row[k]) for k in ("reasons", "routes_met", "warnings")}}
    formula = formula_of(row, rules) if row["status"] != "not_entitled" else None
    return Determination(
        participant_id=row["participant_id"],
        status=row["status"],
        reasons=row["reasons"],
        regime=row["regime"],
        eligibility_date=row["eligibility_date"],
        route=row["route"],
        routes_met=list(row["routes_met"]),
        start_date=row["start_date"],
        premature_request=bool(row["premature_request"]),
        annual_amount=cents_to_decimal(row["annual_cents"]),
        monthly_amount=cents_to_decimal(row["monthly_cents"]),
        minimum_applied=bool(row["minimum_applied"]),
        warnings=list(row["warnings"]),
        rules_version=row["rules_version"],
        rules_name=rules.name,
        rules_title=rules.title,
        rules=rules,
        deferred_right_1960=bool(row["deferred_right_1960"]),
        deferred_right_1960_source=(
            "declared" if row["deferred_right_1960_declared"] else "derived"),
        as_of=row["as_of"],
        headline=headline(row, rules, lang),
        explanation=explain(row, rules, lang, formula),
        formula=formula,
        lang=lang,
    )


def evaluate(
    participant: Participant | Mapping[str, Any], *, as_of: date | str | None = None,
    rules: RulesArg = None, lang: str = DEFAULT_LANG,
) -> Determination:
    """Evaluate one participant. Raises InputError naming every bad field.
    `as_of`: a `datetime.date` or its ISO text "YYYY-MM-DD" (default today)."""
    as_of = date_argument(as_of, "as_of", lang)
    frame, unknown = participant_frame(participant)
    full, errors, r = run(frame, as_of=as_of, rules=rules, require_id=False)
    if unknown:
        errors = pl.concat([errors, unknown_field_errors(unknown)])
    if errors.height:
        rej = _rejected(errors, lang, r)
        raise InputError([Problem(e["field"], e["code"], e["value"], e["message"])
                          for e in rej.iter_rows(named=True)])
    return determination_from_row(full.row(0, named=True), r, lang)
