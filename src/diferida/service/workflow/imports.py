"""The import of a file of applications: decided column-wise by the
population pass (`_decide_import`: every row's problems, named by field, as
`_parse_application` names them), then stored as drafts a batch at a time
(`_store_imported`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from ..participant import field_problem
from ..schemas import APPLICATION_FIELDS
from ..store import (
    Application,
    Case,
    NewEvent,
    Store,
    User,
)
from .applications import _app_problem
from .common import LIMITS, METHOD, CaseSummary, Refused, RejectedRow, _current_numbers, _text

IMPORT_CHUNK_ROWS = 5_000  # rows decided at a time: the population pass's chunk
IMPORT_BATCH = 1_000  # drafts stored per transaction (the chains' heads are held that long)
# What Python's str.strip() removes: the application's texts are trimmed so
# (tests/test_workbench_import_attacks.py holds it equal to str.isspace).
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
                 "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_CONTROL_CLASS = r"([\x00-\x1f\x7f-\x9f])"  # participant.control_character's
_ID_LIMIT = 200  # the store's column, as `_evaluate` checks it
_APP_COLUMN = {name: f"\x00application_{name}" for name in APPLICATION_FIELDS}
_XLSX_DATE_CELL = r"^(\d{4}-\d{2}-\d{2}) 00:00:00$"  # a date cell as the .xlsx reader reads it


@dataclass
class _Imported:
    """A file decided: rows read; the kept rows chunk by chunk (the engine's
    columns with the application's, the rules §1 fields as given, their row
    numbers); the rejected rows; the rules."""

    rows_in: int
    kept: list[tuple[Any, Any, Any]]
    rejected: list[RejectedRow]
    rules: Any


def _decide_import(data: bytes, filename: str, lang: str, as_of: date | None,
                   limits: Any) -> _Imported:
    import polars as pl

    from ...batch.errors import FileProblem
    from ...batch.io import text_bytes
    from ...batch.population import Decided
    from ...batch.run import PopulationRun, RunOptions
    from ...core import run
    from ...fields import FIELD_NAMES
    from ...rules import load_rules
    from ...validation import ROW

    rules = load_rules(None)
    today = date.today()
    read = [0]
    kept: list[tuple[Any, Any, Any]] = []
    rejects: list[pl.DataFrame] = []
    with PopulationRun(data, filename, options=RunOptions(
            lang=lang, chunk_rows=IMPORT_CHUNK_ROWS, limits=limits, sample_rejects=0)
            ) as population:
        src = population.source
        spec = [c for c in src.columns if c in FIELD_NAMES]

        def decide(frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
            read[0] += text_bytes(frame)  # the text once read, as it is read
            limits.check_text(src.file, read[0])
            full, errors, _ = run(frame.select(spec), as_of=as_of, rules=rules,
                                  require_id=True)
            app, bad = _import_problems(frame, errors, lang, rules, today, src.kind)
            rows = full.get_column(ROW)
            full = full.filter(~rows.is_in(bad.get_column("row").cast(rows.dtype).implode()))
            app = app[full.get_column(ROW).cast(pl.Int64).to_numpy()]
            return (pl.concat([full, app], how="horizontal"),), bad

        def use(d: Decided) -> None:
            kept.append((d.kept[0], d.chunk.frame.select(spec)[d.positions],
                         d.chunk.rows[d.positions]))
            rejects.append(d.rejects)

        tally = population.run(decide, use)
    if tally.rows_read == 0:
        raise FileProblem("no_rows", file=src.file)
    rejected = []
    for frame in rejects:
        for number, pid, name, code, _value, message in frame.iter_rows():
            if code == "duplicate_id":  # an id given again later in the file
                code, message = "duplicate_in_file", _text(lang, "duplicate_in_file", value=pid)
            rejected.append(RejectedRow(number, pid or None, name, code, message))
    return _Imported(tally.rows_read, kept, rejected, rules)


def _import_problems(frame: Any, errors: Any, lang: str, rules: Any, today: date,
                     kind: str) -> tuple[Any, Any]:
    """A chunk's application values as stored (texts trimmed, line breaks
    made \\n; the date) and its problems, column-wise: the checks and
    messages of `_parse_application` and `_evaluate`, each row's in their
    order there (the id's own, the application's fields, the engine's for
    the rules §1 fields, then a missing or too long id), an id given again
    (the engine's duplicate_id) first. Rows numbered in the chunk."""
    import polars as pl

    from ...core import _rejected

    h = frame.height
    number = pl.Series("row", range(h), dtype=pl.Int64)
    raw_id = frame.get_column("participant_id")
    raw_id = raw_id if raw_id.dtype == pl.String else raw_id.cast(pl.String)
    pid = raw_id.str.strip_chars()  # as the engine reads it (participant.normalised_id)
    parts: list[pl.DataFrame] = []

    def add(rank: int, name: str, code: pl.Series, key: pl.Series | None,
            text: Any) -> None:
        """Problems where `code` is set, `key` shown as their value; their
        message `text(code, key)`, worked out once per distinct pair."""
        key = pl.Series([None] * h, dtype=pl.String) if key is None else key
        found = pl.DataFrame({"row": number, "participant_id": pid, "code": code,
                              "value": key}).filter(pl.col("code").is_not_null())
        if not found.height:
            return
        texts = {f"{c}|{k or ''}": text(c, k)
                 for c, k in found.select("code", "value").unique().rows()}
        parts.append(found.select(
            "row", "participant_id", pl.lit(name, dtype=pl.String).alias("field"), "code",
            "value", (pl.col("code") + "|" + pl.col("value").fill_null(""))
            .replace_strict(texts, return_dtype=pl.String).alias("message"),
            pl.lit(rank, dtype=pl.Int32).alias("_rank")))

    # the participant id's own problems (participant.id_problem)
    char = pid.str.extract(_CONTROL_CLASS, 1)
    id_code = _first_code([(raw_id.str.contains("\x00", literal=True), "nul_character"),
                           (char.is_not_null(), "control_character")])
    add(1, "participant_id", id_code, char, lambda c, k: field_problem(
        lang, "participant_id", c, **({"char": _char(k)} if c == "control_character" else {})
    )["message"])
    # the application's fields (_parse_application), in its order
    values: dict[str, pl.Series] = {}
    for rank, name in enumerate(("name", "address", "note"), start=2):
        values[name], code, char = _text_column(frame, name, h)
        add(rank, name, code, char, lambda c, k, name=name: _app_problem(
            lang, name, c, **({"char": _char(k)} if c == "control_character" else
                              {"limit": LIMITS[name]} if c == "too_long" else {}))["message"])
    values["application_date"], code, shown = _date_column(frame, h, today, kind)
    add(5, "application_date", code, shown, lambda c, k: _app_problem(
        lang, "application_date", c, k)["message"])
    values["letter_lang"], code, shown = _lang_column(frame, h)
    add(6, "letter_lang", code, shown,
        lambda c, k: _text(lang, "letter_lang_invalid", value=k))
    # the workflow's own: no id, or one longer than the store keeps (_evaluate)
    blank = (pid.is_null() | (pid == "")).fill_null(True)
    clean = id_code.is_null()
    late = _first_code([(blank & clean, "missing"),
                        (~blank & clean & (pid.str.len_chars() > _ID_LIMIT), "too_long")])
    add(100, "participant_id", late, None, lambda c, k: field_problem(
        lang, "participant_id", c, None, **({"limit": _ID_LIMIT} if c == "too_long" else {})
    )["message"])
    # the engine's: an id given again first, unless the id itself is refused
    # (as the population pass has it across chunks); its "missing" id is the
    # workflow's own, above (the path of one application asks for none)
    core = _rejected(errors, lang, rules).with_columns(pl.col("row").cast(pl.Int64))
    refused = number.filter(id_code.is_not_null() | late.is_not_null()).implode()
    parts.append(core.filter((pl.col("field") == "participant_id")
                             & (pl.col("code") == "duplicate_id")
                             & ~pl.col("row").is_in(refused))
                 .with_columns(pl.lit(0, dtype=pl.Int32).alias("_rank")))
    parts.append(core.filter(pl.col("field") != "participant_id")
                 .with_columns(pl.lit(10, dtype=pl.Int32).alias("_rank")))
    app = pl.DataFrame({_APP_COLUMN[n]: values[n] for n in APPLICATION_FIELDS})
    columns = ("row", "participant_id", "field", "code", "value", "message", "_rank")
    bad = pl.concat([p.select(columns) for p in parts]) \
        .sort("row", "_rank", maintain_order=True).drop("_rank")
    return app, bad


def _first_code(pairs: list[tuple[Any, str]]) -> Any:
    """Row by row, the code of the first mask that holds (null: none does)."""
    import polars as pl

    out = pl.Series([None] * len(pairs[0][0]), dtype=pl.String)
    for mask, code in reversed(pairs):
        out = pl.Series([code] * len(out), dtype=pl.String).zip_with(mask.fill_null(False), out)
    return out


def _char(found: str) -> str:
    return f"U+{ord(found):04X}"  # as participant.control_character writes it


def _text_column(frame: Any, name: str, h: int) -> tuple[Any, Any, Any]:
    """A text of the application (name, address, note), column-wise as
    `_parse_application` takes one: (the value stored, or null; the
    problem's code; the control character found)."""
    import polars as pl

    none = pl.Series([None] * h, dtype=pl.String)
    column = frame.get_column(name) if name in frame.columns else none
    if column.dtype == pl.Null:
        return none, none, none
    if column.dtype != pl.String:  # a typed column (Parquet): no text
        return none, _first_code([(column.is_not_null(), "not_text")]), none
    value = column.str.strip_chars(PY_WHITESPACE)
    value = none.zip_with((value == "").fill_null(False), value)
    allowed = value if name == "name" else value.str.replace_all(r"[\r\n]", "")
    char = allowed.str.extract(_CONTROL_CLASS, 1)
    code = _first_code([(value.str.contains("\x00", literal=True), "nul_character"),
                        (char.is_not_null(), "control_character"),
                        (value.str.len_chars() > LIMITS[name], "too_long")])
    stored = value.str.replace_all("\r\n", "\n", literal=True) \
        .str.replace_all("\r", "\n", literal=True)
    return stored.zip_with(code.is_null(), none), code, char


def _lang_column(frame: Any, h: int) -> tuple[Any, Any, Any]:
    """The addressee's language (letter_lang), column-wise as
    `_parse_application` takes it: es or en in any case, blank for none (the
    draft is stored without it, and is not submitted until it is given);
    anything else refused, named (the value stored, or null; the problem's
    code; the value shown)."""
    import polars as pl

    from ...i18n import LANGS

    none = pl.Series([None] * h, dtype=pl.String)
    column = frame.get_column("letter_lang") if "letter_lang" in frame.columns else none
    if column.dtype == pl.Null:
        return none, none, none
    raw = column if column.dtype == pl.String else column.cast(pl.String, strict=False)
    raw = raw.str.strip_chars(PY_WHITESPACE)
    raw = none.zip_with((raw == "").fill_null(False), raw)
    lower = raw.str.to_lowercase()
    good = lower.is_in(list(LANGS)).fill_null(False)
    bad = raw.is_not_null() & ~good
    code = _first_code([(bad, "not_a_language")])
    return lower.zip_with(good, none), code, raw.str.slice(0, 40)


def _date_column(frame: Any, h: int, today: date, kind: str) -> tuple[Any, Any, Any]:
    """The application date, column-wise as `_parse_application` takes it:
    (the date stored, or null; the problem's code; the value shown)."""
    import polars as pl

    none = pl.Series([None] * h, dtype=pl.String)
    column = frame.get_column("application_date") if "application_date" in frame.columns \
        else none
    if column.dtype == pl.Null:
        return pl.Series([None] * h, dtype=pl.Date), none, none
    if column.dtype == pl.Date:
        dates, raw = column, column.cast(pl.String)
    else:
        raw = column if column.dtype == pl.String else column.cast(pl.String, strict=False)
        raw = raw.str.strip_chars(PY_WHITESPACE)
        raw = none.zip_with((raw == "").fill_null(False), raw)
        if kind == "xlsx":  # a date cell, read as the reader reads the rules §1 dates
            raw = raw.str.replace(_XLSX_DATE_CELL, "${1}")
        # each distinct text read once, by the very parse of one application
        parsed = {text: _iso_date(text) for text in raw.drop_nulls().unique().to_list()}
        dates = raw.replace_strict(parsed, default=None, return_dtype=pl.Date)
    not_date = raw.is_not_null() & dates.is_null()
    future = dates > today
    code = _first_code([(not_date, "not_a_date"), (future, "in_future")])
    shown = none.zip_with(not_date.fill_null(False), dates.cast(pl.String))
    shown = raw.zip_with(not_date.fill_null(False), shown)
    kept = pl.Series([None] * h, dtype=pl.Date).zip_with(future.fill_null(False), dates)
    return kept, code, shown


def _iso_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def _store_imported(store: Store, user: User, imported: _Imported,
                    lang: str) -> tuple[list[CaseSummary], list[RejectedRow], int]:
    """Store the kept rows as drafts, IMPORT_BATCH to a transaction: (the
    drafts, every rejected row in the file's order, how many were refused
    for a case the participant already has)."""
    from ...core import determination_from_row, text_row
    from ..store.repository import NewDraft

    rules = imported.rules
    created: list[CaseSummary] = []
    refused: list[tuple[int, str, int]] = []  # row, participant, its current version

    def event(cases: list[Case]) -> NewEvent:
        return NewEvent("workflow.import", METHOD, "workflow.import", 201, user=user,
                        detail=f"{len(cases)} drafts: cases {cases[0].id}-{cases[-1].id}, "
                               f"version 1")

    def save(batch: list[tuple[int, Any]]) -> None:
        cases, existing = store.record_drafts(
            [d for _, d in batch], rules_version=rules.version, rules_name=rules.name,
            rules_content=rules.resolved, lang=lang, author=user, event=event)
        stored = {c.participant_id: c for c in cases}
        for row, d in batch:
            c = stored.get(d.participant_id)
            if c is None:
                refused.append((row, d.participant_id, existing[d.participant_id]))
                continue
            created.append(CaseSummary(c.id, c.id, c.participant_id, c.version, "draft",
                                       d.application.name, user.name, c.created_at, c.status))

    batch: list[tuple[int, Any]] = []
    for full, given, numbers in imported.kept:
        typed = any(t != "String" for t in map(str, given.dtypes))
        for row, inputs, number in zip(full.iter_rows(named=True),
                                       given.iter_rows(named=True), numbers.tolist(),
                                       strict=True):
            d = determination_from_row(row, rules, lang)
            fields = text_row(inputs)[0] if typed else dict(inputs)
            fields["participant_id"] = d.participant_id
            application = Application(**{n: row[_APP_COLUMN[n]] for n in APPLICATION_FIELDS})
            batch.append((number, NewDraft(d.participant_id, fields, d.to_dict(), d.as_of,
                                           application)))
            if len(batch) == IMPORT_BATCH:
                save(batch)
                batch = []
    if batch:
        save(batch)
    rejected = list(imported.rejected)
    if refused:
        numbers = _current_numbers(store, [cid for *_, cid in refused])
        for row, pid, cid in refused:
            number, version = numbers[cid]
            p = Refused("exists", current=cid, current_number=number,
                        current_version=version).to_problems(lang)[0]
            rejected.append(RejectedRow(row, pid, p["field"], p["code"], p["message"]))
        rejected.sort(key=lambda r: r.row)
    return created, rejected, len(refused)
