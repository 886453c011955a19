"""SPEC §1 validation, written once as column expressions.

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

from .dates import exceeds_exact_years
from .fields import BY_NAME, FIELD_NAMES, SERVICE_UNITS
from .money import CENTS_PER_DOLLAR
from .rules import GROUPS, Rules

ROW = "_row"  # 0-based position of the row in the input
_DECIMAL_RE = r"^([+-]?)(\d*)(?:\.(\d*))?$"
_DATE_RE = r"^\d{4}-\d{2}-\d{2}$"
_MAX_INT_DIGITS = 15  # larger numbers than this are not amounts or years of anyone

# error codes, each with a message in the catalogs (i18n/*.toml, [errors])
ERROR_CODES = (
    "missing",
    "not_a_date",
    "not_a_number",
    "not_a_boolean",
    "negative",
    "too_many_decimals",
    "not_positive",
    "unknown_group",
    "birth_after_entry",
    "entry_after_separation",
    "service_exceeds_age",
    "deferred_right_after_1960",
    "duplicate_id",
    "unknown_field",
    "not_text",
)


@dataclass
class Validated:
    """`typed`: every input row, typed, with `_row` and `_ok`; `errors`: one
    row per bad field (`_row`, participant_id, field, code, value)."""

    typed: pl.DataFrame
    errors: pl.DataFrame


def _text(name: str, dtype: pl.DataType) -> pl.Expr:
    col = pl.col(name)
    if dtype == pl.String:
        return col.str.strip_chars()
    return col.cast(pl.String)


def _blank(txt: pl.Expr) -> pl.Expr:
    return txt.is_null() | (txt == "")


def _parse_date(name: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """(value, error code) for a date field."""
    col = pl.col(name)
    if dtype == pl.Date:
        return col, pl.lit(None, dtype=pl.String)
    if isinstance(dtype, pl.Datetime):
        # A spreadsheet date arrives as midnight; any other time is not a date.
        has_time = col.dt.time() != pl.time(0, 0, 0)
        return (
            pl.when(has_time).then(None).otherwise(col.dt.date()),
            pl.when(has_time).then(pl.lit("not_a_date")),
        )
    txt = _text(name, dtype)
    parsed = (
        pl.when(txt.str.contains(_DATE_RE))
        .then(txt.str.to_date("%Y-%m-%d", strict=False))
        .otherwise(None)
    )
    err = pl.when(~_blank(txt) & parsed.is_null()).then(pl.lit("not_a_date"))
    return parsed, err


def _parse_decimal(
    name: str, dtype: pl.DataType, places: int, negative: str
) -> tuple[pl.Expr, pl.Expr]:
    """(integer in 1/10**places, error code). Trailing zeros are not decimals."""
    col = pl.col(name)
    if dtype.is_integer():
        v = col.cast(pl.Int64) * 10**places
        return pl.when(col >= 0).then(v), pl.when(col < 0).then(pl.lit(negative))
    txt = _text(name, dtype)  # floats print as their shortest exact repr
    parts = txt.str.extract_groups(_DECIMAL_RE)
    sign, whole, frac = (parts.struct.field(k) for k in ("1", "2", "3"))
    frac = frac.fill_null("").str.strip_chars_end("0")
    shape_ok = (
        txt.str.contains(_DECIMAL_RE)
        & (whole.str.len_chars() > 0)
        & (whole.str.len_chars() <= _MAX_INT_DIGITS)
    )
    units = whole.cast(pl.Int64, strict=False) * 10**places + (
        pl.when(frac.str.len_chars() == 0)
        .then(0)
        .otherwise(frac.str.pad_end(places, "0").str.slice(0, places).cast(pl.Int64, strict=False))
    )
    is_zero = units == 0
    err = (
        pl.when(_blank(txt))
        .then(None)
        .when(~shape_ok)
        .then(pl.lit("not_a_number"))
        .when((sign == "-") & ~is_zero)
        .then(pl.lit(negative))
        .when(frac.str.len_chars() > places)
        .then(pl.lit("too_many_decimals"))
    )
    return pl.when(err.is_null() & shape_ok).then(units), err


def _parse_bool(name: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    col = pl.col(name)
    if dtype == pl.Boolean:
        return col, pl.lit(None, dtype=pl.String)
    low = _text(name, dtype).str.to_lowercase()
    value = pl.when(low == "true").then(True).when(low == "false").then(False)
    err = pl.when(~_blank(low) & value.is_null()).then(pl.lit("not_a_boolean"))
    return value, err


def validate(
    frame: pl.DataFrame,
    rules: Rules,
    as_of: date,
    require_id: bool = False,
) -> Validated:
    """Parse and check every SPEC §1 field of every row, all errors at once."""
    schema = frame.schema
    n = frame.height
    exprs: list[pl.Expr] = [pl.int_range(0, n, dtype=pl.UInt32).alias(ROW)]
    if ROW in schema:
        raise ValueError(f"the input has a column named {ROW!r}, which is reserved")
    errs: dict[str, list[pl.Expr]] = {f: [] for f in FIELD_NAMES}
    raw_text: dict[str, pl.Expr] = {}

    def missing_if(name: str, blank: pl.Expr) -> None:
        if BY_NAME[name].required:
            errs[name].append(pl.when(blank).then(pl.lit("missing")))

    for name in FIELD_NAMES:
        field = BY_NAME[name]
        if name not in schema:
            if field.required or (name == "participant_id" and require_id):
                errs[name].append(pl.lit("missing"))
            default = {
                "deferred_right_1960": pl.lit(False),
                "as_of": pl.lit(as_of, dtype=pl.Date),
            }.get(name, pl.lit(None))
            dtype = {
                "date": pl.Date, "decimal": pl.Int64, "bool": pl.Boolean,
            }.get(field.kind, pl.String)
            exprs.append(default.cast(dtype).alias(name))
            raw_text[name] = pl.lit(None, dtype=pl.String)
            continue
        dtype = schema[name]
        txt = _text(name, dtype)
        raw_text[name] = txt
        blank = _blank(txt)
        if field.kind == "date":
            value, err = _parse_date(name, dtype)
        elif field.kind == "decimal":
            # SPEC §1: negative service; compensation must be above zero
            neg = "not_positive" if name == "average_compensation" else "negative"
            value, err = _parse_decimal(name, dtype, field.places or 0, neg)
        elif field.kind == "bool":
            value, err = _parse_bool(name, dtype)
        elif field.kind == "group":
            value = pl.when(txt.is_in(list(GROUPS))).then(txt)
            err = pl.when(~blank & value.is_null()).then(pl.lit("unknown_group"))
        else:  # text
            value = pl.when(~blank).then(txt)
            err = pl.lit(None, dtype=pl.String)
            if name == "participant_id" and require_id:
                errs[name].append(pl.when(blank).then(pl.lit("missing")))
        errs[name].append(err)
        missing_if(name, blank)
        if name == "deferred_right_1960":
            value = pl.when(blank).then(False).otherwise(value)
        if name == "as_of":
            value = pl.when(blank).then(pl.lit(as_of)).otherwise(value)
        exprs.append(value.alias(name))

    # 1: raw text, typed values (_v_) and parse errors (_perr_) side by side
    perr = []
    for name in FIELD_NAMES:
        cands = [e for e in errs[name]]
        perr.append(
            (pl.coalesce(cands) if cands else pl.lit(None, dtype=pl.String)).alias(f"_perr_{name}")
        )
    lf = frame.lazy().select(
        *[c for c in frame.columns if c not in FIELD_NAMES],
        *[raw_text[k].alias(f"_raw_{k}") for k in FIELD_NAMES],
        *[e.alias(f"_v_{e.meta.output_name()}") for e in exprs],
        *perr,
    )
    rename = {f"_v_{k}": k for k in FIELD_NAMES} | {f"_v_{ROW}": ROW}
    rename |= {"_v_creditable_service_years": "service_units",
               "_v_average_compensation": "compensation_cents"}
    lf = lf.rename(rename)

    # 2: checks between fields, only where both values parsed.
    birth, entry, sep = pl.col("birth_date"), pl.col("entry_date"), pl.col("separation_date")
    ref = pl.coalesce(sep, pl.col("as_of"))
    cross = {
        "average_compensation": pl.when(pl.col("compensation_cents") == 0).then(
            pl.lit("not_positive")
        ),
        "birth_date": pl.when(birth > entry).then(pl.lit("birth_after_entry")),
        "entry_date": pl.when(entry > sep).then(pl.lit("entry_after_separation")),
        # exact time lived at separation (or as_of when not separated)
        "creditable_service_years": pl.when(
            ((birth <= ref)
             & exceeds_exact_years(pl.col("service_units"), SERVICE_UNITS, birth, ref))
            | ((birth > ref) & (pl.col("service_units") > 0))
        ).then(pl.lit("service_exceeds_age")),
        "deferred_right_1960": pl.when(
            pl.col("deferred_right_1960") & (entry > pl.lit(rules.deferred_right_cutoff))
        ).then(pl.lit("deferred_right_after_1960")),
    }
    err_cols = [
        (pl.coalesce(pl.col(f"_perr_{k}"), cross[k]) if k in cross else pl.col(f"_perr_{k}"))
        .alias(f"_err_{k}")
        for k in FIELD_NAMES
    ]
    lf = lf.with_columns(err_cols)
    if require_id and "participant_id" in schema:
        # SPEC §1: the first row with an id is evaluated, each later one rejected
        dup = pl.col("participant_id").is_not_null() & ~pl.col("participant_id").is_first_distinct()
        lf = lf.with_columns(
            pl.when(dup).then(pl.lit("duplicate_id"))
            .otherwise(pl.col("_err_participant_id")).alias("_err_participant_id")
        )
    lf = lf.with_columns(
        pl.all_horizontal([pl.col(f"_err_{k}").is_null() for k in FIELD_NAMES]).alias("_ok")
    )
    typed = lf.collect()

    bad = typed.filter(~pl.col("_ok"))
    if bad.height:
        errors = (
            bad.select(
                ROW,
                pl.col("_raw_participant_id").alias("participant_id"),
                *[
                    pl.struct(
                        pl.lit(k).alias("field"),
                        pl.col(f"_err_{k}").alias("code"),
                        pl.col(f"_raw_{k}").alias("value"),
                    ).alias(f"_e_{k}")
                    for k in FIELD_NAMES
                ],
            )
            .unpivot(index=[ROW, "participant_id"], variable_name="_f", value_name="e")
            .unnest("e")
            .filter(pl.col("code").is_not_null())
            .with_columns(
                pl.col("field").replace_strict(
                    {k: i for i, k in enumerate(FIELD_NAMES)}, return_dtype=pl.UInt8
                ).alias("_order")
            )
            .sort(ROW, "_order")
            .select(ROW, "participant_id", "field", "code", "value")
        )
    else:
        errors = empty_errors()
    typed = typed.drop([c for c in typed.columns if c.startswith(("_raw_", "_err_", "_perr_"))])
    return Validated(typed=typed, errors=errors)


def empty_errors() -> pl.DataFrame:
    return pl.DataFrame(
        schema={ROW: pl.UInt32, "participant_id": pl.String, "field": pl.String,
                "code": pl.String, "value": pl.String}
    )


def unknown_field_errors(keys: list[str]) -> pl.DataFrame:
    """Errors for keys that are not SPEC §1 fields (the API and CLI refuse them)."""
    unknown = [k for k in keys if k not in FIELD_NAMES]
    return pl.DataFrame(
        {ROW: [0] * len(unknown), "participant_id": [None] * len(unknown), "field": unknown,
         "code": ["unknown_field"] * len(unknown), "value": [None] * len(unknown)},
        schema=empty_errors().schema,
    )


__all__ = ["validate", "Validated", "ROW", "ERROR_CODES", "CENTS_PER_DOLLAR"]
