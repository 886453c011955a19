"""Exact money. Amounts are integer cents; every intermediate value is an
integer numerator over a known denominator, and rounding happens once, half
up, to the cent, in `round_half_up` (rules §6)."""

from __future__ import annotations

from decimal import Decimal

import polars as pl

CENTS_PER_DOLLAR = 100
EXACT = pl.Int128  # numerators of exact amounts: cents × rate × service units


def round_half_up(numerator: pl.Expr, denominator: int) -> pl.Expr:
    """round(numerator / denominator) half up, for non-negative numerators."""
    two = pl.lit(2, dtype=EXACT)
    den = pl.lit(denominator, dtype=EXACT)
    return ((numerator.cast(EXACT) * two + den) // pl.lit(2 * denominator, dtype=EXACT)
            ).cast(pl.Int64)


def cents(dollars: Decimal) -> int:
    """Whole cents of an amount of the rules file; finer amounts are refused."""
    value = dollars * CENTS_PER_DOLLAR
    if value != value.to_integral_value():
        raise ValueError(f"{dollars} has fractions of a cent")
    return int(value)


def cents_to_decimal(cents: int | None) -> Decimal | None:
    if cents is None:
        return None
    return (Decimal(cents) / CENTS_PER_DOLLAR).quantize(Decimal("0.01"))


def format_money(amount: Decimal | None) -> str:
    """$10,200.00 — the format used in Puerto Rico in both languages."""
    if amount is None:
        return "—"
    return f"${amount:,.2f}"


def format_cents(cents: pl.Expr) -> pl.Expr:
    """`format_money` column-wise, from integer cents ("$10,200.00"; null
    stays null): the same text, for a column of amounts at once.
    `tests/test_money_format.py` holds the two equal."""
    whole = cents.abs() // CENTS_PER_DOLLAR
    sign = pl.when(cents < 0).then(pl.lit("-")).otherwise(pl.lit(""))

    def group(power: int) -> pl.Expr:  # three digits, zero-padded
        return ((whole // 10**power) % 1000).cast(pl.String).str.zfill(3)

    # below 1,000 the digits alone; from each power of 1,000 up, its leading
    # group unpadded and three digits for every lower one
    grouped = whole.cast(pl.String)
    for top in (3, 6, 9, 12, 15, 18):
        lead = (whole // 10**top).cast(pl.String)
        rest = [group(p) for p in range(top - 3, -1, -3)]
        grouped = pl.when(whole >= 10**top).then(
            pl.concat_str([lead, *rest], separator=",")).otherwise(grouped)
    return pl.concat_str(pl.lit("$"), sign, grouped, pl.lit("."),
                         (cents.abs() % CENTS_PER_DOLLAR).cast(pl.String).str.zfill(2))
