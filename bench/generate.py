"""Synthetic populations of participants for benchmarks and tests.

    python bench/generate.py 1000000 -o bench/out/members-1m.csv [--invalid 0.02] [--seed 1]

Distributions (documented in docs/batch.md, all drawn with a seeded generator,
so the same arguments give the same file):

* regime: about 40% new participants (entry 1990-04-02 .. 1999-12-31), 52%
  pre-1990 (entry 1960-01-01 .. 1990-04-01), 8% not covered (entry 2000..2015);
* birth_date: entry minus 18..45 years, kept within 1930-01-01 .. 2000-12-31;
* separation_date: empty (still in service) for 6%; otherwise 1..35 years
  after entry, never after 2025-12-31;
* creditable_service_years: 55..100% of the time served, up to 4 decimals
  (a third of them whole years);
* average_compensation: log-normal around $32,000, cents included;
* group: 8% police, 4% firefighter (12% together), the rest general;
* refund_requested: 15% true; deferred_right_1960: true for half of those who
  entered by 1960-06-30, empty (default false) for 10% of the others;
* requested_start_date: 10% ask for a date in 2020..2035;
* office: a column that is not a field, carried through to the output;
* --invalid SHARE: that share of rows gets one or two bad values (a bad date,
  negative service, text as money, an unknown group, a missing refund flag,
  an id repeated from an earlier row, ...).

CSV files hold text exactly as an export would; Parquet files hold typed
columns (Date, Decimal, Boolean) unless --invalid is given, in which case
every column is text (a typed column cannot hold "1970-13-01").
"""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

EPOCH = date(1970, 1, 1)


def _day(d: date) -> int:
    return (d - EPOCH).days


def _uniform_days(rng: np.random.Generator, lo: date, hi: date, n: int) -> np.ndarray:
    return rng.integers(_day(lo), _day(hi) + 1, n)


def population(n: int, *, invalid: float = 0.0, seed: int = 1) -> pl.DataFrame:
    """`n` participants as text columns (the rules §1 fields and `office`)."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, n, p=[0.40, 0.52, 0.08])  # new, pre-1990, not covered
    entry = np.where(
        kind == 0, _uniform_days(rng, date(1990, 4, 2), date(1999, 12, 31), n),
        np.where(kind == 1, _uniform_days(rng, date(1960, 1, 1), date(1990, 4, 1), n),
                 _uniform_days(rng, date(2000, 1, 1), date(2015, 12, 31), n)))
    age_at_entry = rng.integers(18 * 365, 45 * 365, n)
    birth = np.clip(entry - age_at_entry, _day(date(1930, 1, 1)), _day(date(2000, 12, 31)))
    birth = np.minimum(birth, entry - 18 * 365)
    served = rng.integers(365, 35 * 365, n)
    sep = np.minimum(entry + served, _day(date(2025, 12, 31)))
    in_service = rng.random(n) < 0.06
    span_years = (np.where(in_service, _day(date(2025, 12, 31)), sep) - entry) / 365.25
    units = np.floor(span_years * rng.uniform(0.55, 1.0, n) * 10_000).astype(np.int64)
    whole = rng.random(n) < 0.33
    units = np.where(whole, units // 10_000 * 10_000, units)
    cents = np.round(rng.lognormal(np.log(3_200_000), 0.35, n)).astype(np.int64)
    group = rng.choice(np.array(["general", "police", "firefighter"]), n, p=[0.88, 0.08, 0.04])
    refund = rng.random(n) < 0.15
    early = entry <= _day(date(1960, 6, 30))
    right = np.where(early & (rng.random(n) < 0.5), "true",
                     np.where(rng.random(n) < 0.10, "", "false"))
    asks = rng.random(n) < 0.10
    start = _uniform_days(rng, date(2020, 1, 1), date(2035, 12, 31), n)

    def dates(days: np.ndarray) -> pl.Series:
        return pl.Series(days.astype("int32")).cast(pl.Date).dt.to_string("%Y-%m-%d")

    def decimal(values: np.ndarray, places: int) -> pl.Expr:
        s = pl.Series(values)
        w, f = (s // 10**places).cast(pl.String), (s % 10**places).cast(pl.String)
        return pl.concat_str(w, pl.lit("."), f.str.zfill(places))

    frame = pl.DataFrame({
        "participant_id": pl.Series(np.arange(1, n + 1)).cast(pl.String).str.zfill(9),
        "birth_date": dates(birth),
        "entry_date": dates(entry),
        "separation_date": dates(sep),
        "service": units,
        "cents": cents,
        "group": group,
        "refund_requested": np.where(refund, "true", "false"),
        "deferred_right_1960": right,
        "requested_start_date": dates(start),
        "office": rng.choice(np.array(["San Juan", "Ponce", "Mayagüez", "Caguas", "Arecibo"]), n),
    }).with_columns(
        ("P" + pl.col("participant_id")).alias("participant_id"),
        pl.when(pl.Series(in_service)).then(pl.lit("")).otherwise("separation_date")
        .alias("separation_date"),
        pl.when(pl.Series(whole)).then((pl.col("service") // 10_000).cast(pl.String))
        .otherwise(decimal(units, 4)).alias("creditable_service_years"),
        decimal(cents, 2).alias("average_compensation"),
        pl.when(pl.Series(asks)).then("requested_start_date").otherwise(pl.lit(""))
        .alias("requested_start_date"),
    ).select("participant_id", "birth_date", "entry_date", "separation_date",
             "creditable_service_years", "average_compensation", "group", "refund_requested",
             "deferred_right_1960", "requested_start_date", "office")
    if invalid > 0:
        frame = _spoil(frame, rng, invalid)
    # an empty cell is written as nothing at all, as spreadsheets export it
    return frame.with_columns(pl.all().replace("", None))


_SPOILERS = (
    ("birth_date", lambda i: "1970-13-01"),
    ("entry_date", lambda i: "01/07/1988"),
    ("creditable_service_years", lambda i: "-3"),
    ("creditable_service_years", lambda i: "12.34567"),
    ("average_compensation", lambda i: "treinta mil"),
    ("average_compensation", lambda i: "0"),
    ("group", lambda i: "fireman"),
    ("refund_requested", lambda i: ""),
    ("deferred_right_1960", lambda i: "maybe"),
)


def _spoil(frame: pl.DataFrame, rng: np.random.Generator, share: float) -> pl.DataFrame:
    """Give a share of rows one or two bad values, or an earlier row's id."""
    n = frame.height
    rows = np.flatnonzero(rng.random(n) < share)
    columns = {c: frame[c].to_list() for c in frame.columns}
    for i in rows.tolist():
        picks = rng.choice(len(_SPOILERS) + 1, 1 + int(rng.random() < 0.3), replace=False)
        for p in picks.tolist():
            if p == len(_SPOILERS):
                if i > 0:  # a duplicate: the id of some earlier row
                    columns["participant_id"][i] = columns["participant_id"][int(rng.integers(i))]
                continue
            name, bad = _SPOILERS[p]
            columns[name][i] = bad(i)
    return pl.DataFrame(columns, schema=frame.schema)


