"""A synthetic census shaped like the System's, with benefit status and
employer, for costing a relief (docs/relief.md) — illustrative, not the
System's data.

    python bench/generate_census.py -o bench/out/relief-census.csv            # the docs' example
    python bench/generate_census.py --in-pay 800000 --deferred 200000 -o x.parquet

The shape (all drawn with a seeded generator: the same arguments give the
same file):

* `--in-pay` pensions in pay (default 160,000): the monthly amount drawn
  log-normal with a median of $850 (sigma 0.62), then cut to $150 .. $9,000,
  in cents — a mean just under $1,100, about three in five under $1,000,
  a long tail (about 1 % at $4,000 and more); paid since a 1 July of
  1995 .. 2025 after the year of separation (`in_pay_since`);
* `--deferred` members with a deferred pension still to start (default
  40,000): benefit_status `deferred`, no amount in pay;
* the people (birth, entry, separation, service, compensation, group...)
  from bench/generate.py's population; a member in pay is one born before
  1 July 1966 and separated, so that every pensioner is 60 or older on
  30 June 2026;
* `employer`: the member's last employer, a code — 40 agencies (AG01 ..
  AG40, about 55 % of the members, the first ones the largest), 75
  municipalities (MU01 .. MU75, about 30 %), 25 public corporations
  (CP01 .. CP25, about 15 %), each group's members spread by a Zipf-like
  weight (the larger employers first).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import population, typed  # noqa: E402

MEDIAN, SIGMA, LOWEST, HIGHEST = 850.0, 0.62, 150.0, 9000.0
EMPLOYERS = (("AG", 40, 0.55), ("MU", 75, 0.30), ("CP", 25, 0.15))


def employers(rng: np.random.Generator, n: int) -> np.ndarray:
    codes, weights = [], []
    for prefix, count, share in EMPLOYERS:
        w = 1.0 / np.arange(1, count + 1) ** 0.8
        codes += [f"{prefix}{k:02d}" for k in range(1, count + 1)]
        weights += list(share * w / w.sum())
    p = np.array(weights)
    return np.array(codes)[rng.choice(len(codes), n, p=p / p.sum())]


def census(in_pay: int = 160_000, deferred: int = 40_000, *, seed: int = 2038) -> pl.DataFrame:
    """The census as text columns (the rules §1 fields, office, and the
    valuation's benefit_status, monthly_in_pay, in_pay_since, employer)."""
    rng = np.random.default_rng(seed)
    pool = population(3 * (in_pay + deferred) + 1000, seed=seed)
    born = pool["birth_date"].str.to_date()
    separated = pool["separation_date"].is_not_null() & (pool["separation_date"] != "")
    old = (born < date(1966, 7, 1)) & separated
    retirees = pool.filter(old).head(in_pay)
    others = pool.filter(~old & separated).head(deferred)
    if retirees.height < in_pay or others.height < deferred:
        raise SystemExit("the pool is too small for the shape asked for")
    monthly = np.clip(np.exp(rng.normal(np.log(MEDIAN), SIGMA, in_pay)), LOWEST, HIGHEST)
    cents = np.round(monthly * 100).astype(np.int64)
    left = retirees["separation_date"].str.slice(0, 4).cast(pl.Int64).to_numpy()
    since = np.minimum(np.maximum(rng.integers(1995, 2026, in_pay), left + 1), 2025)
    retirees = retirees.with_columns(
        pl.lit("in_pay").alias("benefit_status"),
        pl.Series("monthly_in_pay", [f"{c // 100}.{c % 100:02d}" for c in cents]),
        pl.Series("in_pay_since", [f"{y}-07-01" for y in since]),
        pl.lit("false").alias("refund_requested"))
    others = others.with_columns(
        pl.lit("deferred").alias("benefit_status"),
        pl.lit(None, dtype=pl.String).alias("monthly_in_pay"),
        pl.lit(None, dtype=pl.String).alias("in_pay_since"),
        pl.lit("false").alias("refund_requested"))
    out = pl.concat([retirees, others])
    ids = [f"S{k:09d}" for k in range(1, out.height + 1)]
    return out.with_columns(pl.Series("participant_id", ids),
                            pl.Series("employer", employers(rng, out.height)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True, help=".csv or .parquet")
    ap.add_argument("--in-pay", type=int, default=160_000)
    ap.add_argument("--deferred", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=2038)
    a = ap.parse_args()
    frame = census(a.in_pay, a.deferred, seed=a.seed)
    a.output.parent.mkdir(parents=True, exist_ok=True)
    if a.output.suffix == ".parquet":
        typed(frame.drop("benefit_status", "monthly_in_pay", "in_pay_since", "employer")) \
            .with_columns(frame.select("benefit_status", "monthly_in_pay", "in_pay_since",
                                       "employer")) \
            .write_parquet(a.output)
    else:
        frame.write_csv(a.output)
    pay = frame.filter(pl.col("benefit_status") == "in_pay")["monthly_in_pay"].cast(pl.Float64)
    print(f"{a.output}: {frame.height:,} members, {pay.len():,} in pay "
          f"(mean ${pay.mean():,.2f}, median ${pay.median():,.2f}, "
          f"{(pay < 1000).sum():,} under $1,000), "
          f"{frame.height - pay.len():,} deferred, "
          f"{frame['employer'].n_unique()} employers")


if __name__ == "__main__":
    main()
