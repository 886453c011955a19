"""The census's shape, from the members kept (runner.KEPT): distributions,
outliers named by member, the backlog of eligible members who have not
claimed, and what changed since a prior file. The thresholds and bands are
in thresholds.toml, each with its reason. Tables keep machine-readable
column names; the workbook and the page put them in words."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import polars as pl

from ..i18n import catalog
from ..projection.engine import FEMALE, MALE
from ..rules import Rules

STATUS_COLUMN = "benefit_status"
# in pay: the amount paid a month and the date payments began (null when not in pay)
IN_PAY = ("monthly_in_pay", "in_pay_since")
BENEFIT = (STATUS_COLUMN, *IN_PAY)
# the fields compared between a file and the prior one, in the file's order
COMPARED = ("birth_date", "entry_date", "separation_date", "creditable_service_years",
            "average_compensation", "group", "refund_requested", "deferred_right_1960",
            "requested_start_date", *BENEFIT, "sex")


@cache
def thresholds() -> dict[str, Any]:
    text = (resources.files("diferida") / "census" / "thresholds.toml").read_text("utf-8")
    return tomllib.loads(text)


def words(lang: str) -> dict[str, Any]:
    return catalog(lang)["census"]


def field_names(rules: Any, lang: str) -> dict[str, str]:
    """The member file's fields in words; a cut-off date of the law is the
    rules' own (`{deferred_right_cutoff}`), never written in the texts."""
    from ..words import law_words

    law = law_words(rules, lang)
    return {k: v.format(**law) for k, v in words(lang)["fields"].items()}


@dataclass
class Review:
    """Everything the workbook and the page show."""

    lang: str
    members: int
    has_status: bool
    counts: dict[str, dict[str, int]]  # "status" / "benefit_status" / "group" / "regime"
    distributions: dict[str, pl.DataFrame]  # value, members, share
    backlog: pl.DataFrame  # value (years since eligibility), members, annual_amount
    backlog_members: pl.DataFrame
    outliers: pl.DataFrame  # row, participant_id, check, value, limit
    quartiles: tuple[float, float]  # of the average compensation
    fences: tuple[float, float]  # below the one or above the other: an outlier
    joiners: pl.DataFrame | None = None
    leavers: pl.DataFrame | None = None
    changes: pl.DataFrame | None = None  # participant_id, row, field, before, after
    changes_by_field: dict[str, int] = field(default_factory=dict)
    # benefit status before and after, members (members in both files whose status moved)
    status_moves: pl.DataFrame | None = None
    # the benefit columns compared (both files have benefit_status), or not
    benefit_compared: bool = True

    def backlog_amount(self) -> Decimal:
        """The backlog's annual amounts added up, exactly (decimals)."""
        total = self.backlog_members["annual_amount"].sum()
        return Decimal("0.00") if total is None else Decimal(total)

    def figures(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "members": self.members, "backlog": self.backlog_members.height,
            "backlog_annual_amount": str(self.backlog_amount()),
            "outliers": {k: int(v) for k, v in
                         sorted(self.outliers.group_by("check").len().iter_rows())},
            "counts": self.counts,
        }
        if self.joiners is not None:
            # the three are set together (changes_between)
            assert self.leavers is not None and self.changes is not None
            d["joiners"] = self.joiners.height
            d["leavers"] = self.leavers.height
            d["members_changed"] = self.changes["participant_id"].n_unique()
            d["changes_by_field"] = self.changes_by_field
            d["benefit_compared"] = self.benefit_compared
            assert self.status_moves is not None  # set with the changes
            d["benefit_status_changes"] = self.status_moves.to_dicts()
        return d


def completed_years(col: str, day: date) -> pl.Expr:
    """Whole years from the column's date to `day` (a 29 February counts on
    28 February in a common year, rules §4)."""
    d = pl.col(col)
    later = (d.dt.month().cast(pl.Int32) * 100 + d.dt.day().cast(pl.Int32)) \
        > (day.month * 100 + day.day)
    feb29 = (d.dt.month() == 2) & (d.dt.day() == 29) & (day.month == 2) & (day.day == 28)
    return (pl.lit(day.year) - d.dt.year().cast(pl.Int32)
            - (later & ~feb29).cast(pl.Int32)).cast(pl.Int32)


