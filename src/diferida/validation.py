"""rules §1 validation, written once as column expressions.

`validate(frame)` takes a table of participants in any dtypes (text from a
CSV or the CLI, typed columns from Parquet, Excel or Python) and returns the
typed columns of every row plus one error row per bad field. Nothing is
rounded, defaulted or dropped silently: a value either parses exactly or is
reported with the field's name, the value and a message code (messages live
in the i18n catalogs).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from .dates import with_span_exceeds, with_years_exceed
from .fields import BY_NAME, FIELD_NAMES, SERVICE_UNITS
from .rules import GROUPS, Rules
from .speed.plan import Stages

ROW = "_row"  # 0-based position of the row in the input
_MAX_INT_DIGITS = 15  # a plain number's whole digits, read before the field's own limit
# plain numbers: digits, one "."
_DECIMAL_RE = rf"^[+-]?\d{{1,{_MAX_INT_DIGITS}}}(\.\d*)?$"
_DATE_RE = r"^\d{4}-\d{2}-\d{2}$"

# error codes, each with a message in the catalogs (i18n/*.toml, [errors])
ERROR_CODES = (
    "missing",
    "not_a_date",
    "not_a_number",
    "not_a_boolean",
    "negative",
    "too_many_decimals",
    "too_large",
    "not_positive",
    "unknown_group",
    "birth_after_entry",
    "entry_after_separation",
    "service_exceeds_age",
    "deferred_right_after_1960",
    "duplicate_id",
    "unknown_field",
    "not_text",
    "reserved_column",
    "date_out_of_range",
)
# The calendar dates can be computed with: years 1 to 9999 (Python's and
# ISO 8601's ordinary range), for the dates given and for the birthdays the
# rules count from a birth date.
MIN_YEAR, MAX_YEAR = 1, 9999
MAX_DATE = date(MAX_YEAR, 12, 31)


# ---- Regla 19.6's condition (rules §6 Decision): its one home ---------------
# The engine derives an absent `deferred_right_1960` from the first entry and
# refuses a declared "true" after the cut-off; the calculator's form asks the
# question only where it matters. Both read these two functions, which read
# the date from the rules (`regime.deferred_right_cutoff`).


def deferred_right_derived(entry: pl.Expr, rules: Rules) -> pl.Expr:
    """An absent answer, derived: true exactly when the first entry is on or
    before the rules' 19.6 cut-off (a member that day)."""
    return entry <= pl.lit(rules.deferred_right_cutoff)


def asks_deferred_right(entry: date | None, rules: Rules) -> bool:
    """Whether Regla 19.6's question matters for this first entry: only on or
    before the cut-off (a later entry makes the answer "no", and a declared
    "true" is refused). The same condition as `deferred_right_derived`, for
    one date (tests/test_one_home.py holds the two equal)."""
    return entry is not None and entry <= rules.deferred_right_cutoff


@dataclass
class Validated:
    """`typed`: every input row, typed, with `_row` and `_ok`; `errors`: one
    row per bad field (`_row`, participant_id, field, code, value)."""

    typed: pl.DataFrame
    errors: pl.DataFrame


def _kept_typed(kind: str, dtype: pl.DataType, places: int | None = None) -> bool:
    """A typed column that is read as it is (no text round trip). Its text
    form is made only for the rows that are rejected (`split_errors`). An
    exact decimal is kept when it has no more places than the field (a
    Parquet decimal(10,4) of years of service, decimal(14,2) of dollars)."""
    return (
        (kind == "date" and (dtype == pl.Date or isinstance(dtype, pl.Datetime)))
        or (kind == "bool" and dtype == pl.Boolean)
        or (kind == "decimal" and (dtype.is_integer() or _exact(dtype, places)))
    )


def _exact(dtype: pl.DataType, places: int | None) -> bool:
    return (isinstance(dtype, pl.Decimal) and places is not None
            and (dtype.scale or 0) <= places)


