"""`compare_file`: one member file, two rule sets, what changes.

The file is read once, exactly as `diferida batch` reads it (the same reader,
column map, limits and rejects); each chunk is decided under rules A and
under rules B by the core. A row is rejected for both sides or for neither
(the checks of a row do not depend on the rules; a run where they differ
fails loudly), so rows read = rows compared + rows rejected, checked. With
the projection options both sides are projected with the projection's
engine and assumptions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import polars as pl

from ..batch.errors import FileProblem
from ..batch.io import kind_of
from ..batch.outputs import XLSX_MAX_ROWS
from ..batch.population import (
    AccountingError,
    Decided,
    check_other_target,
    check_table_target,
)
from ..batch.run import PopulationRun, RunKwargs, RunOptions
from ..core import evaluate_pair
from ..errors import DiferidaError
from ..i18n import DEFAULT_LANG, check_lang
from ..rules import Rules, load_rules
from . import engine as cmp

Progress = Callable[[str, int, int], None]
TABLES = ("summary", "transitions", "changed_members", "eligibility_shifts", "amount_changes",
          "fiscal_years", "sensitivity", "bands", "band_counts", "payers", "payer_counts")
# written only with the projection when a side carries a relief or --bands is
# given (bands.py); the payers' too only when the census has an employer column
BAND_TABLES = ("bands", "band_counts")
PAYER_TABLES = ("payers", "payer_counts")


class CompareOptionError(DiferidaError, ValueError):
    """An option of the comparison that cannot be used."""


@dataclass
class CompareSummary:
    input: str
    output: str
    rules_a: Rules
    rules_b: Rules
    as_of: date
    rejects: str | None = None
    html: str | None = None
    files: list[str] = field(default_factory=list)
    rows_read: int = 0
    rows_compared: int = 0
    rows_rejected: int = 0
    # the census's benefit status (projection/status.py): members in pay,
    # deceased or refunded are not decided under either rules set
    in_pay: int = 0
    deceased: int = 0
    refunded: int = 0
    has_status: bool = False
    valuation_date: date | None = None
    problems: int = 0
    blank: int = 0
    changed: int = 0
    status_changed: int = 0
    route_changed: int = 0
    date_moved: int = 0
    amount_changed: int = 0
    totals: cmp.Totals = field(default_factory=cmp.Totals)
    fiscal: dict[str, Decimal] = field(default_factory=dict)
    # with --sensitivity: the grid of A, of B and B - A (`sensitivity_frame`)
    sensitivity: pl.DataFrame | None = None
    # the relief's cost by band and by payer, and headcounts (bands.py)
    relief_tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    relief_totals: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"read_and_decide": 0.0, "explain": 0.0, "project": 0.0,
                                 "write": 0.0, "total": 0.0})
    sample: pl.DataFrame | None = None

    def check(self) -> None:
        # rows in = compared (deferred) + in pay + deceased + refunded + rejected
        if self.rows_read != (self.rows_compared + self.in_pay + self.deceased + self.refunded
                              + self.rows_rejected):
            raise AccountingError(
                f"{self.rows_read} rows read, {self.rows_compared} compared, {self.in_pay} in "
                f"pay, {self.deceased} deceased, {self.refunded} refunded, "
                f"{self.rows_rejected} rejected")

    def items(self) -> list[tuple[str, Any]]:
        """The summary as (item, value) pairs, in reading order."""
        t = self.totals
        a, b = self.rules_a, self.rules_b
        out: list[tuple[str, Any]] = [
            ("input", self.input),
            ("as_of", self.as_of.isoformat()),
            ("rules_a", a.name), ("rules_a_version", a.version), ("rules_a_title", a.title),
            ("rules_b", b.name), ("rules_b_version", b.version), ("rules_b_title", b.title),
        ]
        for label, r in (("a", a), ("b", b)):
            if r.illustrative:
                out.append((f"rules_{label}_note", "ILLUSTRATIVE REFORM, NOT LAW"))
        if self.valuation_date is not None and self.valuation_date != self.as_of:
            out.append(("valuation_date", self.valuation_date.isoformat()))
        out += [
            ("rows_read", self.rows_read),
            ("rows_rejected", self.rows_rejected),
            ("problems", self.problems),
        ]
        if self.has_status:
            out += [("in_pay", self.in_pay), ("deceased", self.deceased),
                    ("refunded", self.refunded)]
        out += [
            ("members_compared", self.rows_compared),
            ("members_changed", self.changed),
            ("members_unchanged", self.rows_compared - self.changed),
            ("status_changed", self.status_changed),
            ("route_changed", self.route_changed),
            ("eligibility_date_moved", self.date_moved),
            ("annual_amount_changed", self.amount_changed),
            ("entitled_a", t.entitled_a), ("entitled_b", t.entitled_b),
            ("annual_amount_total_a", t.annual_a), ("annual_amount_total_b", t.annual_b),
            ("annual_amount_total_difference", t.annual_b - t.annual_a),
            ("monthly_amount_total_a", t.monthly_a), ("monthly_amount_total_b", t.monthly_b),
            ("monthly_amount_total_difference", t.monthly_b - t.monthly_a),
        ]
        out += list(self.fiscal.items())
        out += list(self.relief_totals.items())
        return out

    def to_dict(self) -> dict[str, Any]:
        d = {k: (str(v) if isinstance(v, Decimal) else v) for k, v in self.items()}
        d.update({"output": self.output, "rejects": self.rejects, "html": self.html,
                  "files": self.files, "blank_lines": self.blank,
                  "seconds": {k: round(v, 3) for k, v in self.seconds.items()}})
        return d


@dataclass
class Projecting:
    """The projection options, parsed (the same as `diferida project`)."""

    discount: str | Sequence[str]
    mortality: str = "none"
    improvement: str | None = None
    cola: str | Decimal = "0"
    start: str = "eligibility"
    horizon: int | str | None = None
    sex_blend: str | float = "0.5"
    table: Any = None  # a MortalityTable built in code (tests)
    # the valuation basis, as `diferida project`'s options of the same names
    valuation_date: date | None = None
    claim_rates: str | Path | None = None
    mortality_scale: str | float | None = None
    sensitivity: bool = False
    # --bands: the monthly amounts that bound the bands (bands.parse_bands);
    # None: the bands of the relief's rules file (bands.rules_bands), the tables then
    # only when a side has a relief
    bands: str | None = None


def table_paths(out: Path, sensitivity: bool = False, bands: bool = False,
                payers: bool = False) -> dict[str, Path]:
    """comparison.csv -> comparison.summary.csv, comparison.transitions.csv, ...
    (comparison.sensitivity.csv too when `sensitivity`: with --sensitivity;
    comparison.bands.csv and comparison.band_counts.csv when `bands`,
    comparison.payers.csv and comparison.payer_counts.csv when `payers`)."""
    return {name: out.with_name(f"{out.stem}.{name}{out.suffix}") for name in TABLES
            if (name != "sensitivity" or sensitivity) and (name not in BAND_TABLES or bands)
            and (name not in PAYER_TABLES or payers)}


def compare_file(
    input: str | Path,
    output: str | Path,
    rules: Sequence[str | Path | Rules],
    *,
    rejects: str | Path | None = None,
    html: str | Path | None = None,
    as_of: date | None = None,
    projecting: Projecting | None = None,
    progress: Progress | None = None,
    **common: Unpack[RunKwargs],
) -> CompareSummary:
    """Compare rules A and B (`rules`, two of them) over every member of a
    file. `output` is .xlsx (a workbook with a sheet per table) or .csv /
    .parquet (one file per table, named from it: see `table_paths`); `html` a
    self-contained report. Raises RulesError, CompareOptionError,
    FileProblem (or the projection's OptionError, TableError) before
    anything is read or written."""
    from ..liability.employer import EMPLOYER_COLUMN
    from ..projection.sex import SEX_COLUMN
    from ..projection.status import COLUMNS as STATUS_COLUMNS

    started = time.perf_counter()
    check_lang(common.get("lang", DEFAULT_LANG), CompareOptionError, "--lang")
    o = RunOptions(**common)
    lang = o.lang
    if len(rules) != 2:
        raise CompareOptionError(f"--rules: give exactly two rule sets, A and B (got "
                                 f"{len(rules)})")
    # the rules first: a bad reform is refused before any member is read
    ra, rb = load_rules(rules[0]), load_rules(rules[1])
    proj = _projection_setup(projecting, lang, ra, rb) if projecting is not None else None
    banding = proj is not None and (proj["bands_asked"] or ra.relief is not None
                                    or rb.relief is not None)
    f = _compare_files(o, input, output, rejects, html, proj, banding)
    day = as_of or date.today()
    summary = CompareSummary(str(f.inp), str(f.out), ra, rb, day,
                             str(f.rej) if f.rej else None, str(f.page) if f.page else None)
    if proj is not None:
        summary.valuation_date = proj["valuation_date"] or day
    secs = summary.seconds
    with PopulationRun(
            f.inp, options=o, extra_fields=(SEX_COLUMN, *STATUS_COLUMNS, EMPLOYER_COLUMN),
            rejects=f.rej,
            progress=(lambda d, t: progress("decide", d, t)) if progress is not None
            else None) as run:
        columns = run.source.columns
        # the census's status, read as `diferida project` reads it (with_status);
        # the payer: the employer column, read as the valuation reads it
        cp = ComparePass(summary, ra, rb, day, lang, proj, banding,
                         has_sex=proj is not None and SEX_COLUMN in columns,
                         has_status=any(c in columns for c in STATUS_COLUMNS),
                         has_employer=banding and EMPLOYER_COLUMN in columns)
        if cp.has_employer and f.out_kind != "xlsx":
            _check_payer_files(f, o.overwrite)
        tick = time.perf_counter()
        tally = run.run(cp.decide, cp.use)
        summary.rows_read, summary.rows_rejected = tally.rows_read, tally.rows_rejected
        summary.problems, summary.blank = tally.problems, tally.blank
        secs["read_and_decide"] = time.perf_counter() - tick
        if summary.rows_read == 0:
            raise FileProblem("no_rows", file=str(f.inp))
        summary.check()
        tick = time.perf_counter()
        tables = _explained(cp, f)
        secs["explain"] = time.perf_counter() - tick
        assumptions = _assumptions(ra, rb, day, f.inp)
        if proj is not None:
            tick = time.perf_counter()
            fiscal, assumptions["projection"] = _project_both(
                proj, cp.members_a, cp.members_b, summary, ra, rb, cp.has_sex, lang,
                cp.keys if banding else None, cp.has_employer)
            tables["fiscal_years"] = fiscal
            secs["project"] = time.perf_counter() - tick
        tick = time.perf_counter()
        _write_compare(run, f, tables, assumptions, summary, lang)
        secs["write"] = time.perf_counter() - tick
        summary.sample = run.sample
    secs["total"] = time.perf_counter() - started
    return summary


@dataclass
class CompareFiles:
    """The files of a comparison, each checked before anything is read: the
    census, the output (a workbook, or a table per part), the rejects, the
    page, the assumptions beside the tables; `outputs` every one taken."""

    inp: Path
    out: Path
    out_kind: str
    rej: Path | None
    page: Path | None
    side: Path | None
    outputs: list[tuple[str, Path]]


def _compare_files(o: RunOptions, input: str | Path, output: str | Path,
                   rejects: str | Path | None, html: str | Path | None,
                   proj: dict[str, Any] | None, banding: bool) -> CompareFiles:
    overwrite = o.overwrite
    inp, out = Path(input), Path(output)
    rej = Path(rejects) if rejects is not None else None
    page = Path(html) if html is not None else None
    kind_of(inp)
    out_kind = kind_of(out)
    targets = [("-o/--output", out)] if out_kind == "xlsx" else [
        (f"-o/--output ({p.name})", p) for name, p in table_paths(
            out, sensitivity=proj is not None and proj["sensitivity"], bands=banding).items()
        if name != "fiscal_years" or proj is not None]
    side = out.with_name(out.stem + ".assumptions.json") if out_kind != "xlsx" else None
    outputs: list[tuple[str, Path]] = []
    for option, p in targets:
        check_table_target(p, [inp], overwrite, option=option, outputs=outputs)
        outputs.append((option, p))
    if rej is not None:
        check_table_target(rej, [inp], overwrite, option="--rejects", outputs=outputs)
        outputs.append(("--rejects", rej))
    for extra, suffixes, option in ((side, None, f"-o/--output ({side.name})" if side else ""),
                                    (page, [".html", ".htm"], "--html")):
        if extra is not None:
            check_other_target(extra, [inp], overwrite, suffixes, option=option,
                               outputs=outputs)
            outputs.append((option, extra))
    taken = [inp, *(p for _, p in outputs)]
    if len({p.resolve() for p in taken}) != len(taken):
        raise CompareOptionError("the output files must all be different files")
    if page is not None and proj is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CompareOptionError("--html: the chart needs the optional package "
                                     "matplotlib; install it with: pip install "
                                     "'diferida[plot]'") from None
    return CompareFiles(inp, out, out_kind, rej, page, side, outputs)


def _check_payer_files(f: CompareFiles, overwrite: bool) -> None:
    """The payers' tables, known once the census shows its employer column."""
    for name, p in table_paths(f.out, payers=True).items():
        if name in PAYER_TABLES:
            option = f"-o/--output ({p.name})"
            check_table_target(p, [f.inp], overwrite, option=option, outputs=f.outputs)
            f.outputs.append((option, p))


class ComparePass:
    """The pass of a comparison: each chunk decided under A and under B
    (`decide`), then counted, compared and kept (`use`): the changed
    members and their inputs, the transitions, each side's members for the
    projection and their keys for the bands and payers."""

    def __init__(self, summary: CompareSummary, ra: Rules, rb: Rules, day: date, lang: str,
                 proj: dict[str, Any] | None, banding: bool, *, has_sex: bool,
                 has_status: bool, has_employer: bool):
        self.summary, self.ra, self.rb, self.day, self.lang = summary, ra, rb, day, lang
        self.proj, self.banding = proj, banding
        self.has_sex, self.has_status, self.has_employer = has_sex, has_status, has_employer
        summary.has_status = has_status
        self.sbs_parts: list[pl.DataFrame] = []
        self.trans_parts: list[pl.DataFrame] = []
        self.changed_inputs: list[pl.DataFrame] = []
        self.members_a: list[pl.DataFrame] = []
        self.members_b: list[pl.DataFrame] = []
        # each side's members (in the order of its projection's frame): the
        # census row, in pay or not, the employer
        self.keys: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]] = {
            "a": [], "b": []}
        # the start asked for: the workbook says each side's start in words
        # (rules §5), the request included (output.START_HIDDEN)
        self.inputs = (*(("birth_date", "group") if proj is not None or has_status else ()),
                       "requested_start_date")

    def decide(self, frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
        from ..liability.employer import with_employer
        from ..projection.runner import with_sex, with_status
        lang = self.lang
        res_a, res_b = evaluate_pair(frame, as_of=self.day, rules_a=self.ra, rules_b=self.rb,
                                     lang=lang, require_id=True, inputs=self.inputs)
        bad = res_a.rejected
        if not res_b.rejected["row"].unique().sort().equals(bad["row"].unique().sort()):
            raise AccountingError("rules A and rules B rejected different rows")
        kept: tuple[pl.DataFrame, ...] = (res_a.determinations, res_b.determinations)
        if self.proj is not None:
            kept, bad = with_sex(frame, kept, bad, self.has_sex, lang)
        if self.has_status:
            kept, bad = with_status(frame, kept, bad, self.day, lang)
        if self.has_employer:
            kept, bad = with_employer(frame, kept, bad, lang)
        return kept, bad

    def use(self, d: Decided) -> None:
        from ..liability.employer import EMPLOYER_COLUMN
        from ..projection.status import DECEASED, DEFERRED, IN_PAY, REFUNDED
        summary = self.summary
        det_a, det_b = d.kept
        paid_a = paid_b = None
        if self.has_status:
            # in pay, deceased, refunded: counted, never decided under A or B
            code = det_a["_bstatus"]
            summary.in_pay += int((code == IN_PAY).sum())
            summary.deceased += int((code == DECEASED).sum())
            summary.refunded += int((code == REFUNDED).sum())
            paid_a, paid_b = det_a.filter(code == IN_PAY), det_b.filter(code == IN_PAY)
            keep = code == DEFERRED
            det_a = det_a.filter(keep).drop("_bstatus", "_pay_cents", "_pay_since")
            det_b = det_b.filter(keep).drop("_bstatus", "_pay_cents", "_pay_since")
            positions = d.positions[keep.to_numpy()]
            paid_rows = d.chunk.rows[d.positions[(code == IN_PAY).to_numpy()]]
        else:
            positions = d.positions
            paid_rows = np.zeros(0, dtype=np.int64)
        if self.banding:
            self._keep_keys(d, positions, paid_rows, (det_a, paid_a), (det_b, paid_b))
        if self.has_employer:
            det_a, det_b = det_a.drop(EMPLOYER_COLUMN), det_b.drop(EMPLOYER_COLUMN)
        if self.proj is not None:  # the projection's members, then the compared columns
            self._keep_members(det_a, paid_a, self.members_a)
            self._keep_members(det_b, paid_b, self.members_b)
            det_a, det_b = det_a.drop("_sex"), det_b.drop("_sex")
        self._compare(d, positions, det_a, det_b)

    def _keep_keys(self, d: Decided, positions: np.ndarray, paid_rows: np.ndarray,
                   *sides: tuple[pl.DataFrame, pl.DataFrame | None]) -> None:
        from ..liability.employer import EMPLOYER_COLUMN
        for side, (det, paid) in zip(("a", "b"), sides, strict=True):
            entitled = (det["status"] != "not_entitled").to_numpy()
            rows = np.concatenate([d.chunk.rows[positions[entitled]],
                                   paid_rows]).astype(np.int64)
            flag = np.concatenate([np.zeros(int(entitled.sum()), dtype=bool),
                                   np.ones(len(paid_rows), dtype=bool)])
            payer = None
            if self.has_employer:
                payer = np.concatenate([
                    det[EMPLOYER_COLUMN].to_numpy()[entitled],
                    paid[EMPLOYER_COLUMN].to_numpy() if paid is not None
                    else np.zeros(0, dtype=object)]).astype(object)
            self.keys[side].append((rows, flag, payer))

    def _keep_members(self, det: pl.DataFrame, paid: pl.DataFrame | None,
                      parts: list[pl.DataFrame]) -> None:
        from ..projection.runner import in_pay_frame, members_frame
        assert self.proj is not None
        part = members_frame(det, self.proj["rule"], extra=True)
        if paid is not None and paid.height:
            # the amount being paid, the same under A and B (never recomputed)
            part = pl.concat([part, in_pay_frame(paid, part.schema)])
        parts.append(part)

    def _compare(self, d: Decided, positions: np.ndarray, det_a: pl.DataFrame,
                 det_b: pl.DataFrame) -> None:
        summary = self.summary
        summary.rows_compared += det_a.height
        summary.totals.add(det_a, det_b)
        self.trans_parts.append(cmp.transitions(det_a, det_b))
        mask = cmp.changed_mask(det_a, det_b)
        sbs = cmp.side_by_side(det_a, det_b).with_columns(
            pl.Series("row", d.chunk.rows[positions], dtype=pl.Int64),
            det_a["requested_start_date"].alias("_requested_start_date"),
            det_a["premature_request"].alias("_premature_request_a"),
            det_b["premature_request"].alias("_premature_request_b"))
        self.sbs_parts.append(sbs.filter(mask))
        self.changed_inputs.append(d.chunk.frame[positions[mask.to_numpy()]])
        summary.status_changed += int(det_a["status"].ne_missing(det_b["status"]).sum())
        summary.route_changed += int(det_a["route"].ne_missing(det_b["route"]).sum())
        summary.date_moved += int(det_a["eligibility_date"].ne_missing(
            det_b["eligibility_date"]).sum())
        summary.amount_changed += int(det_a["annual_amount"].ne_missing(
            det_b["annual_amount"]).sum())


def _explained(cp: ComparePass, f: CompareFiles) -> dict[str, pl.DataFrame]:
    """The tables of what changed, each change explained: the transitions,
    the changed members (with the finding that explains each), the
    eligibility shifts, the amount changes."""
    summary = cp.summary
    changed = pl.concat(cp.sbs_parts)
    summary.changed = changed.height
    if f.out_kind == "xlsx" and changed.height > XLSX_MAX_ROWS:
        raise FileProblem("xlsx_too_big", file=str(f.out), rows=f"{changed.height:,}",
                          limit=f"{XLSX_MAX_ROWS:,}")
    why = cmp.explain_changes(pl.concat(cp.changed_inputs), cp.ra, cp.rb, cp.day, cp.lang) \
        if changed.height else None
    transitions = (pl.concat(cp.trans_parts)
                   .group_by("status_a", "route_a", "status_b", "route_b", "changes")
                   .agg(pl.col("members").sum())
                   .sort(["changes", "members", "status_a", "route_a", "status_b",
                          "route_b"], descending=[True, True, False, False, False, False],
                         nulls_last=True)
                   .select("status_a", "route_a", "status_b", "route_b", "members",
                           "changes"))
    if int(transitions["members"].sum()) != summary.rows_compared:
        raise AccountingError("the transitions do not add up to the members compared")
    return {"transitions": transitions, "changed_members": _changed_table(changed, why),
            "eligibility_shifts": cmp.eligibility_shifts(changed),
            "amount_changes": cmp.amount_changes(changed)}


def _assumptions(ra: Rules, rb: Rules, day: date, inp: Path) -> dict[str, Any]:
    return {"rules": {
        "a": _rules_info(ra), "b": _rules_info(rb)}, "as_of": day.isoformat(),
        "input": str(inp), "changed": "a member whose determination differs in any of: "
        + ", ".join(cmp.COMPARED),
        "explaining_finding": "the first finding that differs between the explanations "
        "under A and B, matched by subject: those before the routes, then the route that "
        "decided A (or B, when A has none): why it no longer decides under B, or which "
        "route decides instead and why; then the amount and what follows. A route that "
        "decides neither never explains (compare.why.explaining_finding)"}


def _write_compare(run: PopulationRun, f: CompareFiles, tables: dict[str, pl.DataFrame],
                   assumptions: dict[str, Any], summary: CompareSummary, lang: str) -> None:
    """Every output written and put in place together: the workbook (or a
    table per part and the assumptions beside them), the page."""
    from . import output as out_mod
    # the summary's table first, made last: the projection adds to its counts
    tables = {"summary": out_mod.summary_frame(summary.items()), **tables}
    if summary.sensitivity is not None:
        tables["sensitivity"] = summary.sensitivity
    tables.update(summary.relief_tables)
    if f.out_kind == "xlsx":
        run.data(f.out, out_mod.workbook(tables, assumptions, summary, lang))
        summary.files.append(str(f.out))
    else:
        assert f.side is not None
        paths = table_paths(f.out, sensitivity="sensitivity" in tables,
                            bands="bands" in tables, payers="payers" in tables)
        for name, frame in tables.items():
            run.output(paths[name], out_mod.for_file(frame))
            summary.files.append(str(paths[name]))
        run.data(f.side, out_mod.json_bytes(assumptions))
        summary.files.append(str(f.side))
    if f.page is not None:
        run.data(f.page, out_mod.html_report(tables, assumptions, summary, lang))
        summary.files.append(str(f.page))
    run.commit()  # every output, or none


def _rules_info(r: Rules) -> dict[str, Any]:
    return {"name": r.name, "version": r.version, "title": r.title,
            "illustrative": r.illustrative}


def _changed_table(changed: pl.DataFrame, why: pl.DataFrame | None) -> pl.DataFrame:
    cols = ["row", "participant_id"]
    for c in cmp.COMPARED:
        cols += [f"{c}_a", f"{c}_b"]
    cols += ["eligibility_shift_days", "eligibility_shift_months", "annual_change"]
    from .output import START_HIDDEN

    # for the workbook's starts in words only (output.START_HIDDEN): not in the files
    cols += [c for c in START_HIDDEN if c in changed.columns]
    frame = changed.select(cols)
    if why is None:
        why = pl.DataFrame(schema={k: pl.String for k in (
            "finding_rule", "finding_condition", "finding_under_a", "finding_under_b")})
    return pl.concat([frame, why], how="horizontal")


def _projection_setup(p: Projecting, lang: str, ra: Rules, rb: Rules) -> dict[str, Any]:
    """The projection's options read as `diferida project` reads them
    (projection/options.py), the valuation basis included."""
    from ..projection.claims import load_claim_rates
    from ..projection.mortality import resolve, scaled
    from ..projection.options import (
        OptionError,
        parse_cola,
        parse_horizon,
        parse_mortality_scale,
        parse_rates,
        parse_sex_blend,
        parse_start,
    )
    scale = parse_mortality_scale(p.mortality_scale)
    out: dict[str, Any] = {"rates": parse_rates(p.discount), "cola": parse_cola(p.cola),
                           "rule": parse_start(p.start), "horizon": parse_horizon(p.horizon),
                           "blend": parse_sex_blend(p.sex_blend), "scale": scale}
    table = p.table
    if table is None:
        table = resolve(p.mortality, p.improvement)
    elif p.improvement not in (None, "none"):
        raise OptionError("--improvement: give the improved rates in the table itself")
    if scale != 1.0:
        table = scaled(table, scale)
    out["table"] = table
    out["claims"] = load_claim_rates(p.claim_rates, lang) if p.claim_rates is not None \
        else None
    out["valuation_date"] = p.valuation_date
    out["sensitivity"] = p.sensitivity
    from .bands import BandsError, parse_bands, rules_bands
    try:
        out["bands"] = parse_bands(p.bands, lang) if p.bands is not None else \
            rules_bands(ra, rb)
    except BandsError as exc:
        raise CompareOptionError(str(exc)) from None
    out["bands_asked"] = p.bands is not None
    return out


def _project_both(proj: dict[str, Any], parts_a: list[pl.DataFrame],
                  parts_b: list[pl.DataFrame], summary: CompareSummary, ra: Rules, rb: Rules,
                  has_sex: bool, lang: str, keys: dict[str, list] | None = None,
                  has_employer: bool = False) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Both sides projected as `diferida project` projects a census (the same
    members' frames, in-pay members from the amount being paid, the same
    engine, claim rates and valuation date); the fiscal-year table of A, B
    and B - A, and with --sensitivity the grid of each side. With `keys`
    (each side's members' census rows, in pay, employer): each side run by
    the engine's groups, a group per band and payer, for the band and payer
    tables and headcounts (bands.py)."""
    from ..projection import adjust, analysis, engine, output
    from ..projection.claims import expand
    from ..projection.engine import Assumptions
    from ..projection.runner import MEMBER_SCHEMA, member_arrays

    labels = [label for label, _ in proj["rates"]]
    v_date = summary.valuation_date or summary.as_of
    assumptions = Assumptions(v_date, [float(v) for _, v in proj["rates"]],
                              proj["table"], proj["cola"], proj["horizon"], proj["blend"])
    tables, infos, grids = [], {}, []
    banded = _Banding(keys, proj["bands"], has_employer, v_date, proj["cola"],
                      [ra.relief, rb.relief]) if keys is not None else None
    for side, parts, r in (("a", parts_a, ra), ("b", parts_b, rb)):
        members = pl.concat(parts) if parts else pl.DataFrame(schema=MEMBER_SCHEMA)
        arrays = member_arrays(members, v_date, summary.as_of, proj["cola"])
        if banded is not None:
            banded.prepare(side, arrays, r.relief)
        if proj["claims"] is not None:
            arrays = expand(arrays, members["eligibility_date"].cast(pl.Int32).to_numpy()
                            .astype(np.int64), proj["claims"], engine.day_number(v_date))
            if banded is not None:
                assert arrays.owner is not None
                arrays.group = banded.group[side][arrays.owner]
                arrays.groups = banded.n_groups
        p = adjust.project(arrays, assumptions, r.relief, per_member=banded is not None)
        if proj["sensitivity"]:
            grids.append(analysis.sensitivity(arrays, assumptions, proj["rates"],
                                               proj["cola"], p, "en", r.relief))
        tbl = output.table_frame(p, labels, "en")
        tables.append(tbl)
        infos[side], last = _side_assumptions(proj, summary, members, p, tbl, r, has_sex,
                                              labels, v_date)
        if banded is not None:
            banded.projected(side, p, tbl, labels)
        summary.fiscal[f"payments_total_{side}"] = last["payments"]
        for label in labels:
            summary.fiscal[f"pv_{label}_total_{side}"] = last[f"pv_{label}"]
    for key in [k for k in summary.fiscal if k.endswith("_total_a")]:
        stem = key[:-len("_total_a")]
        summary.fiscal[f"{stem}_total_difference"] = (
            summary.fiscal[f"{stem}_total_b"] - summary.fiscal[key])
    if grids:
        summary.sensitivity = sensitivity_frame(grids[0], grids[1], labels,
                                                scenario_codes(proj))
    fiscal = _fiscal_table(tables[0], tables[1], labels)
    info = {k: v for k, v in infos["a"]["assumptions"].items() if k != "rules"}
    if banded is not None:
        summary.relief_tables, summary.relief_totals = banded.tables(fiscal, labels)
        info["bands"] = banded.assumptions()
    info["counts_a"] = infos["a"]["counts"]
    info["counts_b"] = infos["b"]["counts"]
    return fiscal, info


def _side_assumptions(proj: dict[str, Any], summary: CompareSummary, members: pl.DataFrame,
                      p: Any, tbl: pl.DataFrame, r: Rules, has_sex: bool, labels: list[str],
                      v_date: date) -> tuple[dict[str, Any], dict[str, Any]]:
    """One side's assumptions and counts, as `diferida project` states its
    own (its members projected, in pay, not entitled); (them, the fiscal
    years' total row)."""
    from ..projection import analysis
    from ..projection.runner import ProjectionSummary, assumptions_of
    in_pay = int(members["_in_pay"].sum())
    ps = ProjectionSummary(summary.input, summary.output, None, None, None, None,
                           summary.as_of, rows_read=summary.rows_read,
                           projected=members.height - in_pay,
                           not_entitled=summary.rows_compared - members.height + in_pay,
                           rows_rejected=summary.rows_rejected, problems=summary.problems,
                           in_pay=in_pay, deceased=summary.deceased,
                           refunded=summary.refunded,
                           sex_given=int((members["_sex"] >= 0).sum()),
                           valuation_date=v_date)
    ps.check()
    ps.sex_blended = members.height - ps.sex_given
    ps.starts_first_year = analysis.first_year_starts(p, v_date)
    last = tbl.row(tbl.height - 1, named=True)
    ps.totals = {label: str(last[f"pv_{label}"]) for label in labels}
    ps.totals["payments"] = str(last["payments"])
    info = assumptions_of(ps, r, proj["table"], proj["rates"], proj["cola"], proj["rule"],
                          proj["horizon"], proj["blend"], has_sex, len(p.fiscal_years))
    analysis.add_assumptions(info, ps, proj["claims"], proj["table"], [],
                             proj["sensitivity"])
    return info, last


def sensitivity_frame(a: pl.DataFrame, b: pl.DataFrame, labels: list[str],
                      codes: list[str]) -> pl.DataFrame:
    """The sensitivity grid of both sides on one row per scenario (the
    scenarios of `projection.analysis.scenarios`, the same for A and B):
    the scenario's code and its options, then total payments and the present
    value at each rate under A, under B and B - A, each as `diferida project
    --sensitivity` gives it for that side (a present value blank where the
    shifted rate is outside the allowed range: blank on both sides and in
    the difference)."""
    from ..projection.analysis import TEXT

    t = TEXT["en"]
    keys = {t["scenario"]: "scenario", t["discount_shift"]: "discount_shift",
            t["mortality_scale"]: "mortality_scale", t["improvement"]: "improvement",
            t["cola"]: "cola"}
    value_cols = ["payments", *[f"pv_{x}" for x in labels]]
    if a.height != b.height or a.select(list(keys)).rows() != b.select(list(keys)).rows():
        raise AccountingError("the sensitivity scenarios of A and B differ")
    out = a.select(list(keys)).rename(keys)
    # the scenario's code (base, discount_down, ...), for programs and for the words
    out = out.with_columns(pl.Series("scenario", codes, dtype=pl.String))
    cols = []
    for c in value_cols:
        sa, sb = a[c].alias(f"{c}_a"), b[c].alias(f"{c}_b")
        cols += [sa, sb, (sb - sa).cast(sa.dtype).alias(f"{c}_difference")]
    return pl.concat([out, pl.DataFrame(cols)], how="horizontal")


def scenario_codes(proj: dict[str, Any]) -> list[str]:
    """The codes of the sensitivity scenarios, in the grid's order: base,
    discount_down, discount_up, mortality_x0.9, mortality_x1.1,
    no_improvement, no_cola (those that apply)."""
    from ..projection.analysis import scenarios

    return [f"mortality_x{sc['scale']:g}" if sc["key"] == "mortality" else sc["key"]
            for sc in scenarios(proj["rates"], proj["table"], proj["cola"])]


def _fiscal_table(a: pl.DataFrame, b: pl.DataFrame, labels: list[str]) -> pl.DataFrame:
    """Fiscal years of both sides on one row each (a year that only one side
    reaches counts 0 on the other), and B - A; TOTAL last."""
    def body(t: pl.DataFrame) -> pl.DataFrame:
        return t.filter(pl.col("fiscal_year") != "TOTAL")

    value_cols = ["starts", "payments", *[f"pv_{x}" for x in labels]]
    ja = body(a).select("fiscal_year", *value_cols)
    jb = body(b).select("fiscal_year", *value_cols)
    joined = ja.join(jb, on="fiscal_year", how="full", coalesce=True, suffix="_b")
    joined = joined.rename({c: f"{c}_a" for c in value_cols})
    joined = joined.with_columns(
        [pl.col(f"{c}_a").fill_null(0) for c in value_cols]
        + [pl.col(f"{c}_b").fill_null(0) for c in value_cols])
    joined = joined.with_columns(
        pl.col("fiscal_year").str.slice(2).cast(pl.Int32).alias("_y")).sort("_y").drop("_y")
    out_cols = ["fiscal_year"]
    for c in value_cols:
        joined = joined.with_columns((pl.col(f"{c}_b") - pl.col(f"{c}_a")).alias(
            f"{c}_difference"))
        out_cols += [f"{c}_a", f"{c}_b", f"{c}_difference"]
    joined = joined.select(out_cols)
    total = joined.select(pl.lit("TOTAL").alias("fiscal_year"),
                          *[pl.col(c).sum() for c in out_cols[1:]])
    return pl.concat([joined, total.cast(joined.schema)])


class _Banding:
    """The band and payer tables of a comparison (bands.py): each side's
    members given their band (A's amount) and payer, run by the engine's
    groups, then shared and counted."""

    def __init__(self, keys: dict[str, list], bands: list[int], has_employer: bool,
                 v_date: date, cola: Any, reliefs: list[Any]):
        from . import bands as b

        self.b = b
        self.bands = bands
        self.codes = b.band_codes(bands)
        self.v_date, self.cola = v_date, cola
        self.ref = b.reference_date(v_date, reliefs)
        self.sides: dict[str, dict[str, Any]] = {}
        for side in ("a", "b"):
            parts = keys[side]
            self.sides[side] = {
                "rows": np.concatenate([k[0] for k in parts]) if parts
                else np.zeros(0, dtype=np.int64),
                "in_pay": np.concatenate([k[1] for k in parts]) if parts
                else np.zeros(0, dtype=bool),
                "payer": np.concatenate([k[2] for k in parts]).astype(str)
                if parts and has_employer else None}
        self.has_employer = has_employer
        if has_employer:
            self.payers = sorted(set(self.sides["a"]["payer"].tolist())
                                 | set(self.sides["b"]["payer"].tolist()))
        else:
            self.payers = [""]
        # (no member at all: no payer, one group per band for the engine)
        self.n_bands, self.n_payers = len(self.codes), max(1, len(self.payers))
        self.n_groups = self.n_bands * self.n_payers
        self.group: dict[str, np.ndarray] = {}
        self.band: dict[str, np.ndarray] = {}
        self.payer: dict[str, np.ndarray] = {}
        self.out: dict[str, Any] = {}

    def prepare(self, side: str, arrays: Any, relief: Any) -> None:
        """Each member's band, payer and group (set on `arrays`), and its
        monthly amount at the reference date."""
        s = self.sides[side]
        if len(arrays) != len(s["rows"]):
            raise AccountingError("the members projected and the members banded differ")
        if side == "a":
            band = self.b.band_of(arrays.monthly_cents, self.bands)
            self._band_a = dict(zip(s["rows"].tolist(), band.tolist(), strict=True))
        else:
            none = self.n_bands - 1
            band = np.array([self._band_a.get(r, none) for r in s["rows"].tolist()],
                            dtype=np.int64)
        if self.has_employer:
            index = {c: i for i, c in enumerate(self.payers)}
            payer = np.array([index[c] for c in s["payer"].tolist()], dtype=np.int64)
        else:
            payer = np.zeros(len(band), dtype=np.int64)
        self.band[side], self.payer[side] = band, payer
        self.group[side] = self.b.group_codes(band, payer, self.n_payers)
        arrays.group, arrays.groups = self.group[side], self.n_groups
        s["amount"] = self.b.amounts_at(arrays, relief, self.v_date, self.ref, self.cola)

    def projected(self, side: str, p: Any, tbl: pl.DataFrame, labels: list[str]) -> None:
        from ..projection.output import cents

        s = self.sides[side]
        assert p.group_payments is not None and p.group_pv is not None
        self.out[side] = self.b.Side(
            rows=s["rows"], in_pay=s["in_pay"], payer=self.payer[side], amount=s["amount"],
            member_payments=p.member_payments, fiscal_years=p.fiscal_years,
            payments=cents(p.payments),
            pv=np.stack([cents(p.pv[i]) for i in range(len(labels))]),
            group_payments=p.group_payments, group_pv=p.group_pv)

    def tables(self, fiscal: pl.DataFrame, labels: list[str]
               ) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
        b, a_side, b_side = self.b, self.out["a"], self.out["b"]
        out = {
            "bands": b.money_table(a_side, b_side, "band", self.codes, "band", self.n_bands,
                                   self.n_payers, labels),
            "band_counts": b.counts_table(a_side, b_side, "band", self.codes,
                                          self.band["a"], self.band["b"]),
        }
        if self.has_employer:
            out["payers"] = b.money_table(a_side, b_side, "employer", self.payers, "payer",
                                          self.n_bands, self.n_payers, labels)
            out["payer_counts"] = b.counts_table(a_side, b_side, "employer", self.payers,
                                                 self.payer["a"], self.payer["b"])
        if not (self.band["b"] == self.n_bands - 1).any():
            # no member without a pension under A: no row for them
            for name in ("bands", "band_counts"):
                out[name] = out[name].filter(pl.col("band") != b.NO_PENSION_A)
        b.check_sums(out["bands"], fiscal, "band")
        if "payers" in out:
            b.check_sums(out["payers"], fiscal, "employer")
        total = out["band_counts"].row(out["band_counts"].height - 1, named=True)
        totals = {"relief_reference_date": self.ref,
                  "relief_members": total["members"], "relief_gain": total["gain"],
                  "relief_lose": total["lose"],
                  "relief_average_monthly_gain": total["average_monthly_gain"],
                  "relief_under_threshold_a": total["under_threshold_a"],
                  "relief_under_threshold_b": total["under_threshold_b"]}
        return out, totals

    def assumptions(self) -> dict[str, Any]:
        from ..projection.options import RELIEF_UNDER_MONTHLY
        return {"bands": self.codes, "reference_date": self.ref.isoformat(),
                "under_threshold_monthly": str(RELIEF_UNDER_MONTHLY),
                "band_rule": "the monthly amount under A (before any relief of A) at the "
                "member's first projected payment: in pay, the census's amount raised by the "
                "COLA assumption up to then; deferred, the determination's amount; no "
                "pension under A: no_pension_a",
                "reference_rule": "monthly amounts read at the later of the valuation date "
                "and the earliest date of the reliefs' adjustments, or at the member's first "
                "projected payment when later; gain: B's expected payments above A's, in "
                "whole cents; average monthly gain: the sum of B - A at the reference date "
                "over those who gain, divided by their number",
                "rounding": "each fiscal year's total under A, and its B - A, shared among "
                "the bands (and the payers) in whole cents by the largest remainder; B = A + "
                "(B - A): the tables add up to the fiscal-year table to the cent",
                "payers": "the census's employer column" if self.has_employer else None}
