"""`value_file`: a census in, the valuation report out — the total pension
liability at a measurement date, its sensitivity, the schedule of changes
from a prior measurement, the employers' shares (measure.py) — as a
workbook laid out to print, or JSON.

The census is read and decided exactly as `diferida project` reads it
(projection/runner.py `read_census`: the same reader, rules, rejects and
accounting); rows in = deferred + in pay + deceased + refunded + not
entitled + rejected, for each census read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar, Unpack

import numpy as np
import polars as pl

from ..batch.io import kind_of
from ..batch.population import check_other_target, check_place
from ..batch.run import PopulationRun, RunKwargs, RunOptions
from ..bounded import BadToml, Refused, load_toml, read_bounded, shown
from ..i18n import DEFAULT_LANG, check_lang
from ..projection import analysis
from ..projection.claims import load_claim_rates
from ..projection.mortality import TableError, resolve, scaled
from ..projection.options import (
    MAX_REJECTED_SHARE,
    SENSITIVITY_STEP,
    OptionError,
    parse_cola,
    parse_mortality_scale,
    parse_rates,
    parse_sex_blend,
    parse_start,
)
from ..projection.runner import ProjectionSummary, assumptions_of, read_census
from ..projection.sex import SEX_COLUMN
from ..projection.status import COLUMNS as STATUS_COLUMNS
from ..rules import Rules, RulesError, load_rules
from ..words import pct
from . import gasb73, measure
from . import history as history_file
from .curve import YieldCurve, load_curve
from .employer import EMPLOYER_COLUMN, load_names, with_employer
from .measure import Basis, Census
from .paid import PAID_COLUMN, actual_cents, with_paid
from .parts import ReportParts

T = TypeVar("T")
OUTPUTS = (".xlsx", ".json", ".pdf")
MAX_PRIOR_BYTES = 1 << 16  # a file of last year's assumptions: a handful of keys
MESSAGE_PATH_CHARS = 32  # a census named in the refusal of its rejects: its path's end
# the census's columns besides the determination's
FIELDS = (SEX_COLUMN, *STATUS_COLUMNS, EMPLOYER_COLUMN, PAID_COLUMN)
PRIOR_KEYS = ("discount", "yield_curve", "mortality", "improvement", "mortality_scale",
              "claim_rates", "cola", "sex_blend")


@dataclass
class ValuationSummary:
    input: str
    output: str
    rejects: str | None
    as_of: date
    measurement_date: date
    counts: dict[str, int] = field(default_factory=dict)
    prior_counts: dict[str, int] | None = None
    liability: dict[str, Any] = field(default_factory=dict)
    changes: list[dict[str, Any]] | None = None
    employers: list[dict[str, Any]] | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    sample: pl.DataFrame | None = None
    rows_rejected: int = 0
    problems: int = 0
    # with a schedule of changes: the rows rejected in each census and how
    # the schedule treats them (rejects_note)
    rejected_rows: dict[str, Any] | None = None
    gasb73: dict[str, Any] | None = None  # GASB 73's figures (gasb73.py), in dollars
    roll_forward: dict[str, Any] | None = None  # with --roll-forward-from

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "rejects": self.rejects,
                "as_of": self.as_of.isoformat(),
                "measurement_date": self.measurement_date.isoformat(),
                "counts": self.counts, "prior_counts": self.prior_counts,
                **({"rejected_rows": self.rejected_rows} if self.rejected_rows is not None
                   else {}),
                "liability": self.liability, "changes": self.changes,
                "employers": self.employers, "gasb73": self.gasb73,
                **({"roll_forward": self.roll_forward} if self.roll_forward is not None
                   else {}),
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


def last_june_30(d: date) -> date:
    """The last 30 June on or before `d`: the last fiscal year's end."""
    end = date(d.year, 6, 30)
    return end if end <= d else date(d.year - 1, 6, 30)


def build_basis(*, discount: str | None, yield_curve: str | Path | None, mortality: str,
                improvement: str | None, mortality_scale: str | None, claim_rates: str | Path
                | None, cola: str, sex_blend: str, lang: str, where: str = "") -> Basis:
    """A basis from the options (or a prior assumptions file: `where` names it)."""
    if (discount is None) == (yield_curve is None):
        key = "both_rates" if discount is not None else "no_rate"
        raise OptionError(pvaluation_text(lang, key, where=where))
    if discount is not None:
        rates = parse_rates(discount)
        if len(rates) != 1:
            raise OptionError(pvaluation_text(lang, "one_rate", where=where))
        d: Decimal | YieldCurve = rates[0][1]
    else:
        assert yield_curve is not None
        d = load_curve(yield_curve, lang)
    table = resolve(mortality, improvement)
    scale = parse_mortality_scale(mortality_scale)
    if scale != 1.0:
        table = scaled(table, scale)
    claims = load_claim_rates(claim_rates, lang) if claim_rates is not None else None
    return Basis(d, table, claims, parse_cola(cola), parse_sex_blend(sex_blend))