def _raw(name: str, dtype: pl.DataType) -> pl.Expr:
    """The value as given: text with surrounding whitespace removed, or the
    typed column itself when it is read as it is."""
    col = pl.col(name)
    if _kept_typed(BY_NAME[name].kind, dtype, BY_NAME[name].places):
        return col
    if dtype == pl.String:
        return col.str.strip_chars()
    return col.cast(pl.String)


def _blank(raw: pl.Expr) -> pl.Expr:
    return raw.is_null() | (raw == "")


NONE = pl.lit(None, dtype=pl.String)


def _parsed(name: str) -> pl.Expr:
    """The column `_parse_stage` made for the field: its value parsed once,
    read by the value and by the error code (an expression repeated inside
    another is evaluated, and planned, once per repetition)."""
    return pl.col(f"_p_{name}")


def text_units(text: pl.Expr, places: int) -> pl.Expr:
    """A number given as text, as an integer in 1/10**places (Int64): null
    when it is not a number or too large to hold, never an error. It is the
    exact decimal's own scaled integer, so no product can overflow (a
    33-digit number of years did, and failed the whole run where one row had
    to be refused). Digits past `places` are rounded by Polars: callers
    refuse them before they read the value."""
    return (text.cast(pl.Decimal(38, places), strict=False).to_physical()
            .cast(pl.Int64, strict=False))


def _parse_stage(name: str, kind: str, dtype: pl.DataType, raw: pl.Expr) -> list[pl.Expr]:
    """The first parse of a field given as text, each piece a column of its
    own (see `_parsed`): a date, a boolean, a group; for a decimal, whether
    its text is a plain number (`_g_`) and its value in 1/10**places
    (`_p_`). Nothing for a field read as it is (`_kept_typed`)."""
    if _kept_typed(kind, dtype, BY_NAME[name].places) or (
            kind == "date" and isinstance(dtype, pl.Datetime)):
        return []
    value: pl.Expr  # a when/then chain
    if kind == "date":
        value = pl.when(raw.str.contains(_DATE_RE)).then(
            raw.str.to_date("%Y-%m-%d", strict=False))
    elif kind == "decimal":
        places = BY_NAME[name].places or 0
        return [raw.str.contains(_DECIMAL_RE).alias(f"_g_{name}"),
                text_units(raw, places).alias(f"_p_{name}")]
    elif kind == "bool":
        low = raw.str.to_lowercase()
        value = pl.when(low == "true").then(True).when(low == "false").then(False)
    elif kind == "group":
        value = pl.when(raw.is_in(list(GROUPS))).then(raw)
    else:
        return []
    return [value.alias(f"_p_{name}")]


