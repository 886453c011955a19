"""Exact money. Amounts are integer cents; every intermediate value is an
integer numerator over a known denominator, and rounding happens once, half
up, to the cent, in `round_half_up` (SPEC §6)."""

from __future__ import annotations

from decimal import Decimal

import polars as pl

CENTS_PER_DOLLAR = 100
EXACT = pl.Int128  # numerators of exact amounts: cents × rate × service units


def round_half_up(numerator: pl.Expr, denominator: int) -> pl.Expr:
    """round(numerator / denominator) half up, for non-negative numerators."""
    two = pl.lit(2, dtype=EXACT)
    den = pl.lit(denominator, dtype=EXACT)
    return ((numerator.cast(EXACT) * two + den) // (two * den)).cast(pl.Int64)


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