def pvaluation_text(lang: str, message: str, /, **kw: Any) -> str:
    from ..i18n import catalog
    return catalog(lang)["liability_options"][message].format(**kw)


def prior_basis(path: str | Path, current: dict[str, Any], lang: str) -> Basis:
    """The prior measurement's basis: the TOML file's keys (PRIOR_KEYS), each
    missing one taken from this measurement's options; paths in the file are
    read from the file's folder."""
    p = Path(path)
    try:
        data = load_toml(read_bounded(p, MAX_PRIOR_BYTES).decode("utf-8"))
    except Refused as exc:
        raise OptionError(pvaluation_text(lang, "prior_refused", file=shown(p, 120),
                                          reason=exc.text(lang))) from None
    except UnicodeDecodeError:
        raise OptionError(pvaluation_text(lang, "prior_not_utf8", file=shown(p, 120))) from None
    except BadToml as exc:
        where = shown(p, 120) if exc.line is None else \
            f"{shown(p, 120)}, {pvaluation_text(lang, 'line', line=exc.line)}"
        if exc.reason == "nested":
            raise OptionError(pvaluation_text(lang, "prior_nested", file=where)) from None
        raise OptionError(pvaluation_text(lang, "prior_toml", file=where,
                                          reason=exc.text(lang).split(": ", 1)[-1])) from None
    unknown = sorted(set(data) - set(PRIOR_KEYS))
    if unknown:
        raise OptionError(pvaluation_text(lang, "prior_unknown", file=p,
                                          keys=shown(", ".join(unknown), 80),
                                          known=", ".join(PRIOR_KEYS)))
    opts = dict(current)
    if "discount" in data or "yield_curve" in data:
        opts["discount"] = opts["yield_curve"] = None
    for k, v in data.items():
        if not isinstance(v, str | int | float) or isinstance(v, bool):
            raise OptionError(pvaluation_text(lang, "prior_value", file=p, key=shown(k)))
        v = str(v)
        opts[k] = str(p.parent / v) if k in ("yield_curve", "claim_rates") or (
            k == "mortality" and v.lower().endswith(".csv")) else v
    try:
        return build_basis(**opts, lang=lang, where=f" ({p})")
    except (OptionError, TableError) as exc:  # a value of the file: name the file
        if f"({p})" in str(exc):  # the file named already
            raise
        raise type(exc)(pvaluation_text(lang, "prior_bad", file=p, message=exc)) from None


def value_file(
    input: str | Path,
    output_path: str | Path,
    rejects: str | Path | None = None,
    *,
    discount: str | None = None,
    yield_curve: str | Path | None = None,
    mortality: str = "none",
    improvement: str | None = None,
    mortality_scale: str | None = None,
    claim_rates: str | Path | None = None,
    cola: str = "0",
    start: str = "eligibility",
    sex_blend: str = "0.5",
    measurement_date: date | None = None,
    as_of: date | None = None,
    rules: str | Path | Rules | None = None,
    prior: str | Path | None = None,
    prior_date: date | None = None,
    prior_assumptions: str | Path | None = None,
    prior_rules: str | Path | Rules | None = None,
    prior_rejects: str | Path | None = None,
    employer_names: str | Path | None = None,
    allow_rejects: bool = False,
    history: str | Path | None = None,
    remaining_service_life: str | None = None,
    discount_index: str | None = None,
    discount_index_date: date | None = None,
    payments_after: str | None = None,
    payments_after_through: date | None = None,
    roll_forward_from: date | None = None,
    roll_forward_adjustments: tuple[str, ...] = (),
    reconcile_census: str | Path | None = None,
    **common: Unpack[RunKwargs],
) -> ValuationSummary:
    """The valuation report of a census. Raises OptionError / TableError for an
    option that cannot be used and FileProblem for a file, before anything
    is written. With a prior census, a census whose rejected rows are more
    than MAX_REJECTED_SHARE of its rows read is refused (OptionError), unless
    `allow_rejects`."""
    started = time.perf_counter()
    check_lang(common.get("lang", DEFAULT_LANG), OptionError, "--lang")
    o = RunOptions(**common)
    lang = o.lang
    current_opts: dict[str, Any] = dict(
        discount=discount, yield_curve=yield_curve, mortality=mortality,
        improvement=improvement, mortality_scale=mortality_scale, claim_rates=claim_rates,
        cola=cola, sex_blend=sex_blend)
    basis = build_basis(**current_opts, lang=lang)
    day = as_of or date.today()
    v = measurement_date or last_june_30(day)
    _check_prior(lang, v, prior, prior_date, prior_assumptions, prior_rules, prior_rejects)
    plan = Plan(
        basis=basis, rule=parse_start(start), day=day, v=v, prior_date=prior_date,
        prior_basis=prior_basis(prior_assumptions, current_opts, lang) if prior_assumptions
        else basis,
        names=load_names(employer_names, lang) if employer_names is not None else None,
        names_file=employer_names,
        roll_from=roll_forward_from,
        adjustments=_roll_options(lang, v, roll_forward_from, roll_forward_adjustments, prior),
        gasb=_gasb_options(lang, v, history, remaining_service_life, discount_index,
                           discount_index_date, payments_after, payments_after_through),
        files=_files(o, input, output_path, rejects, prior, prior_rejects, reconcile_census,
                     roll_forward_from),
        rules=load_rules(rules), prior_rules=_prior_rules(prior_rules, rules),
        allow_rejects=allow_rejects, lang=lang)
    f = plan.files
    summary = ValuationSummary(str(f.inp), str(f.out), str(f.rej) if f.rej else None, day, v)
    secs = summary.seconds
    with PopulationRun(f.inp, options=o, extra_fields=FIELDS, rejects=f.rej) as run, \
            ExitStack() as stack:
        read = timed(secs, "read_and_decide", _read_all, run, stack, plan, o, summary)
        measured = timed(secs, "measure", _measure_all, plan, read, summary)
        timed(secs, "write", _write, run, plan, read, measured, summary)
        summary.sample = run.sample
    secs["total"] = time.perf_counter() - started
    return summary