def _parse_date(name: str, dtype: pl.DataType, blank: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(value, error code) for a date field. A date outside the years
    MIN_YEAR..MAX_YEAR (0000-01-01, or a typed date of year 20000) is refused
    whatever the file format."""
    col = pl.col(name)
    if dtype == pl.Date:
        value, err = col, NONE
    elif isinstance(dtype, pl.Datetime):
        # A spreadsheet date arrives as midnight; any other time is not a date.
        has_time = col.dt.time() != pl.time(0, 0, 0)
        value, err = (pl.when(~has_time).then(col.dt.date()),
                      pl.when(has_time).then(pl.lit("not_a_date")))
    else:
        value = _parsed(name)
        err = pl.when(~blank & value.is_null()).then(pl.lit("not_a_date"))
    outside = ~value.dt.year().is_between(MIN_YEAR, MAX_YEAR)
    return (pl.when(~outside).then(value),
            pl.when(outside).then(pl.lit("date_out_of_range")).otherwise(err))


def _parse_decimal(
    name: str, dtype: pl.DataType, places: int, negative: str, digits: int, blank: pl.Expr
) -> tuple[pl.Expr | None, pl.Expr]:
    """(integer in 1/10**places, error code). Trailing zeros are not decimals.
    For text the value is None: `_decimal_value` makes it from the error code.

    The value is read by Polars' exact decimal parser; since that parser
    rounds digits beyond the scale, values with a nonzero digit past `places`
    are rejected before it is used, so nothing is ever rounded."""
    col = pl.col(name)
    if dtype.is_integer():
        large = col.abs() >= 10**digits
        v = col.cast(pl.Int64) * 10**places
        return (pl.when((col >= 0) & ~large).then(v),
                pl.when(large).then(pl.lit("too_large")).when(col < 0).then(pl.lit(negative)))
    if _exact(dtype, places):
        # an exact decimal with no more places than the field: nothing to round
        large = col.abs() >= 10**digits
        fits = pl.when((col >= 0) & ~large).then(col.cast(pl.Decimal(38, places)))
        return ((fits * 10**places).cast(pl.Int64),
                pl.when(large).then(pl.lit("too_large")).when(col < 0).then(pl.lit(negative)))
    raw = pl.col(f"_raw_{name}")
    shape_ok = pl.col(f"_g_{name}")
    too_many = raw.str.contains(rf"\.\d{{{places}}}\d*[1-9]")
    units = _parsed(name)
    # more whole digits than a plain number may have, or than the field
    # allows (fields.py: SERVICE_DIGITS, MONEY_DIGITS), in one pattern
    too_large = raw.str.contains(
        rf"^[+-]?(\d{{{_MAX_INT_DIGITS + 1},}}|0*[1-9]\d{{{digits},}})(\.\d*)?$")
    err = (
        pl.when(blank).then(NONE)
        .when(too_large).then(pl.lit("too_large"))
        .when(~shape_ok | units.is_null()).then(pl.lit("not_a_number"))
        .when(too_many).then(pl.lit("too_many_decimals"))
        .when(units < 0).then(pl.lit(negative))
    )
    return None, err


def _decimal_value(name: str) -> pl.Expr:
    """The value of a decimal field given as text, once its error code is
    known: none when there is one. (A blank field's code is "missing" where
    the field is required and none otherwise; either way it parsed to null.)"""
    return pl.when(pl.col(f"_perr_{name}").is_null()).then(_parsed(name).abs())


def _parse_bool(name: str, dtype: pl.DataType, blank: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    if dtype == pl.Boolean:
        return pl.col(name), NONE
    value = _parsed(name)
    return value, pl.when(~blank & value.is_null()).then(pl.lit("not_a_boolean"))


def validate(
    frame: pl.DataFrame | pl.LazyFrame,
    rules: Rules,
    as_of: date,
    require_id: bool = False,
) -> Validated:
    """Parse and check every rules §1 field of every row, all errors at once."""
    typed = validate_lazy(frame, rules, as_of, require_id).collect()
    return split_errors(typed)


def validate_lazy(
    frame: pl.DataFrame | pl.LazyFrame,
    rules: Rules,
    as_of: date,
    require_id: bool = False,
    *,
    sequential: bool = False,
) -> pl.LazyFrame:
    """The validation plan: typed columns, `_ok`, and per field `_err_<field>`
    (an error code or null) and `_raw_<field>` (the value as given).
    `sequential`: see `Stages.replay`."""
    lf = frame.lazy()
    schema = lf.collect_schema()
    if ROW in schema:
        raise ValueError(f"the input has a column named {ROW!r}, which is reserved")
    key = (tuple((k, str(schema[k])) for k in schema if k in FIELD_NAMES),
           tuple(schema), rules.version, as_of, require_id)
    stages = _STAGES.get(key)
    if stages is None:
        stages = _build_stages(Stages(), schema, rules, as_of, require_id)
        if len(_STAGES) > 256:
            _STAGES.clear()
        _STAGES[key] = stages
    return stages.replay(lf, sequential=sequential)


_STAGES: dict[tuple, Stages] = {}


def _build_stages(
    lf: Stages, schema: pl.Schema, rules: Rules, as_of: date, require_id: bool
) -> Stages:
    present = [k for k in FIELD_NAMES if k in schema]

    # stage 1: raw text of every field (kept for messages), row numbers
    lf = lf.with_columns(
        pl.int_range(0, pl.len(), dtype=pl.UInt32).alias(ROW),
        *[_raw(k, schema[k]).alias(f"_raw_{k}") for k in present],
        *[pl.lit(None, dtype=pl.String).alias(f"_raw_{k}") for k in FIELD_NAMES
          if k not in schema],
    )
    # stage 2: each field given as text parsed once, and whether it is blank
    parsed = [e for k in present
              for e in _parse_stage(k, BY_NAME[k].kind, schema[k], pl.col(f"_raw_{k}"))]
    parsed += [_blank(pl.col(f"_raw_{k}")).alias(f"_b_{k}") for k in present
               if not _kept_typed(BY_NAME[k].kind, schema[k], BY_NAME[k].places)]
    lf = lf.with_columns(parsed)

    # stage 3: typed values (_v_) and parse errors (_perr_)
    values: list[pl.Expr] = []
    perrs: list[pl.Expr] = []
    later: list[pl.Expr] = []
    value: pl.Expr | None  # None: a decimal given as text, valued below
    for name in FIELD_NAMES:
        field = BY_NAME[name]
        raw = pl.col(f"_raw_{name}")
        typed_in = name in schema and _kept_typed(field.kind, schema[name], field.places)
        blank = raw.is_null() if typed_in else pl.col(f"_b_{name}")
        if name not in schema:
            needed = field.required or (name == "participant_id" and require_id)
            # an absent deferred_right_1960 is derived below (rules §6)
            default = {"as_of": pl.lit(as_of, dtype=pl.Date)}.get(name, pl.lit(None))
            absent = {"date": pl.Date, "decimal": pl.Int64,
                      "bool": pl.Boolean}.get(field.kind, pl.String)
            values.append(default.cast(absent).alias(f"_v_{name}"))
            perrs.append((pl.lit("missing") if needed else NONE).alias(f"_perr_{name}"))
            continue
        dtype = schema[name]
        if field.kind == "date":
            value, err = _parse_date(name, dtype, blank)
        elif field.kind == "decimal":
            # rules §1: negative service; compensation must be above zero
            neg = "not_positive" if name == "average_compensation" else "negative"
            value, err = _parse_decimal(name, dtype, field.places or 0, neg,
                                        field.digits or _MAX_INT_DIGITS, blank)
        elif field.kind == "bool":
            value, err = _parse_bool(name, dtype, blank)
        elif field.kind == "group":
            value = _parsed(name)
            err = pl.when(~blank & value.is_null()).then(pl.lit("unknown_group"))
        else:  # text
            value, err = pl.when(~blank).then(raw), NONE
        if field.required or (name == "participant_id" and require_id):
            err = pl.when(blank).then(pl.lit("missing")).otherwise(err)
        if name == "as_of":  # rules §1 default: the evaluation's date
            value = pl.when(blank).then(pl.lit(as_of)).otherwise(value)
        if value is None:  # a decimal given as text: from its error code, below
            later.append(_decimal_value(name).alias(f"_v_{name}"))
            value = pl.lit(None, dtype=pl.Int64)  # holds the column's place
        values.append(value.alias(f"_v_{name}"))
        perrs.append(err.alias(f"_perr_{name}"))
    lf = lf.with_columns(*values, *perrs)
    if later:
        lf = lf.with_columns(later)
    lf = lf.drop([c for c in schema if c in FIELD_NAMES]).drop(
        [e.meta.output_name() for e in parsed]
    )
    rename = {f"_v_{k}": k for k in FIELD_NAMES}
    rename |= {"_v_creditable_service_years": "service_units",
               "_v_average_compensation": "compensation_cents"}
    lf = lf.rename(rename)

    # stage 4: checks between fields, only where both values parsed
    last_birth = pl.lit(_last_birth_date(rules), dtype=pl.Date)
    birth, entry, sep = pl.col("birth_date"), pl.col("entry_date"), pl.col("separation_date")
    # rules §6 Decision (Regla 19.6 read with "o"): a declared value stands; an
    # empty one is derived, true exactly when the first entry is on or before
    # the cut-off (a member that day, or a holder of a deferred right).
    declared = pl.col("deferred_right_1960")
    lf = lf.with_columns(
        declared.is_not_null().alias("deferred_right_1960_declared"),
        pl.coalesce(declared, deferred_right_derived(entry, rules))
        .alias("deferred_right_1960"),
    )
    lf = with_years_exceed(lf, "service_units", SERVICE_UNITS, {
        # exact time lived at separation, or at as_of when not separated (rules §1)
        "_service_over_age": ("birth_date", pl.coalesce(sep, pl.col("as_of"))),
    })
    # rules §7 warning: service longer than entry to separation, the span
    # counted as service is (calendar months, rounded to 4 places). The
    # separation date is the last day of service, so the span counts it
    # (1990-04-01 to 2000-03-31 is exactly 10 years).
    lf = with_span_exceeds(lf, "service_units", SERVICE_UNITS, "service_exceeds_span",
                           "entry_date", sep.dt.offset_by("1d"))
    cross = {
        "average_compensation": pl.when(pl.col("compensation_cents") == 0).then(
            pl.lit("not_positive")),
        # the birthdays the rules count from must be dates too (rules §4)
        "birth_date": pl.when(birth > last_birth).then(
            pl.lit("date_out_of_range")).when(birth > entry).then(pl.lit("birth_after_entry")),
        "entry_date": pl.when(entry > sep).then(pl.lit("entry_after_separation")),
        "creditable_service_years": pl.when(pl.col("_service_over_age")).then(
            pl.lit("service_exceeds_age")),
        "deferred_right_1960": pl.when(
            pl.col("deferred_right_1960") & ~deferred_right_derived(entry, rules)
        ).then(pl.lit("deferred_right_after_1960")),
    }
    if require_id and "participant_id" in schema:
        # rules §1: the first row with an id is evaluated, each later one
        # rejected. Found on a 64-bit hash of the id (several times faster
        # than on the text); `split_errors` confirms each suspect on the text
        # itself, so a hash collision can never reject a row.
        lf = lf.with_columns(pl.col("participant_id").hash(seed=0).alias(PID_HASH))
        dup = pl.col("participant_id").is_not_null() & ~pl.col(PID_HASH).is_first_distinct()
        cross["participant_id"] = pl.when(dup).then(pl.lit("duplicate_id"))
    lf = lf.with_columns([
        (pl.coalesce(pl.col(f"_perr_{k}"), cross[k]) if k in cross else pl.col(f"_perr_{k}"))
        .alias(f"_err_{k}")
        for k in FIELD_NAMES
    ]).with_columns(
        pl.all_horizontal([pl.col(f"_err_{k}").is_null() for k in FIELD_NAMES
                           if k != "participant_id"]).alias("_values_ok"),
    ).with_columns(
        (pl.col("_values_ok") & pl.col("_err_participant_id").is_null()).alias("_ok"),
        # A row with a bad field is rejected, never paid: no amount is computed
        # from its values (absurd ones would overflow the exact arithmetic).
        # Only the id's check can be undone later (`_confirm_duplicates`).
        pl.when(pl.col("_values_ok")).then(pl.col("compensation_cents"))
        .alias("compensation_cents"),
    )
    return lf.drop("_service_over_age", "_values_ok", *[f"_perr_{k}" for k in FIELD_NAMES])


PID_HASH = "_pid_hash"


def shared_validation(a: Rules, b: Rules) -> Rules | None:
    """The rules under which rows validated once hold for both `a` and `b`,
    or None when they validate differently. Validation reads two things of
    the rules: the 19.6 cut-off (the derived `deferred_right_1960`, and a
    declared one after it) and the route ages (the last birth date whose
    birthdays are dates). The cut-off must be the same; of the ages, the
    rules with the earlier last birth date validate for both."""
    if a.deferred_right_cutoff != b.deferred_right_cutoff:
        return None
    return a if _last_birth_date(a) <= _last_birth_date(b) else b


def _last_birth_date(rules: Rules) -> date:
    """The last birth date whose every birthday the rules count (the route
    ages) is on or before MAX_DATE. Someone born on 29 February reaches an age
    on 28 February of a common year (rules §4), never later than 31 December."""
    oldest = max((r.age for r in rules.routes), default=0)
    if oldest >= MAX_YEAR:
        return date.min
    return date(MAX_YEAR - oldest, 12, 31)


def _confirm_duplicates(typed: pl.DataFrame) -> pl.DataFrame:
    """Keep a duplicate_id error only where an earlier row has the same id
    text. Every earlier row with the same text has the same hash, so looking
    at the rows that share a suspect's hash is exact."""
    err = pl.col("_err_participant_id")
    suspects = typed.filter(err == "duplicate_id")
    if suspects.height:
        group = typed.filter(pl.col(PID_HASH).is_in(suspects[PID_HASH].implode()))
        later = group.filter(~pl.col("participant_id").is_first_distinct())[ROW]
        if later.len() != suspects.height:  # a collision: clear the false ones
            typed = typed.with_columns(
                pl.when((err == "duplicate_id") & ~pl.col(ROW).is_in(later.implode()))
                .then(None).otherwise(err).alias("_err_participant_id")
            ).with_columns(
                pl.all_horizontal([pl.col(f"_err_{k}").is_null() for k in FIELD_NAMES])
                .alias("_ok")
            )
    return typed.drop(PID_HASH)


def split_errors(typed: pl.DataFrame, valid_only: bool = False) -> Validated:
    """Separate a collected validation plan into typed rows and error rows
    (`valid_only`: the typed rows without those in error, and without `_ok`)."""
    if PID_HASH in typed.columns:
        typed = _confirm_duplicates(typed)
    errors = _EMPTY_ERRORS.clone()
    if not typed["_ok"].all():
        bad = typed.filter(~pl.col("_ok"))
        errors = pl.concat(
            [
                bad.filter(pl.col(f"_err_{k}").is_not_null()).select(
                    ROW,
                    pl.col("_raw_participant_id").cast(pl.String).alias("participant_id"),
                    pl.lit(k).alias("field"),
                    pl.col(f"_err_{k}").alias("code"),
                    pl.col(f"_raw_{k}").cast(pl.String).alias("value"),
                    pl.lit(i, dtype=pl.UInt8).alias("_order"),
                )
                for i, k in enumerate(FIELD_NAMES)
            ]
        ).sort(ROW, "_order").drop("_order")
        if valid_only:
            typed = typed.filter(pl.col("_ok"))
    # by name, without a query plan (a plan of 100 columns costs more than the row)
    typed = typed[[c for c in typed.columns
                   if not (c.startswith(("_raw_", "_err_")) or (valid_only and c == "_ok"))]]
    return Validated(typed=typed, errors=errors)


def empty_errors() -> pl.DataFrame:
    return _EMPTY_ERRORS.clone()


def _empty_errors() -> pl.DataFrame:
    return pl.DataFrame(
        schema={ROW: pl.UInt32, "participant_id": pl.String, "field": pl.String,
                "code": pl.String, "value": pl.String}
    )


_EMPTY_ERRORS = _empty_errors()


def unknown_field_errors(keys: list[str]) -> pl.DataFrame:
    """Errors for keys that are not rules §1 fields (the API and CLI refuse them)."""
    unknown = [k for k in keys if k not in FIELD_NAMES]
    return pl.DataFrame(
        {ROW: [0] * len(unknown), "participant_id": [None] * len(unknown), "field": unknown,
         "code": ["unknown_field"] * len(unknown), "value": [None] * len(unknown)},
        schema=empty_errors().schema,
    )


__all__ = ["validate", "Validated", "ROW", "ERROR_CODES"]
