"""`project_file`: a member file in, the fiscal-year cash flows out.

The file is read and decided exactly as `diferida batch` does (the same
reader, column map, limits, engine and rules; the same rejects, with human
row numbers), then every entitled member is projected (engine.py). Rows read
= members projected + members not entitled + rows rejected, checked; the
outputs appear only when complete, all of them or none.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import polars as pl

from ..batch.errors import FileProblem
from ..batch.io import kind_of
from ..batch.population import (
    AccountingError,
    Decided,
    check_other_target,
    check_table_target,
    reject_rows,
)
from ..batch.run import PopulationRun, RunKwargs, RunOptions
from ..core import evaluate_frame
from ..i18n import DEFAULT_LANG, check_lang
from ..rules import Rules, load_rules
from . import adjust, analysis, engine, output
from .claims import expand, load_claim_rates
from .engine import Assumptions, Members, day_date
from .mortality import KIND_OF_GROUP, MAX_AGE, MortalityTable, resolve, scaled
from .options import (
    OptionError,
    StartRule,
    parse_by,
    parse_cola,
    parse_horizon,
    parse_mortality_scale,
    parse_rates,
    parse_sex_blend,
    parse_start,
)
from .sex import SEX_COLUMN, check_sex
from .status import COLUMNS as STATUS_COLUMNS
from .status import DECEASED, DEFERRED, IN_PAY, REFUNDED, check_status

Progress = Callable[[str, int, int], None]
NOT_ENTITLED = 4  # read_census: a deferred member the rules give no pension (not a status)


@dataclass
class ProjectionSummary:
    input: str
    output: str
    rejects: str | None
    per_member: str | None
    chart: str | None
    assumptions_file: str | None
    as_of: date
    rows_read: int = 0
    projected: int = 0
    not_entitled: int = 0
    rows_rejected: int = 0
    in_pay: int = 0
    deceased: int = 0
    refunded: int = 0
    starts_first_year: float = 0
    valuation_date: date | None = None
    extra_files: list[str] = field(default_factory=list)
    problems: int = 0
    blank: int = 0
    sex_given: int = 0
    sex_blended: int = 0
    totals: dict[str, str] = field(default_factory=dict)
    assumptions: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"read_and_decide": 0.0, "project": 0.0, "write": 0.0,
                                 "total": 0.0})
    sample: pl.DataFrame | None = None
    valuation_extras: bool = False  # a valuation option or column was used

    def check(self) -> None:
        # rows in = projected + in pay + excluded (deceased, refunded) + not entitled + rejected
        if self.rows_read != (self.projected + self.in_pay + self.deceased + self.refunded
                              + self.not_entitled + self.rows_rejected):
            raise AccountingError(
                f"{self.rows_read} rows read, {self.projected} projected, {self.in_pay} in pay, "
                f"{self.deceased} deceased, {self.refunded} refunded, {self.not_entitled} "
                f"not entitled, {self.rows_rejected} rejected")

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input, "output": self.output, "rejects": self.rejects,
            "per_member": self.per_member, "chart": self.chart,
            "assumptions_file": self.assumptions_file, "as_of": self.as_of.isoformat(),
            "rows_read": self.rows_read, "projected": self.projected,
            "not_entitled": self.not_entitled, "rows_rejected": self.rows_rejected,
            "problems": self.problems, "blank_lines": self.blank,
            "present_values": self.totals,
            **({"in_pay": self.in_pay, "deceased": self.deceased, "refunded": self.refunded,
                "valuation_date": (self.valuation_date or self.as_of).isoformat(),
                "starts_first_year": self.starts_first_year, "files": self.extra_files}
               if self.valuation_extras else {}),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def sidecar_path(out: Path) -> Path:
    """flows.csv -> flows.assumptions.json"""
    return out.with_name(out.stem + ".assumptions.json")


def start_days(det: pl.DataFrame, rule: StartRule) -> pl.Expr:
    elig = pl.col("eligibility_date")
    if rule.age is None:
        return pl.coalesce(pl.col("start_date"), elig)
    reach = pl.col("birth_date").dt.offset_by(f"{rule.age}y")  # rules §4: 29 Feb -> 28 Feb
    return pl.max_horizontal(reach, elig)


def project_file(
    input: str | Path,
    output_path: str | Path,
    rejects: str | Path | None = None,
    *,
    discount: str | Sequence[str],
    mortality: str = "none",
    improvement: str | None = None,
    cola: str | Decimal = "0",
    start: str = "eligibility",
    horizon: int | str | None = None,
    sex_blend: str | float = "0.5",
    per_member: str | Path | None = None,
    chart: str | Path | None = None,
    as_of: date | None = None,
    rules: str | Path | Rules | None = None,
    progress: Progress | None = None,
    table: MortalityTable | None = None,
    valuation_date: date | None = None,
    claim_rates: str | Path | None = None,
    mortality_scale: str | float | None = None,
    by: str | Sequence[str] | None = None,
    sensitivity: bool = False,
    **common: Unpack[RunKwargs],
) -> ProjectionSummary:
    """Project every entitled member of a file (CSV, Parquet or .xlsx). Raises
    OptionError or TableError for an option that cannot be used, FileProblem
    for a file, before anything is written. `table` replaces `mortality`
    (a table built in code, as the tests do)."""
    started = time.perf_counter()
    check_lang(common.get("lang", DEFAULT_LANG), OptionError, "--lang")
    o = RunOptions(**common)
    rates, cola_f, rule = parse_rates(discount), parse_cola(cola), parse_start(start)
    horizon_n, blend = parse_horizon(horizon), parse_sex_blend(sex_blend)
    scale, dims = parse_mortality_scale(mortality_scale), parse_by(by)
    if table is None:
        table = resolve(mortality, improvement)
    elif improvement not in (None, "none"):
        raise OptionError("--improvement: give the improved rates in the table itself")
    a = Asked(rates=rates, cola=cola_f, rule=rule, horizon=horizon_n, blend=blend,
              table=scaled(table, scale) if scale != 1.0 else table, scale=scale,
              dims=dims, sensitivity=sensitivity,
              claims=load_claim_rates(claim_rates, o.lang) if claim_rates is not None
              else None, valuation_date=valuation_date)
    f = _project_files(o, input, output_path, rejects, per_member, chart, a)
    r = load_rules(rules)
    day = as_of or date.today()
    v_date = valuation_date or day
    summary = ProjectionSummary(str(f.inp), str(f.out), _str(f.rej), _str(f.mem), _str(f.pic),
                                _str(f.side), day)
    summary.valuation_date = v_date
    secs = summary.seconds
    with PopulationRun(
            f.inp, options=o, extra_fields=(SEX_COLUMN, *STATUS_COLUMNS), rejects=f.rej,
            progress=(lambda d, t: progress("decide", d, t)) if progress is not None
            else None) as run:
        tick = time.perf_counter()
        members, has_sex = _read_members(run, summary, a, r, day)
        secs["read_and_decide"] = time.perf_counter() - tick
        tick = time.perf_counter()
        proj, extra_tables = _project(members, a, r, v_date, day, f.mem is not None, o.lang,
                                      progress)
        summary.starts_first_year = analysis.first_year_starts(proj, v_date)
        secs["project"] = time.perf_counter() - tick
        tick = time.perf_counter()
        _write_projection(run, f, a, r, summary, members, proj, extra_tables, has_sex, o.lang)
        secs["write"] = time.perf_counter() - tick
        summary.sample = run.sample
    secs["total"] = time.perf_counter() - started
    return summary


def _str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


@dataclass(frozen=True)
class Asked:
    """The projection's assumptions as asked, each option checked: the
    discount rates (label, rate), the COLA, the start rule, the horizon,
    the sex blend, the mortality table (scaled), the dimensions of --by,
    the sensitivity grid, the claim rates, the valuation date given."""

    rates: list[tuple[str, Decimal]]
    cola: Any
    rule: StartRule
    horizon: int | None
    blend: Any
    table: MortalityTable
    scale: float
    dims: list[str]
    sensitivity: bool
    claims: Any
    valuation_date: date | None


@dataclass(frozen=True)
class ProjectFiles:
    """The files of a projection, each checked before anything is read: the
    census, the table (or workbook), the rejects, the members' table, the
    chart, the JSON beside a table, the --by and --sensitivity tables."""

    inp: Path
    out: Path
    out_kind: str
    rej: Path | None
    mem: Path | None
    pic: Path | None
    side: Path | None
    by_file: Path | None
    grid_file: Path | None


def _project_files(o: RunOptions, input: str | Path, output_path: str | Path,
                   rejects: str | Path | None, per_member: str | Path | None,
                   chart: str | Path | None, a: Asked) -> ProjectFiles:
    """Every output usable and distinct, none an input nor replaced without
    --overwrite; a chart only when matplotlib is there."""
    overwrite = o.overwrite
    inp, out = Path(input), Path(output_path)
    rej = Path(rejects) if rejects is not None else None
    mem = Path(per_member) if per_member is not None else None
    pic = Path(chart) if chart is not None else None
    kind_of(inp)
    out_kind = kind_of(out)
    side = sidecar_path(out) if out_kind != "xlsx" else None
    by_file = analysis.beside(out, "by") if a.dims and out_kind != "xlsx" else None
    grid_file = analysis.beside(out, "sensitivity") if a.sensitivity and out_kind != "xlsx" \
        else None
    check_table_target(out, [inp], overwrite)
    outputs = [("-o/--output", out)]
    for extra, kind, option in ((rej, "table", "--rejects"), (mem, "table", "--per-member"),
                                (by_file, "table", f"--by ({by_file.name})" if by_file else ""),
                                (grid_file, "table",
                                 f"--sensitivity ({grid_file.name})" if grid_file else ""),
                                (pic, "picture", "--chart"),
                                (side, "json", f"-o/--output ({side.name})" if side else "")):
        if extra is None:
            continue
        if kind == "table":
            check_table_target(extra, [inp], overwrite, option=option, outputs=outputs)
        else:
            check_other_target(extra, [inp], overwrite,
                                list(output.PICTURES) if kind == "picture" else None,
                                option=option, outputs=outputs)
        outputs.append((option, extra))
    taken = [inp, *(p for _, p in outputs)]
    if len({p.resolve() for p in taken}) != len(taken):
        raise OptionError("the output files must all be different files")
    if pic is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise OptionError("--chart: pictures need the optional package matplotlib; "
                              "install it with: pip install 'diferida[plot]'") from None
    return ProjectFiles(inp, out, out_kind, rej, mem, pic, side, by_file, grid_file)


def _read_members(run: PopulationRun, summary: ProjectionSummary, a: Asked, r: Rules,
                  day: date) -> tuple[pl.DataFrame, bool]:
    """The census read and decided; (the members projected, sex given)."""
    src = run.source
    has_sex = SEX_COLUMN in src.columns
    has_status = any(c in src.columns for c in STATUS_COLUMNS)
    summary.valuation_extras = bool(has_status or a.claims is not None or a.dims
                                    or a.sensitivity or a.scale != 1.0
                                    or a.valuation_date is not None)
    members, _ = read_census(run, summary, as_of=day, rules=r, lang=run.lang, rule=a.rule,
                             has_sex=has_sex, has_status=has_status)
    summary.sex_given = int((members["_sex"] >= 0).sum())
    summary.sex_blended = members.height - summary.sex_given
    return members, has_sex


def _project(members: pl.DataFrame, a: Asked, r: Rules, v_date: date, day: date,
             per_member: bool, lang: str, progress: Progress | None
             ) -> tuple[Any, list[tuple[str, pl.DataFrame]]]:
    """The members' payments and present values by fiscal year; the --by and
    --sensitivity tables."""
    labels = [label for label, _ in a.rates]
    assumptions = Assumptions(v_date, [float(v) for _, v in a.rates], a.table, a.cola,
                              a.horizon, a.blend)
    arrays = member_arrays(members, v_date, day, a.cola)
    if a.claims is not None:
        arrays = expand(arrays, members["eligibility_date"].cast(pl.Int32).to_numpy()
                        .astype(np.int64), a.claims, engine.day_number(v_date))
    proj = adjust.project(arrays, assumptions, r.relief,
                          per_member=per_member or bool(a.dims),
                          progress=(lambda d, t: progress("project", d, t))
                          if progress is not None else None)
    extra_tables: list[tuple[str, pl.DataFrame]] = []
    if a.dims:
        extra_tables.append(("by", analysis.breakdown(members, proj, labels, a.dims, v_date,
                                                      lang)))
    if a.sensitivity:
        extra_tables.append(("sensitivity", analysis.sensitivity(
            arrays, assumptions, a.rates, a.cola, proj, lang, r.relief)))
    return proj, extra_tables


def _write_projection(run: PopulationRun, f: ProjectFiles, a: Asked, r: Rules,
                      summary: ProjectionSummary, members: pl.DataFrame, proj: Any,
                      extra_tables: list[tuple[str, pl.DataFrame]], has_sex: bool, lang: str
                      ) -> None:
    """The totals and the assumptions in the summary; every output written
    and put in place together."""
    labels = [label for label, _ in a.rates]
    tbl = output.table_frame(proj, labels, lang)
    last = tbl.row(tbl.height - 1, named=True)
    h = output.HEADERS[lang]
    summary.totals = {label: str(last[f"{h['pv']}{label}"]) for label in labels}
    summary.totals["payments"] = str(last[h["payments"]])
    info = assumptions_of(summary, r, a.table, a.rates, a.cola, a.rule, a.horizon, a.blend,
                          has_sex, len(proj.fiscal_years))
    # the claim rule and the method's properties are stated in every run
    analysis.add_assumptions(info, summary, a.claims, a.table, a.dims, a.sensitivity)
    summary.assumptions = info
    if f.out_kind == "xlsx":
        def more_sheets(book: Any) -> None:
            for name, frame in extra_tables:
                analysis.sheet(book, analysis.TEXT[lang][f"sheet_{name}"], frame)

        run.data(f.out, output.workbook(tbl, info, lang, more_sheets if extra_tables else None))
    else:
        run.output(f.out, tbl)
        for (_, frame), target in zip(extra_tables, [x for x in (f.by_file, f.grid_file) if x],
                                      strict=True):
            run.output(target, frame)
            summary.extra_files.append(str(target))
    if f.side is not None:
        run.data(f.side, output.sidecar_json(info))
    if f.pic is not None:
        run.data(f.pic, output.picture(tbl, output.PICTURES[f.pic.suffix.lower()], lang,
                                       _subtitle(info)))
    if f.mem is not None:
        run.output(f.mem, output.member_frame(members["participant_id"], members["status"],
                                              members["start_date"], members["monthly_amount"],
                                              proj, labels, lang))
    run.commit()  # every output, or none


def read_census(run: PopulationRun, summary: ProjectionSummary, *, as_of: date, rules: Rules,
                lang: str, rule: StartRule, has_sex: bool, has_status: bool,
                more: Callable[[pl.DataFrame, tuple[pl.DataFrame, ...], pl.DataFrame],
                               tuple[tuple[pl.DataFrame, ...], pl.DataFrame]] | None = None,
                keep: Sequence[str] = (), keep_gone: bool = False
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read and decide a member file as `project` does (the batch's reader,
    engine and rejects; the sex and benefit status columns checked): (the
    members to project — deferred and entitled, then in pay — as
    members_frame and in_pay_frame give them, and, with `keep_gone`, the
    members not projected — deceased, refunded or not entitled:
    participant_id and `_bstatus`, NOT_ENTITLED for the last). The counts go into
    `summary` and are checked. `more(frame, kept, bad)`: a further check of
    the chunk (an employer column), whose columns `keep` names are carried."""
    parts: list[pl.DataFrame] = []
    gone: list[pl.DataFrame] = []

    def decide(frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
        res = evaluate_frame(frame, as_of=as_of, rules=rules, lang=lang, require_id=True,
                             inputs=("birth_date", "group"))
        kept, bad = with_sex(frame, (res.determinations,), res.rejected, has_sex, lang)
        if has_status:
            kept, bad = with_status(frame, kept, bad, as_of, lang)
        if more is not None:
            kept, bad = more(frame, kept, bad)
        return kept, bad

    def use(d: Decided) -> None:
        det = d.kept[0]
        paid = det.clear()
        if has_status:
            code = det["_bstatus"]
            summary.in_pay += int((code == IN_PAY).sum())
            summary.deceased += int((code == DECEASED).sum())
            summary.refunded += int((code == REFUNDED).sum())
            paid = det.filter(code == IN_PAY)
            if keep_gone:
                gone.append(det.filter((code == DECEASED) | (code == REFUNDED))
                            .select("participant_id", "_bstatus", *keep))
            det = det.filter(code == DEFERRED)
        out = det["status"] == "not_entitled"
        summary.not_entitled += int(out.sum())
        if keep_gone:
            gone.append(det.filter(out).select(
                "participant_id", pl.lit(NOT_ENTITLED, dtype=pl.Int8).alias("_bstatus"),
                *keep))
        part = members_frame(det, rule, extra=True)
        if keep:
            part = part.with_columns(det.filter(pl.col("status") != "not_entitled")
                                     .select(*keep))
        if paid.height:
            part = pl.concat([part, in_pay_frame(paid, part.schema, keep)])
        parts.append(part)

    tally = run.run(decide, use)
    summary.rows_read, summary.rows_rejected = tally.rows_read, tally.rows_rejected
    summary.problems, summary.blank = tally.problems, tally.blank
    if summary.rows_read == 0:
        raise FileProblem("no_rows", file=summary.input)
    members = pl.concat(parts) if parts else None
    summary.projected = (members.height if members is not None else 0) - summary.in_pay
    summary.check()
    if members is None:
        members = pl.DataFrame(schema={**MEMBER_SCHEMA, **dict.fromkeys(keep, pl.String)})
    left = pl.concat(gone) if gone else pl.DataFrame(
        schema={"participant_id": pl.String, "_bstatus": pl.Int8,
                **dict.fromkeys(keep, pl.String)})
    return members, left


def members_frame(det: pl.DataFrame, rule: StartRule, extra: bool = False) -> pl.DataFrame:
    """The entitled members of a table of determinations (with `_sex`), as
    the projection's engine reads them (`extra`: with what the valuation's
    breakdown and claim assumption read too)."""
    det = det.filter(pl.col("status") != "not_entitled")
    more: list[pl.Expr | str] = [pl.lit(False).alias("_in_pay"), "group", "regime",
                                 "eligibility_date"] if extra else []
    return det.select(
        "participant_id", "status", "monthly_amount", "_sex",
        pl.col("birth_date").cast(pl.Int32).alias("_birth"),
        start_days(det, rule).alias("start_date"),
        pl.col("group").replace_strict(KIND_OF_GROUP, return_dtype=pl.Int8).alias("_kind"),
        (pl.col("monthly_amount") * 100).cast(pl.Int64).alias("_cents"),
        *more,
    )


MEMBER_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "participant_id": pl.String, "status": pl.String, "monthly_amount": output.MONEY,
    "_sex": pl.Int8, "_birth": pl.Int32, "start_date": pl.Date, "_kind": pl.Int8,
    "_cents": pl.Int64, "_in_pay": pl.Boolean, "group": pl.String, "regime": pl.String,
    "eligibility_date": pl.Date}


