"""What a valuation adds to the projection: the present value by dimension
(`--by`), the standard sensitivity grid (`--sensitivity`), and the words of
its assumptions (benefit status, claim timing, mortality scale, the
valuation date apart from the determinations' date, and the properties of
the method an analyst must be told about)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..i18n import LANGS, catalog
from ..relief import Relief
from . import adjust, engine, output
from .claims import ClaimRates
from .engine import Assumptions, Members, Projection
from .mortality import MortalityTable, scaled, without_improvement
from .options import (
    AGE_BAND_YEARS,
    MAX_DISCOUNT,
    SENSITIVITY_MORTALITY,
    SENSITIVITY_STEP,
)

TEXT = {lang: catalog(lang)["valuation"] for lang in LANGS}  # i18n/<lang>/valuation.toml


def beside(out: Path, name: str) -> Path:
    """flows.csv -> flows.by.csv"""
    return out.with_name(f"{out.stem}.{name}{out.suffix}")


def first_year_starts(proj: Projection, v_date: date) -> int | float:
    """Members starting in the fiscal year of the first payment date (the
    first 1st on or after the valuation date: with a valuation on 30 June,
    the year that begins the next day)."""
    first = int(engine.fiscal_year(engine.month_day(engine.month_number(
        np.array([engine.day_number(v_date)]))))[0])
    k = first - int(proj.fiscal_years[0]) if len(proj.fiscal_years) else -1
    return proj.starts[k].item() if 0 <= k < len(proj.starts) else 0


# ------------------------------------------------------------------ --by


def age_band(birth_days: np.ndarray, v_day: int) -> list[str]:
    """'55-59': the band of AGE_BAND_YEARS years of the completed age at the valuation date."""
    by, bm, bd = engine.civil_from_days(birth_days)
    x, _ = engine.exact_age(by, bm, bd, np.full(len(birth_days), v_day))
    lo = (x // AGE_BAND_YEARS) * AGE_BAND_YEARS
    return [f"{a:02d}-{a + AGE_BAND_YEARS - 1:02d}" for a in lo.tolist()]


def breakdown(members: pl.DataFrame, proj: Projection, labels: list[str], dims: list[str],
              v_date: date, lang: str) -> pl.DataFrame:
    """Members, expected payments and present value at each rate by the
    dimensions `dims`. `eligible_now`: yes (the determination's status
    `eligible`), no (`not_yet_eligible`), in_pay. Each group's sums are of
    the members' unrounded values, rounded once (so the groups add up to
    the TOTAL within a cent or so per group; docs/project.md)."""
    t = TEXT[lang]
    h = output.HEADERS[lang]
    frame = members.select("group", "regime", "status", "_birth")
    cols: dict[str, pl.Series] = {}
    for d in dims:
        if d == "group":
            cols[t["dim_group"]] = frame["group"]
        elif d == "regime":
            cols[t["dim_regime"]] = frame["regime"]
        elif d == "age_band":
            cols[t["dim_age_band"]] = pl.Series(age_band(
                frame["_birth"].to_numpy().astype(np.int64), engine.day_number(v_date)),
                dtype=pl.String)
        else:
            cols[t["dim_eligible_now"]] = frame["status"].replace_strict(
                {"eligible": t["yes"], "not_yet_eligible": t["no"], "in_pay": t["in_pay"]},
                return_dtype=pl.String)
    keys = list(cols)
    values = {"_pay": proj.member_payments,
              **{f"_pv{i}": proj.member_pv[i] for i in range(len(labels))}}
    df = pl.DataFrame([*[v.alias(k) for k, v in cols.items()],
                       *[pl.Series(k, v, dtype=pl.Float64)
                                         for k, v in values.items()]])
    g = df.group_by(keys, maintain_order=False).agg(
        pl.len().alias("_n"), *[pl.col(k).sum() for k in values]).sort(keys, nulls_last=True)
    out = g.select(
        *keys, pl.col("_n").cast(pl.Int64).alias(t["members"]),
        output.money(h["payments"], output.cents(g["_pay"].to_numpy())),
        *[output.money(f"{h['pv']}{label}", output.cents(g[f"_pv{i}"].to_numpy()))
          for i, label in enumerate(labels)])
    total = out.select(
        *[pl.lit(h["total"] if j == 0 else None, dtype=pl.String).alias(k)
          for j, k in enumerate(keys)],
        *[pl.col(c).sum() for c in out.columns[len(keys):]])
    return pl.concat([out, total.cast(out.schema)])


# ---------------------------------------------------------- --sensitivity


def scenarios(rates: list[tuple[str, Decimal]], table: MortalityTable, cola: Fraction
              ) -> list[dict[str, Any]]:
    """The standard grid: the base, each discount rate -/+ one point, the
    mortality x0.9 and x1.1, no improvement (when a scale is used), COLA 0
    (when a COLA is used). Each is the options of a `diferida project` run;
    the factors are decimals (`mortality.scaled`)."""
    one = Decimal(1)
    out: list[dict[str, Any]] = [{"key": "base", "shift": Decimal(0), "scale": one,
                                  "improvement": True, "cola": cola}]
    for shift in (-SENSITIVITY_STEP, SENSITIVITY_STEP):
        out.append({"key": "discount_down" if shift < 0 else "discount_up", "shift": shift,
                    "scale": one, "improvement": True, "cola": cola})
    if not table.none:
        for f in SENSITIVITY_MORTALITY:
            out.append({"key": "mortality", "shift": Decimal(0), "scale": f,
                        "improvement": True, "cola": cola})
    if table.improvement is not None:
        out.append({"key": "no_improvement", "shift": Decimal(0), "scale": one,
                    "improvement": False, "cola": cola})
    if cola != 0:
        out.append({"key": "no_cola", "shift": Decimal(0), "scale": one, "improvement": True,
                    "cola": Fraction(0)})
    return out


def sensitivity(arrays: Members, a: Assumptions, rates: list[tuple[str, Decimal]],
                cola: Fraction, base: Projection, lang: str, relief: Relief | None = None
                ) -> pl.DataFrame:
    """One row per scenario of `scenarios`, each a full projection of the
    same members: total expected payments and, for each discount rate given,
    the rate the scenario uses (`rate_used_for_<rate>`: the rate given,
    shifted by the scenario's step) and the present value at
    it (`pv_<rate>`; blank where the shifted rate is outside 0 .. the largest
    rate allowed). The totals are rounded as the fiscal-year table's TOTAL
    is (the sum of the rounded years), so each row equals the TOTAL of a
    separate run with those options."""
    t = TEXT[lang]
    h = output.HEADERS[lang]
    rows: list[dict[str, Any]] = []
    for sc in scenarios(rates, a.table, cola):
        shifted = [v + sc["shift"] for _, v in rates]
        usable = [0 <= v <= MAX_DISCOUNT for v in shifted]
        table = a.table if sc["improvement"] else without_improvement(a.table)
        if sc["scale"] != 1:
            table = scaled(table, sc["scale"])
        if sc["key"] == "base":
            p = base
        else:
            p = adjust.project(arrays, replace(
                a, rates=[float(v) if ok else 0.0 for v, ok in zip(shifted, usable,
                                                                   strict=True)],
                table=table, cola=sc["cola"]), relief)
        name = t[f"scenario_{sc['key']}"].format(scale=f"{sc['scale']:g}")
        row: dict[str, Any] = {
            t["scenario"]: name,
            # numbers as numbers (a rate, a factor); the workbook prints them as such
            t["discount_shift"]: float(sc["shift"]),
            t["mortality_scale"]: table.scale,  # 0.99 (a decimal product), a number
            t["improvement"]: table.improvement.name if table.improvement else "none",
            t["cola"]: float(Decimal(sc["cola"].numerator) / Decimal(sc["cola"].denominator)),
            h["payments"]: int(output.cents(p.payments).sum()),
        }
        for i, (label, _) in enumerate(rates):
            # the rate this row's value is at, beside it: the header names the rate given
            row[f"{t['rate_used']}{label}"] = float(shifted[i])
            row[f"{h['pv']}{label}"] = int(output.cents(p.pv[i]).sum()) if usable[i] else None
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    money_cols = [c for c in frame.columns if c == h["payments"] or c.startswith(h["pv"])]
    return frame.with_columns(
        [((pl.col(c).cast(output.MONEY)) / 100).cast(output.MONEY) for c in money_cols])


# ------------------------------------------------------------- assumptions


def add_assumptions(info: dict[str, Any], summary: Any, claims: ClaimRates | None,
                    table: MortalityTable, dims: list[str], sensitivity: bool) -> None:
    """The valuation's assumptions and counts, into the run's assumptions."""
    a = info["assumptions"]
    a["determinations_as_of"] = summary.as_of.isoformat()
    a["valuation_date_rule"] = ("projections and present values from the valuation date; "
                                "the determinations speak for the as-of date")
    a["back_pay"] = ("none: the months between the eligibility date and a later claim are "
                     "not valued (rules §5: the article provides no payment for months "
                     "before a request)")
    a["benefit_status"] = ("deferred: projected by the start rule; in_pay: the amount being "
                           "paid, from the date payments began, with COLA, never recomputed; "
                           "deceased, refunded: counted and left out")
    if claims is None:
        a["claim"] = ("members who could be paid at the valuation date (start on or before "
                      "it) and have not claimed start at the valuation date")
    else:
        a["claim"] = (f"members who could be paid at the valuation date and have not claimed "
                      f"claim by yearly rates by {claims.basis.replace('_', ' ')} (file "
                      f"{claims.source['file']}, sha256 {claims.source['sha256']}), on the "
                      f"valuation date and each of its anniversaries")
        a["claim_rates"] = {"basis": claims.basis, "first": claims.first, **claims.source}
        if claims.notes:
            a["claim_notes"] = claims.notes
    a["mortality"]["scale"] = f"{table.scale:g}"
    if dims:
        a["by"] = ",".join(dims) + f" (age bands of {AGE_BAND_YEARS} years at the valuation " \
                                   f"date; eligible_now: the determination's status)"
    if sensitivity:
        a["sensitivity"] = (f"each discount rate -/+ {SENSITIVITY_STEP}; mortality x "
                            + " and x ".join(map(str, SENSITIVITY_MORTALITY))
                            + "; improvement none; COLA 0; each a full projection")
    a["properties"] = [
        "per-member values and --by groups are rounded each on its own: they add up to "
        "the TOTAL only within a few cents",
        "before-start rates apply up to the start and after-start rates from it: with "
        "phased tables a later start can raise survival at old ages",
        "a first payment that falls past --horizon is left blank in the per-member file",
    ]
    c = info["counts"]
    c.update({"in_pay": summary.in_pay, "deceased": summary.deceased,
              "refunded": summary.refunded,
              "starts_first_year": summary.starts_first_year})


def sheet(book: Any, name: str, frame: pl.DataFrame) -> None:
    """A table of this module on a sheet of its own, laid out to print as
    the fiscal-year table is (diferida/workbook.py `Book.table`): money as
    money, counts as counts, the TOTAL row of `--by` in bold."""
    h, t = output.HEADERS[book.lang], TEXT[book.lang]
    total = frame.height > 0 and frame.row(frame.height - 1)[0] == h["total"]
    book.table(name, frame, total_last=total,
               percent=tuple(c for c in frame.columns
                             if c in (t["discount_shift"], t["cola"])
                             or c.startswith(t["rate_used"])),
               factor=tuple(c for c in (t["mortality_scale"],) if c in frame.columns))