def timed(seconds: dict[str, float], step: str, do: Callable[..., T], *args: Any) -> T:
    """`do(*args)`, its time kept in `seconds[step]` (the summary's)."""
    tick = time.perf_counter()
    try:
        return do(*args)
    finally:
        seconds[step] = time.perf_counter() - tick


@dataclass(frozen=True)
class Files:
    """The run's files, each checked before anything is read: the census,
    the report, the rejects; last year's census and its rejects; the census
    at the measurement date a roll-forward is reconciled with."""

    inp: Path
    out: Path
    rej: Path | None
    prior: Path | None
    prior_rej: Path | None
    later: Path | None


@dataclass(frozen=True)
class Plan:
    """What a valuation run is asked for, every option checked: the basis
    (this year's and last year's), the dates, the employers' names, the
    roll-forward, the GASB 73 options, the files and the rules sets."""

    basis: Basis
    prior_basis: Basis
    rule: Any
    day: date
    v: date
    prior_date: date | None
    names: dict[str, str] | None
    names_file: str | Path | None
    roll_from: date | None
    adjustments: list[tuple[str, int]]
    gasb: GasbOptions
    files: Files
    rules: Rules
    prior_rules: Rules | None  # None: the same as `rules`
    allow_rejects: bool
    lang: str

    @property
    def rules_before(self) -> Rules:
        return self.prior_rules or self.rules

    @property
    def rules_changed(self) -> bool:
        p = self.rules_before
        return (p.name, p.version) != (self.rules.name, self.rules.version)


def _check_prior(lang: str, v: date, prior: Any, prior_date: date | None,
                 prior_assumptions: Any, prior_rules: Any, prior_rejects: Any) -> None:
    """Last year's census comes with its date (a 30 June before the
    measurement date, itself a 30 June); its assumptions, rules and rejects
    only with it."""
    if (prior is None) != (prior_date is None):
        raise OptionError(pvaluation_text(lang, "prior_pair"))
    if prior is None and any(x is not None for x in (prior_assumptions, prior_rules,
                                                     prior_rejects)):
        raise OptionError(pvaluation_text(lang, "prior_needed"))
    if prior_date is not None:
        for option, d in (("--prior-date", prior_date), ("--measurement-date", v)):
            if (d.month, d.day) != (6, 30):
                raise OptionError(pvaluation_text(lang, "prior_june", option=option, date=d))
        if prior_date >= v:
            raise OptionError(pvaluation_text(lang, "prior_order", prior=prior_date, v=v))