def enrich(m: pl.DataFrame, day: date) -> pl.DataFrame:
    eligible = (pl.col("status") == "eligible") & (pl.col("eligibility_date") <= day)
    span_end = pl.coalesce(pl.col("separation_date"), pl.lit(day))
    return m.with_columns(
        completed_years("birth_date", day).alias("age"),
        pl.col("creditable_service_years").cast(pl.Float64).alias("service"),
        pl.col("average_compensation").cast(pl.Float64).alias("pay"),
        pl.when(eligible).then(completed_years("eligibility_date", day))
        .alias("years_since_eligibility"),
        ((span_end - pl.col("entry_date")).dt.total_days() / 365.25).alias("span"),
    )


def pay_fences(q1: float, q3: float, k: float) -> tuple[float, float]:
    """Tukey's fences on the logarithm of pay, in dollars: ln Q1 − k (ln Q3 −
    ln Q1) and ln Q3 + k (ln Q3 − ln Q1), that is Q1 ÷ (Q3/Q1)^k and
    Q3 × (Q3/Q1)^k. Both are positive whatever the spread, where fences in
    dollars (Q1 − k IQR) fall below zero and never flag a tiny salary."""
    if q1 <= 0:  # no positive pay to take a ratio of (compensation is checked > 0)
        return 0.0, q3
    ratio = (q3 / q1) ** k
    return q1 / ratio, q3 * ratio


def band_labels(bounds: list[float], whole: bool, lang: str, money: bool = False) -> list[str]:
    w = words(lang)["bands"]

    def num(x: float) -> str:
        return f"{x:,.0f}" if money else f"{x:g}"

    out = []
    for i, lo in enumerate(bounds):
        if i == len(bounds) - 1:
            out.append(w["last"].format(lo=num(lo)))
        elif whole and bounds[i + 1] - 1 == lo:  # one whole year: "1 to under 2", not "1–1"
            out.append(w["under"].format(lo=num(bounds[i + 1])) if lo == 0 else
                       w["below"].format(lo=num(lo), hi=num(bounds[i + 1])))
        elif whole:
            out.append(w["whole"].format(lo=num(lo), hi=num(bounds[i + 1] - 1)))
        else:
            out.append(w["below"].format(lo=num(lo), hi=num(bounds[i + 1])))
    return out


def banded(values: pl.Series, bounds: list[float], labels: list[str], lang: str,
           amounts: pl.Series | None = None) -> pl.DataFrame:
    """Members per band (every band shown, empty ones too); values below the
    first bound in a band of their own, so that none is dropped."""
    v = values.drop_nulls().to_numpy().astype(np.float64)
    idx = np.searchsorted(np.asarray(bounds, dtype=np.float64), v, side="right") - 1
    counts = np.bincount(idx[idx >= 0], minlength=len(bounds))
    names, members = list(labels), [int(c) for c in counts]
    below = int((idx < 0).sum())
    if below:
        names.insert(0, words(lang)["bands"]["under"].format(lo=f"{bounds[0]:g}"))
        members.insert(0, below)
    total = max(1, len(v))
    cols: dict[str, Any] = {"value": names, "members": members,
                            "share": [m / total for m in members]}
    if amounts is not None:  # each band's amounts added up exactly (decimals), column-wise
        per = pl.DataFrame({"band": idx, "amount": amounts.filter(values.is_not_null())}) \
            .group_by("band").agg(pl.col("amount").sum())
        got = dict(per.iter_rows())
        sums = [Decimal(got.get(i) or 0).quantize(Decimal("0.01")) for i in range(len(bounds))]
        if below:
            sums.insert(0, Decimal(sum((v or 0 for i, v in got.items() if i < 0), 0))
                        .quantize(Decimal("0.01")))
        cols["annual_amount"] = sums
    return pl.DataFrame(cols, schema={"value": pl.String, "members": pl.Int64,
                                      "share": pl.Float64,
                                      **({"annual_amount": pl.Decimal(20, 2)}
                                         if amounts is not None else {})})