def in_pay_frame(det: pl.DataFrame, schema: pl.Schema, keep: Sequence[str] = ()
                 ) -> pl.DataFrame:
    """Members already in pay: projected from the amount being paid (never
    recomputed) from the date payments began; status `in_pay`."""
    return det.select(
        "participant_id", pl.lit("in_pay").alias("status"),
        (pl.col("_pay_cents").cast(output.MONEY) / 100).cast(output.MONEY)
        .alias("monthly_amount"), "_sex",
        pl.col("birth_date").cast(pl.Int32).alias("_birth"),
        pl.col("_pay_since").cast(pl.Int32).cast(pl.Date).alias("start_date"),
        pl.col("group").replace_strict(KIND_OF_GROUP, return_dtype=pl.Int8).alias("_kind"),
        pl.col("_pay_cents").alias("_cents"), pl.lit(True).alias("_in_pay"), "group",
        "regime", "eligibility_date", *keep,
    ).cast(schema)


def with_status(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
                as_of: date, lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's benefit status (`_bstatus`) and,
    in pay, the amount (`_pay_cents`) and start (`_pay_since`, a day
    number); a row whose status columns cannot be read rejected too."""
    h = frame.height
    birth = None
    if "birth_date" in frame.columns:
        raw = frame.get_column("birth_date")
        birth = raw.cast(pl.Date, strict=False) if raw.dtype != pl.String else \
            raw.str.strip_chars().str.to_date("%Y-%m-%d", strict=False)
    cols, st_bad = check_status(frame, birth, as_of, lang)
    rejected = np.zeros(h, dtype=bool)
    if bad.height:
        rejected[bad["row"].to_numpy()] = True
    added = [pl.Series("_bstatus", cols.code[~rejected], dtype=pl.Int8),
             pl.Series("_pay_cents", cols.cents[~rejected], dtype=pl.Int64),
             pl.Series("_pay_since", cols.since[~rejected], dtype=pl.Int64)]
    kept = tuple(k.with_columns(added) for k in kept)
    return reject_rows(kept, bad, st_bad, h)


def with_sex(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
             has_sex: bool, lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's sex code (`_sex`: the file's column,
    or unknown), and a row whose sex cannot be read rejected too."""
    h = frame.height
    codes = np.full(h, engine.UNKNOWN, dtype=np.int8)
    if has_sex:
        codes, sex_bad = check_sex(frame, lang)
    rejected = np.zeros(h, dtype=bool)
    if bad.height:
        rejected[bad["row"].to_numpy()] = True
    sex = pl.Series("_sex", codes[~rejected], dtype=pl.Int8)
    kept = tuple(k.with_columns(sex) for k in kept)
    if has_sex:
        kept, bad = reject_rows(kept, bad, sex_bad, h)
    return kept, bad


def _subtitle(info: dict[str, Any]) -> str:
    a = info["assumptions"]
    return (f"Valuation date {a['valuation_date']}; mortality {a['mortality']['table']}"
            f" ({a['mortality']['improvement']}); discount {', '.join(a['discount_rates'])};"
            f" COLA {a['cola']}; {info['counts']['projected']:,} members")


def assumptions_of(summary: ProjectionSummary, rules: Rules, table: MortalityTable,
                 rates, cola, rule: StartRule, horizon, blend: float, has_sex: bool,
                 fiscal_years: int) -> dict[str, Any]:
    """The run's assumptions and counts, as every projection states them
    (`summary`: the counts of the census read; `fiscal_years` projected)."""
    imp = table.improvement
    return {
        "assumptions": {
            "rules": {"name": rules.name, "title": rules.title, "version": rules.version},
            **({"relief": relief_record(rules)} if rules.relief is not None else {}),
            "valuation_date": (summary.valuation_date or summary.as_of).isoformat(),
            "fiscal_year": "1 July - 30 June, named by the year in which it ends; year 1 "
                           "holds the valuation date (on 30 June: the next fiscal year)",
            "payments": "monthly, on the 1st; the first on the first 1st on or after the "
                        "later of the valuation date and the start date; the last in the "
                        f"month in which age {MAX_AGE} is reached"
                        + (f", or the last June of fiscal year {horizon} "
                           f"(FY{_last_year(summary, horizon)})"
                           if horizon else ""),
            "start_rule": rule.text + (
                " (the eligibility date, or the requested start when there is one and it is "
                "not premature)" if rule.age is None else
                f" (the later of the day age {rule.age} is reached and the eligibility date; "
                "requested starts ignored)"),
            "horizon_fiscal_years": horizon,
            "mortality": {
                "table": table.name, "description": table.description,
                "improvement": imp.name if imp else "none",
                "improvement_source": imp.source if imp else None,
                "base_year": table.base_year if imp else None,
                "source": table.source or None,
                "notes": table.notes,
                "fractional_ages": "uniform distribution of deaths within each year of age; "
                                   "exact age = completed years + days since the last "
                                   "birthday / days in that year of age",
                "switch": "before-start rates up to the later of the valuation date and the "
                          "start date, after-start rates from then",
                "last_age": MAX_AGE,
            },
            "sex": ("no mortality: not used" if table.none else
                    (f"from the file's sex column where given; where empty, the survival "
                     f"of the two sexes blended {blend:g} F / {1 - blend:g} M"
                     if has_sex else
                     f"the file has no sex column: the survival of the two sexes blended "
                     f"{blend:g} F / {1 - blend:g} M for every member")),
            "discount_rates": [label for label, _ in rates],
            "discount": "present value factor (1 + i)^(-t), t = days from the valuation "
                        "date to the payment date / 365.25",
            "cola": str(Decimal(cola.numerator) / Decimal(cola.denominator)),
            "cola_rule": "a COLA goes to the pensions in pay before its 1 July: an "
                         "amount in pay is raised on each 1 July after --as-of, a "
                         "deferred pension on each 1 July strictly after its first "
                         "payment; the monthly amount x (1 + cola), rounded half up to "
                         "the cent",
            "rounding": "expected values computed in float64, reported rounded half up to "
                        "the cent; TOTAL is the sum of the rounded rows",
        },
        "counts": {
            "rows_read": summary.rows_read, "projected": summary.projected,
            "not_entitled": summary.not_entitled, "rows_rejected": summary.rows_rejected,
            "problems": summary.problems, "sex_given": summary.sex_given,
            "sex_blended": summary.sex_blended if not table.none else 0,
            "fiscal_years": fiscal_years,
        },
        "totals": summary.totals,
        "input": summary.input,
        "software": {"diferida": _version()},
    }


def relief_record(rules: Rules) -> dict[str, Any]:
    """The rules' post-start adjustments, as the assumptions record them."""
    assert rules.relief is not None
    return {"citation": rules.relief.citation, "adjustments": [
        {k: (str(v) if v is not None and not isinstance(v, tuple) else
             [[y, str(r)] for y, r in v] if isinstance(v, tuple) else None)
         for k, v in vars(a).items() if v not in (None, (), "")}
        for a in rules.relief.ordered()]}


def _last_year(summary: ProjectionSummary, horizon: int) -> int:
    return engine.first_fiscal_year(summary.valuation_date or summary.as_of) + horizon - 1


def fiscal_year_of(d: date) -> int:
    return d.year + (d.month >= 7)


def member_arrays(members: pl.DataFrame, v_date: date, as_of: date, cola: Fraction
                  ) -> Members:
    """The engine's arrays of a members frame (members_frame, in_pay_frame).
    An amount in pay is the census's amount as of `as_of`. A COLA goes to
    the pensions in pay before its 1 July (docs/project.md): so the amount
    is first raised by the COLA of each 1 July after `as_of` up to and
    including the member's first projected payment (as a real payment would
    have been: rounded half up each year), then by the engine's rule (each
    1 July strictly after that payment). The same for every `as_of` of one
    fiscal year: a census dated 30 June and one dated 29 June both take the
    raise of the next day. A 1 July on or before `as_of` is in the census's
    amount already; with the valuation date before `as_of`, the amount is
    taken as paid from the valuation date."""
    cents = members["_cents"].to_numpy().astype(np.int64)
    in_pay = members["_in_pay"].to_numpy()
    if cola != 0 and in_pay.any():
        cents = cents.copy()
        since = members["start_date"].cast(pl.Int32).to_numpy().astype(np.int64)
        first = engine.month_day(engine.month_number(
            np.maximum(since, engine.day_number(v_date))))
        julys = engine.fiscal_year(first) - fiscal_year_of(as_of)
        for n in np.unique(julys[in_pay & (julys > 0)]):
            sel = in_pay & (julys == n)
            cents[sel] = engine.cola_amounts(cents[sel], int(n) + 1, cola)[:, int(n)]
    return Members(
        members["_birth"].to_numpy().astype(np.int64),
        members["start_date"].cast(pl.Int32).to_numpy().astype(np.int64),
        cents, members["_sex"].to_numpy(), members["_kind"].to_numpy(), in_pay=in_pay)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("diferida")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


__all__ = ["ProjectionSummary", "project_file", "sidecar_path", "day_date"]