def _files(o: RunOptions, input: str | Path, output_path: str | Path,
           rejects: str | Path | None, prior: str | Path | None,
           prior_rejects: str | Path | None, reconcile_census: str | Path | None,
           roll_from: date | None) -> Files:
    """The files named, each usable: inputs of a kind read, outputs not an
    input nor one another, none replaced without --overwrite."""
    later = Path(reconcile_census) if reconcile_census is not None else None
    if later is not None:
        if roll_from is None:
            raise OptionError(pvaluation_text(o.lang, "reconcile_needed"))
        kind_of(later)
    inp, out = Path(input), Path(output_path)
    kind_of(inp)
    prior_path = Path(prior) if prior is not None else None
    if prior_path is not None:
        kind_of(prior_path)
    inputs = [inp] + ([prior_path] if prior_path else [])
    check_other_target(out, inputs, o.overwrite, list(OUTPUTS), option="-o/--output")
    rej = Path(rejects) if rejects is not None else None
    prej = Path(prior_rejects) if prior_rejects is not None else None
    taken = [("-o/--output", out)]
    for option, path in (("--rejects", rej), ("--prior-rejects", prej)):
        if path is not None:
            kind_of(path)
            check_place(path, inputs, o.overwrite, option, taken)
            taken.append((option, path))
    return Files(inp, out, rej, prior_path, prej, later)


def _prior_rules(prior_rules: str | Path | Rules | None, rules: Any) -> Rules | None:
    if prior_rules is None:
        return None
    try:
        return load_rules(prior_rules)
    except RulesError as exc:
        exc.option = "--prior-rules"
        raise


@dataclass
class Read:
    """The censuses as read and decided: this year's (and its counts), this
    year's again under last year's rules when they changed, last year's,
    and the census at the measurement date of a roll-forward."""

    current: Census
    counted: ProjectionSummary
    has_employer: bool
    current_prior_rules: Census
    prior: Census | None = None
    prior_counted: ProjectionSummary | None = None
    prior_has_employer: bool = False
    prior_run: PopulationRun | None = None
    over: list[Any] = field(default_factory=list)
    later: Census | None = None
    later_counted: ProjectionSummary | None = None


def _read_all(run: PopulationRun, stack: ExitStack, plan: Plan, o: RunOptions,
              summary: ValuationSummary) -> Read:
    """Read every census of the run; last year's stays open (its rejects file
    is put in place with the report). Refuses a census with too many rows
    rejected for a schedule of changes, unless allowed."""
    f, lang, v = plan.files, o.lang, plan.v
    current, counted, has_employer = _read(run, f.inp, plan.day, plan.rules, lang, plan.rule)
    if plan.names is not None and not has_employer:
        raise OptionError(pvaluation_text(lang, "names_no_column", file=plan.names_file))
    summary.counts = _counts(counted)
    summary.rows_rejected, summary.problems = counted.rows_rejected, counted.problems
    read = Read(current, counted, has_employer, current)
    quiet = replace(o, on_rename=None)  # only the run of the outputs renames them
    if f.prior is not None:
        assert plan.prior_date is not None
        prun = stack.enter_context(PopulationRun(f.prior, options=quiet, extra_fields=FIELDS,
                                                 rejects=f.prior_rej))
        read.prior_run = prun
        read.prior, read.prior_counted, read.prior_has_employer = _read(
            prun, f.prior, plan.prior_date, plan.rules_before, lang, plan.rule)
        summary.prior_counts = _counts(read.prior_counted)
        read.over = _over_share([("census", f.inp, counted),
                                 ("--prior", f.prior, read.prior_counted)])
        if read.over and not plan.allow_rejects:
            raise OptionError(_too_many_rejects(read.over, lang))
        if plan.rules_changed:
            with PopulationRun(f.inp, options=quiet, extra_fields=FIELDS) as again:
                read.current_prior_rules, _, _ = _read(again, f.inp, plan.day,
                                                       plan.rules_before, lang, plan.rule)
    if f.later is not None:  # the census at the measurement date, for the roll-forward
        with PopulationRun(f.later, options=quiet, extra_fields=FIELDS) as again:
            read.later, read.later_counted, _ = _read(again, f.later, v, plan.rules, lang,
                                                      plan.rule)
    return read


@dataclass
class Measured:
    """The run's figures: the liability (rolled forward when asked), the
    roll-forward, the schedule of changes and its information, the
    employers' shares."""

    liability: measure.Liability
    roll: measure.RollForward | None = None
    lines: list[measure.Line] | None = None
    info: dict[str, Any] | None = None
    employers: Any = None