def counted(values: pl.Series, order: list[str], names: dict[str, str]) -> pl.DataFrame:
    """Members per value, in `order` (values not in it after, as given)."""
    vc = dict(values.fill_null("").value_counts().iter_rows())
    keys = [k for k in order if k in vc] + sorted(k for k in vc if k not in order)
    total = max(1, values.len())
    return pl.DataFrame({"value": [names.get(k, k or "—") for k in keys],
                         "members": [int(vc[k]) for k in keys],
                         "share": [vc[k] / total for k in keys]},
                        schema={"value": pl.String, "members": pl.Int64, "share": pl.Float64})


def review(members: pl.DataFrame, day: date, rules: Rules, lang: str, has_status: bool,
           prior: pl.DataFrame | None, prior_has_status: bool = True) -> Review:
    t = thresholds()
    w = words(lang)
    c = catalog(lang)
    m = enrich(members, day)
    bands = t["bands"]
    dist: dict[str, pl.DataFrame] = {}
    dist["age"] = banded(m["age"], bands["age"], band_labels(bands["age"], True, lang), lang)
    dist["service"] = banded(m["service"], bands["service"],
                             band_labels(bands["service"], False, lang), lang)
    dist["compensation"] = banded(m["pay"], bands["compensation"],
                                  band_labels(bands["compensation"], False, lang, True), lang)
    groups = ["general", "police", "firefighter"]
    dist["group"] = counted(m["group"], groups, {g: w["groups"][g] for g in groups})
    regimes = ["pre1990", "new", "not_covered"]
    dist["regime"] = counted(m["regime"], regimes, {g: w["regimes"][g] for g in regimes})
    statuses = ["eligible", "not_yet_eligible", "not_entitled"]
    dist["status"] = counted(m["status"], statuses, {s: c["status"][s] for s in statuses})
    if has_status:
        dist["benefit_status"] = counted(m[STATUS_COLUMN], list(w["benefit_statuses"]),
                                         dict(w["benefit_statuses"]))
    ye = bands["years_since_eligibility"]
    dist["years_since_eligibility"] = banded(m["years_since_eligibility"], ye,
                                             band_labels(ye, True, lang), lang)
    # in the order of the values (a hash table's order differs run to run)
    counts = {k: {str(a): int(b) for a, b in sorted(
                  m[col].fill_null("").value_counts().iter_rows())}
              for k, col in (("status", "status"), ("group", "group"), ("regime", "regime"),
                             ("benefit_status", STATUS_COLUMN))}

    # the backlog: eligible now and not claimed (no status column: nobody is known to claim)
    waiting = m.filter(pl.col("years_since_eligibility").is_not_null()
                       & (pl.col(STATUS_COLUMN) == "deferred"))
    backlog = banded(waiting["years_since_eligibility"], ye, band_labels(ye, True, lang), lang,
                     amounts=waiting["annual_amount"])
    backlog_members = waiting.select("row", "participant_id", "eligibility_date",
                                     "years_since_eligibility", "annual_amount").sort(
        ["years_since_eligibility", "row"], descending=[True, False])

    # outliers, each check from the thresholds file
    o = t["outliers"]
    q1, q3 = (float(m["pay"].quantile(q, "linear") or 0) for q in (0.25, 0.75))
    lo, hi = pay_fences(q1, q3, float(o["pay"]["iqr_factor"]))
    tol = float(o["service_over_span"]["tolerance_years"])
    # (check, condition, the value measured, the limit it passed), all numbers
    checks = [
        ("age_over", pl.col("age") > o["age_over"]["years"], pl.col("age"),
         pl.lit(o["age_over"]["years"])),
        ("unclaimed", (pl.col("years_since_eligibility") >= o["unclaimed"]["years"])
         & (pl.col(STATUS_COLUMN) == "deferred"), pl.col("years_since_eligibility"),
         pl.lit(o["unclaimed"]["years"])),
        ("pay_high", pl.col("pay") > hi, pl.col("pay"), pl.lit(round(hi, 2))),
        ("pay_low", pl.col("pay") < lo, pl.col("pay"), pl.lit(round(lo, 2))),
        ("service_over_span", pl.col("service") > pl.col("span") + tol, pl.col("service"),
         (pl.col("span") + tol).round(2)),
    ]
    found = [m.filter(cond.fill_null(False)).select(
        "row", "participant_id", pl.lit(key).alias("check"),
        value.cast(pl.Float64).alias("value"), limit.cast(pl.Float64).alias("limit"))
        for key, cond, value, limit in checks]
    outliers = pl.concat(found).sort(["row", "check"])

    r = Review(lang, m.height, has_status, counts, dist, backlog, backlog_members, outliers,
               (q1, q3), (round(lo, 2), round(hi, 2)))
    if prior is not None:
        changes_between(r, m, prior, benefit=has_status and prior_has_status)
    return r


