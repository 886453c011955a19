"""`money.format_cents` (column-wise) writes exactly what `format_money`
writes for each amount: the explanations of a comparison use one and the
determinations the other."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diferida.money import cents_to_decimal, format_cents, format_money

from .conftest import examples

EDGES = [0, 1, 99, 100, 999_99, 1000_00, 999_999_99, 1_000_000_00, 10**11, 10**14 - 1,
         10**18, 2**63 - 1, -1, -100_000, -(2**63) + 1]


def column(values: list[int | None]) -> list[str | None]:
    return pl.DataFrame({"c": values}, schema={"c": pl.Int64}).select(
        format_cents(pl.col("c"))).to_series().to_list()


def test_the_edges_of_each_group_of_digits():
    assert column(EDGES) == [format_money(cents_to_decimal(v)) for v in EDGES]
    assert column([None]) == [None]


@settings(max_examples=examples(300))
@given(st.lists(st.integers(-(2**63) + 1, 2**63 - 1), min_size=1, max_size=50))
@pytest.mark.slow
def test_any_amount_is_written_as_format_money_writes_it(values):
    assert column(values) == [format_money(cents_to_decimal(v)) for v in values]