def _measure_all(plan: Plan, read: Read, summary: ValuationSummary) -> Measured:
    basis, v, day, relief = plan.basis, plan.v, plan.day, plan.rules.relief
    m = read.current.members
    deferred, in_pay = m.filter(~pl.col("_in_pay")), m.filter(pl.col("_in_pay"))
    got = Measured(measure.measure(deferred, in_pay, basis, v, day, SENSITIVITY_STEP, relief))
    if plan.roll_from is not None:
        rf = measure.roll_forward(deferred, in_pay, basis, plan.roll_from, v, day,
                                  SENSITIVITY_STEP, plan.adjustments, relief,
                                  got.liability.total)
        if read.later is not None and read.later_counted is not None:
            lm = read.later.members
            rf.later = measure.run(lm, basis, v, read.later.as_of, [basis.rate()],
                                   relief=relief).total(0) if lm.height else 0
            rf.later_counts = _counts(read.later_counted)
            rf.later_file = plan.files.later.name if plan.files.later else None
        got.liability, got.roll = _rolled(got.liability, rf), rf
        summary.roll_forward = _roll_dict(rf)
    summary.liability = _liability_dict(got.liability, basis)
    if read.prior is not None:
        assert plan.prior_date is not None and read.prior_counted is not None
        got.lines, got.info = measure.schedule(
            read.prior, plan.prior_basis, plan.prior_date, read.current_prior_rules,
            read.current, basis, v, got.liability, plan.rules_changed)
        summary.changes = [{"line": ln.key, "amount": _dollars(ln.cents),
                            "runs": list(ln.runs) if ln.runs else None} for ln in got.lines]
        summary.rejected_rows = rejects_note(read.counted, read.prior_counted,
                                             got.info["counts"], bool(read.over), plan.lang)
    if read.has_employer:
        got.employers = measure.employers(m, basis, v, day, got.liability, relief=relief)
        codes, pay, share, prop = got.employers
        summary.employers = [
            {"employer": c, "name": (plan.names or {}).get(c), "liability": _dollars(int(s)),
             "proportion": f"{int(q) / 1_000_000:.6f}",
             "payments_next_year": _dollars(int(pay[i, 0])) if pay.shape[1] else "0.00"}
            for i, (c, s, q) in enumerate(zip(codes, share, prop, strict=True))]
    return got


def _assumptions(plan: Plan, read: Read, got: Measured, summary: ValuationSummary
                 ) -> dict[str, Any]:
    """The assumptions page, written as `diferida project` writes its own
    (projection.runner.assumptions_of), from this census's counts and the
    basis."""
    basis = plan.basis
    # this census's counts, projected from the measurement date
    counted = replace(read.counted, valuation_date=plan.v)
    info = assumptions_of(counted, plan.rules, basis.table, [("0", Decimal(0))], basis.cola,
                          plan.rule, None, basis.blend, counted.sex_given > 0,
                          len(got.liability.fiscal_years))
    analysis.add_assumptions(info, counted, basis.claims, basis.table, [], False)
    return info


def _write(run: PopulationRun, plan: Plan, read: Read, got: Measured,
           summary: ValuationSummary) -> None:
    """The GASB 73 report made, the report written in its format, and every
    output put in place together (the report, its rejects, last year's
    rejects); the history appended once they are."""
    from .report import report_json, workbook
    lang, v, prior_date = plan.lang, plan.v, plan.prior_date
    prior_props = None
    if got.employers is not None and read.prior is not None and read.prior_has_employer \
            and prior_date is not None and not any(
                rec["measurement_date"] == prior_date.isoformat() for rec in plan.gasb.earlier):
        prior_props = measure.proportions(read.prior.members, plan.prior_basis, prior_date,
                                          read.prior.as_of, relief=read.prior.relief)
    g = _gasb_report(plan.gasb, v, got.lines, got.info, got.liability, got.employers, summary,
                     plan.rules, lang, prior_props)
    summary.gasb73 = g.summary
    m = read.current.members
    parts = ReportParts(
        gasb73=g, roll_forward=got.roll, summary=summary, liability=got.liability,
        basis=plan.basis, prior_basis=plan.prior_basis, lines=got.lines, info=got.info,
        employers=got.employers, names=plan.names, rules=plan.rules,
        prior_rules=plan.rules_before, prior_date=prior_date,
        assumptions=_assumptions(plan, read, got, summary), lang=lang,
        employer_members=dict(m.group_by(EMPLOYER_COLUMN).len().iter_rows())
        if read.has_employer else None)
    out = plan.files.out
    kind = out.suffix.lower()
    if kind == ".xlsx":
        run.data(out, workbook(parts))
    elif kind == ".pdf":
        from .pdf import report_pdf
        run.data(out, report_pdf(parts))
    else:
        run.data(out, report_json(parts))
    # the report, its rejects and the prior census's: together or none
    run.commit(*([read.prior_run] if read.prior_run is not None else []))
    if g.to_append is not None:  # kept once the report is in place
        assert plan.gasb.history is not None
        history_file.append(plan.gasb.history, g.to_append)