def _text(col: str, suffix: str = "") -> pl.Expr:
    """A compared field as text (`suffix`: the prior file's column)."""
    if col == "sex":
        sex = pl.col(f"_sex{suffix}")
        return (pl.when(sex == FEMALE).then(pl.lit("F"))
                .when(sex == MALE).then(pl.lit("M")).otherwise(pl.lit(None))
                .alias(f"sex{suffix}"))
    return pl.col(f"{col}{suffix}").cast(pl.String).alias(f"{col}{suffix}")


def changes_between(r: Review, now: pl.DataFrame, before: pl.DataFrame,
                    benefit: bool = True) -> None:
    """Joiners (in this file, not the prior), leavers (the other way) and,
    for members in both, each field whose value differs. `benefit`: both
    files have benefit_status, so the status, the amount in pay and the date
    payments began are compared too (a file without the column takes every
    member as deferred: comparing it would report every pensioner)."""
    r.joiners = now.join(before.select("participant_id"), on="participant_id", how="anti") \
        .select("row", "participant_id", "status")
    r.leavers = before.join(now.select("participant_id"), on="participant_id", how="anti") \
        .select(pl.col("row").alias("prior_row"), "participant_id", "status")
    r.benefit_compared = benefit
    compared = [c for c in COMPARED if benefit or c not in BENEFIT]
    typed = [c if c != "sex" else "_sex" for c in compared]
    # compared as validated and typed (a decimal's value, not its text: 30000 and
    # 30000.00 are the same pay); only the differing values are put in words
    both = now.select("participant_id", "row", *typed).join(
        before.select("participant_id", pl.col("row").alias("prior_row"), *typed),
        on="participant_id", how="inner", suffix="_prior")
    differ = [pl.col(c).ne_missing(pl.col(f"{c}_prior")) for c in typed]
    both = both.filter(pl.any_horizontal(differ)) if differ else both.clear()
    both = both.select("participant_id", "row", "prior_row",
                       *[pl.col(t).ne_missing(pl.col(f"{t}_prior")).alias(f"_d_{c}")
                         for c, t in zip(compared, typed, strict=True)],
                       *[_text(c) for c in compared],
                       *[_text(c, "_prior") for c in compared])
    moved = both.filter(pl.col(STATUS_COLUMN).ne_missing(pl.col(f"{STATUS_COLUMN}_prior"))) \
        .select(pl.col(f"{STATUS_COLUMN}_prior").alias("before"),
                pl.col(STATUS_COLUMN).alias("after")) if benefit else \
        pl.DataFrame(schema={"before": pl.String, "after": pl.String})
    order = {s: i for i, s in enumerate(catalog("en")["census"]["benefit_statuses"])}
    r.status_moves = moved.group_by("before", "after").len("members").with_columns(
        pl.col("members").cast(pl.Int64)).sort(
        pl.col("before").replace_strict(order, default=len(order), return_dtype=pl.Int32),
        pl.col("after").replace_strict(order, default=len(order), return_dtype=pl.Int32))
    parts = []
    for c in compared:
        differs = both.filter(pl.col(f"_d_{c}"))
        r.changes_by_field[c] = differs.height
        parts.append(differs.select("participant_id", "row", "prior_row",
                                    pl.lit(c).alias("field"),
                                    pl.col(f"{c}_prior").alias("before"),
                                    pl.col(c).alias("after")))
    order = {c: i for i, c in enumerate(compared)}
    r.changes = pl.concat(parts).with_columns(
        pl.col("field").replace_strict(order, return_dtype=pl.Int32).alias("_o")) \
        .sort(["row", "_o"]).drop("_o")