def typed(frame: pl.DataFrame) -> pl.DataFrame:
    """The same population with typed columns, as a database export to Parquet gives."""
    def d(c: str) -> pl.Expr:
        return pl.col(c).str.to_date("%Y-%m-%d")

    return frame.with_columns(
        d("birth_date"), d("entry_date"), d("separation_date"), d("requested_start_date"),
        pl.col("creditable_service_years").cast(pl.Decimal(10, 4)),
        pl.col("average_compensation").cast(pl.Decimal(14, 2)),
        pl.col("refund_requested") == "true",
        pl.col("deferred_right_1960") == "true",
    )


def write(n: int, path: Path, *, invalid: float = 0.0, seed: int = 1,
          block: int = 1_000_000) -> Path:
    """Write `n` rows to `path` (.csv or .parquet), a block at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise SystemExit(f"{path}: use a .csv or .parquet name")
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        writer = None
        try:
            for k, start in enumerate(range(0, n, block)):
                part = population(min(block, n - start), invalid=invalid, seed=seed + k)
                part = _renumber(part, start)
                table = (part if invalid else typed(part)).to_arrow()
                writer = writer or pq.ParquetWriter(path, table.schema)
                writer.write_table(table)
        finally:
            if writer is not None:
                writer.close()
        return path
    with path.open("wb") as out:
        for k, start in enumerate(range(0, n, block)):
            part = _renumber(population(min(block, n - start), invalid=invalid, seed=seed + k),
                             start)
            part.write_csv(out, include_header=(k == 0))
    return path


def _renumber(part: pl.DataFrame, start: int) -> pl.DataFrame:
    """Ids unique across blocks (duplicates planted by _spoil stay duplicates)."""
    return part.with_columns(
        ("P" + (pl.col("participant_id").str.slice(1).cast(pl.Int64) + start)
         .cast(pl.String).str.zfill(9)).alias("participant_id"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=int)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--invalid", type=float, default=0.0, help="share of rows with bad values")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    write(a.rows, a.output, invalid=a.invalid, seed=a.seed)


if __name__ == "__main__":
    main()