def _read(run: PopulationRun, path: Path, as_of: date, rules: Rules, lang: str, rule: Any
          ) -> tuple[Census, ProjectionSummary, bool]:
    src = run.source
    has_sex = SEX_COLUMN in src.columns
    has_status = any(c in src.columns for c in STATUS_COLUMNS)
    has_employer = EMPLOYER_COLUMN in src.columns
    has_paid = PAID_COLUMN in src.columns
    counted = ProjectionSummary(str(path), "", None, None, None, None, as_of)
    keep = ((EMPLOYER_COLUMN,) if has_employer else ()) + (("_paid_cents",) if has_paid
                                                          else ())

    rejected_ids: set[str] = set()  # the ids of the rows rejected (schedule of changes)

    def more(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame
             ) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
        if has_employer:
            kept, bad = with_employer(frame, kept, bad, lang)
        if has_paid:
            kept, bad = with_paid(frame, kept, bad, lang)
        if bad.height:
            rejected_ids.update(bad.get_column("participant_id").cast(pl.String)
                                .str.strip_chars().drop_nulls().to_list())
        return kept, bad

    members, gone = read_census(
        run, counted, as_of=as_of, rules=rules, lang=lang, rule=rule, has_sex=has_sex,
        has_status=has_status, keep=keep, keep_gone=True, more=more)
    counted.sex_given = int((members["_sex"] >= 0).sum())
    kept_ids = set(members["participant_id"].to_list()) | set(gone["participant_id"].to_list())
    census = Census(members, gone, as_of, rules.relief,
                    actual_cents(members, gone) if has_paid else None,
                    counted.rows_rejected, frozenset(rejected_ids - kept_ids - {""}))
    return census, counted, has_employer


def _over_share(censuses: list[tuple[str, Path, ProjectionSummary]]
                ) -> list[tuple[str, Path, ProjectionSummary]]:
    """The censuses whose rejected rows are more than MAX_REJECTED_SHARE of
    the rows read."""
    return [(what, path, c) for what, path, c in censuses
            if Decimal(c.rows_rejected) > MAX_REJECTED_SHARE * Decimal(c.rows_read)]


def _too_many_rejects(over: list[tuple[str, Path, ProjectionSummary]], lang: str) -> str:
    def end_of(p: Path, limit: int = MESSAGE_PATH_CHARS) -> str:  # the file's name kept
        text = str(p)
        return text if len(text) <= limit else "…" + text[-(limit - 1):]

    parts = [pvaluation_text(lang, f"rejects_{what.strip('-')}", file=end_of(path),
                             rejected=c.rows_rejected, read=c.rows_read)
             for what, path, c in over]
    return pvaluation_text(lang, "too_many_rejects", parts="; ".join(parts),
                           share=pct(MAX_REJECTED_SHARE))


def rejects_note(current: ProjectionSummary, prior: ProjectionSummary,
                 members: dict[str, int], over: bool, lang: str) -> dict[str, Any]:
    """What the report says of the rejected rows when it has a schedule of
    changes: the rows rejected in each census, the members matched to a
    rejected row of the other census (on lines of their own, never
    experience), the share allowed and whether it was exceeded (the
    command then ran with --allow-rejects), and all of it in words."""
    from ..i18n import catalog
    now, then = members.get("rejected_current", 0), members.get("rejected_prior", 0)
    words = catalog(lang)["liability"]["rejects_note"].format(
        current=current.rows_rejected, current_read=current.rows_read,
        prior=prior.rows_rejected, prior_read=prior.rows_read, now=now, then=then)
    return {"census": {"rows_read": current.rows_read, "rows_rejected": current.rows_rejected},
            "prior": {"rows_read": prior.rows_read, "rows_rejected": prior.rows_rejected},
            "prior_members_whose_row_was_rejected": now,
            "members_whose_prior_row_was_rejected": then,
            "max_share": str(MAX_REJECTED_SHARE), "over_share_allowed": over,
            "note": words}


def _counts(s: ProjectionSummary) -> dict[str, int]:
    return {"rows_read": s.rows_read, "deferred": s.projected, "in_pay": s.in_pay,
            "deceased": s.deceased, "refunded": s.refunded, "not_entitled": s.not_entitled,
            "rows_rejected": s.rows_rejected}


def _dollars(cents: int) -> str:
    return str(Decimal(cents).scaleb(-2).quantize(Decimal("0.01")))


def _liability_dict(li: measure.Liability, basis: Basis) -> dict[str, Any]:
    return {
        "total": _dollars(li.total), "deferred": _dollars(li.deferred),
        "in_pay": _dollars(li.in_pay),
        "rate_minus_1_point": None if li.lower is None else _dollars(li.lower),
        "rate_plus_1_point": None if li.higher is None else _dollars(li.higher),
        "payments_next_fiscal_year": _dollars(li.next_year_payments),
        "discount": (str(basis.discount) if not isinstance(basis.discount, YieldCurve)
                     else {"curve": basis.discount.source}),
        "single_equivalent_rate": f"{li.equivalent_rate:.6f}",
        "macaulay_duration": f"{li.macaulay:.4f}", "modified_duration": f"{li.modified:.4f}",
    }


def json_bytes(d: dict[str, Any]) -> bytes:
    return (json.dumps(d, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# ------------------------------------------------------------------ GASB 73


@dataclass
class GasbOptions:
    history: Path | None
    period: Decimal
    period_given: bool
    earlier: list[dict[str, Any]]  # the history's records before the measurement date
    records: list[dict[str, Any]]  # every record of the history
    index: str | None
    index_date: date | None
    paid_after: int | None  # cents
    paid_after_through: date | None


def _gasb_options(lang: str, v: date, history: str | Path | None, life: str | None,
                  index: str | None, index_date: date | None, paid_after: str | None,
                  through: date | None) -> GasbOptions:
    """The GASB 73 options, checked before anything is read or written."""
    try:
        period, given = gasb73.remaining_service_life(life)
    except ValueError:
        raise OptionError(pvaluation_text(lang, "service_life", value=shown(str(life), 40),
                                          most=gasb73.MAX_SERVICE_LIFE)) from None
    paid = None
    if paid_after is not None:
        try:
            amount = Decimal(paid_after.strip().replace(",", ""))
            ok = amount.is_finite() and amount >= 0 and amount == amount.quantize(
                Decimal("0.01"))
        except ArithmeticError:
            ok = False
        if not ok:
            raise OptionError(pvaluation_text(lang, "paid_after",
                                              value=shown(paid_after, 40)))
        paid = int(amount.scaleb(2))
    if (paid is None) != (through is None):
        raise OptionError(pvaluation_text(lang, "paid_after_pair"))
    if through is not None and through <= v:
        raise OptionError(pvaluation_text(lang, "paid_after_date", date=through, v=v))
    if index_date is not None and index is None:
        raise OptionError(pvaluation_text(lang, "index_pair"))
    if index is not None and not index.strip():
        raise OptionError(pvaluation_text(lang, "index_empty"))
    path = Path(history) if history is not None else None
    records: list[dict[str, Any]] = []
    if path is not None:
        try:
            records = history_file.read(path)
        except history_file.HistoryError as exc:
            raise OptionError(pvaluation_text(lang, f"history_{exc.key}", file=shown(path, 120),
                                              **exc.kw)) from None
    earlier = [r for r in records if r["measurement_date"] < v.isoformat()]
    return GasbOptions(path, period, given, earlier, records,
                       index.strip() if index else None, index_date, paid, through)


@dataclass
class GasbPart:
    report: gasb73.Report
    summary: dict[str, Any]
    to_append: dict[str, Any] | None  # the history's next record, or None
    history_state: str | None  # "append", "kept" or None (no history)
    options: GasbOptions
    record: dict[str, Any]  # this measurement as the history keeps it
    interest_rate: float | None  # the schedule's interest rate


def _gasb_report(o: GasbOptions, v: date, lines: list[measure.Line] | None,
                 info: dict[str, Any] | None, li: measure.Liability, emp: Any,
                 summary: ValuationSummary, rules: Rules, lang: str,
                 prior_props: dict[str, int] | None = None) -> GasbPart:
    rep = gasb73.build(v, lines, o.period, o.period_given, o.earlier, li.total, emp,
                       prior_props)
    d = gasb73.dollars
    body = {
        "measurement_date": v.isoformat(), "rules": f"{rules.name} {rules.version}",
        "discount": summary.liability["discount"],
        "total": d(li.total), "deferred": d(li.deferred), "in_pay": d(li.in_pay),
        "rate_minus_1_point": summary.liability["rate_minus_1_point"],
        "rate_plus_1_point": summary.liability["rate_plus_1_point"],
        "members": {"inactive_receiving": summary.counts["in_pay"],
                    "inactive_not_yet_receiving": summary.counts["deferred"]},
        "layout": None if rep.layout is None else {k: d(c) for k, c in rep.layout.items()},
        "bases": [b.as_dict() for b in rep.bases if b.year == rep.fy],
        "proportions": None if rep.employers is None else
        {e["employer"]: e["proportion"] for e in rep.employers if e["proportion"]},
        "census": {"file": Path(summary.input).name, "rows_read": summary.counts["rows_read"]},
    }
    state = to_append = None
    if o.history is not None:
        try:
            state = history_file.place(o.records, body)
        except history_file.HistoryError as exc:
            raise OptionError(pvaluation_text(lang, f"history_{exc.key}",
                                              file=shown(o.history, 120), **exc.kw)) from None
        if state == "append":
            to_append = history_file.sealed(o.records, body)
    out: dict[str, Any] = {
        "recognition_period": str(o.period),
        "recognition_period_given": o.period_given,
        "schedule": body["layout"],
        "expense": None if rep.expense is None else {k: d(c) for k, c in rep.expense.items()},
        "deferred": {s: {"outflows": d(x.outflows), "inflows": d(x.inflows)}
                     for s, x in rep.deferred.items()},
        "recognised_later": [{"fiscal_year": y, "amount": d(c)} for y, c in rep.future],
        "bases": [b.as_dict() for b in rep.bases],
        "employers": None if rep.employers is None else [
            {k: (d(x) if k in ("liability", "change_amount", "collective_expense",
                                "proportion_recognised", "expense", "deferred_outflows",
                                "deferred_inflows") else x) for k, x in e.items()}
            for e in rep.employers],
        "employer_prior_proportions_from": rep.proportions_from,
        "history": None if o.history is None else {
            "file": str(o.history), "records_before": len(o.earlier),
            "this_measurement": state},
        "discount_index": o.index,
        "discount_index_date": o.index_date.isoformat() if o.index_date else None,
        "benefit_payments_after": None if o.paid_after is None else {
            "amount": d(o.paid_after), "through": o.paid_after_through.isoformat()
            if o.paid_after_through else None},
    }
    return GasbPart(rep, out, to_append, state, o, body,
                    info["interest_rate"] if info is not None else None)


# ------------------------------------------------------------- roll-forward


def _roll_options(lang: str, v: date, d: date | None, given: tuple[str, ...],
                  prior: Any) -> list[tuple[str, int]]:
    """The roll-forward's date and stated adjustments ("LABEL=AMOUNT"), checked."""
    if d is None:
        if given:
            raise OptionError(pvaluation_text(lang, "roll_needed"))
        return []
    if (d.month, d.day) != (6, 30) or d >= v:
        raise OptionError(pvaluation_text(lang, "roll_date", date=d, v=v))
    if prior is not None:
        raise OptionError(pvaluation_text(lang, "roll_prior"))
    out = []
    for text in given:
        label, sep, amount = text.rpartition("=")
        try:
            value = Decimal(amount.strip().replace(",", ""))
            ok = bool(sep) and bool(label.strip()) and value.is_finite() and \
                value == value.quantize(Decimal("0.01"))
        except ArithmeticError:
            ok = False
        if not ok:
            raise OptionError(pvaluation_text(lang, "roll_adjustment", value=shown(text, 60)))
        out.append((label.strip(), int(value.scaleb(2))))
    return out


def _rolled(li: measure.Liability, rf: measure.RollForward) -> measure.Liability:
    """The liability as reported: the roll-forward's at each rate, its two
    parts shared out of it as the same members' parts at the measurement
    date (largest remainder)."""
    from dataclasses import replace
    total = rf.end[0] or 0
    if li.deferred + li.in_pay > 0:
        parts = np.array([li.deferred, li.in_pay], dtype=np.float64)
        deferred, in_pay = measure.apportion(parts, total) \
            if total >= 0 else [-x for x in measure.apportion(parts, -total)]
    else:
        deferred, in_pay = total, 0
    return replace(li, total=total, deferred=int(deferred), in_pay=int(in_pay),
                   lower=rf.end[1], higher=rf.end[2])


def _roll_dict(rf: measure.RollForward) -> dict[str, Any]:
    d = gasb73.dollars
    return {"valued_at": rf.valued_at.isoformat(),
            "at_rate": {k: d(getattr(rf, k)[0]) for k in ("start", "interest", "paid", "end")},
            "rate": f"{rf.rates[0]:.6f}",
            "adjustments": [{"label": lb, "amount": d(c)} for lb, c in rf.adjustments],
            "rate_minus_1_point": d(rf.end[1]), "rate_plus_1_point": d(rf.end[2]),
            "same_members_at_measurement_date": d(rf.direct),
            "difference": d((rf.end[0] or 0) - rf.direct),
            **({"later_census": {"file": rf.later_file, "counts": rf.later_counts,
                                 "total": d(rf.later),
                                 "difference": d(rf.later - (rf.end[0] or 0))}}
               if rf.later is not None else {})}
