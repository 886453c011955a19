"""The finding that explains each change, found column-wise (`compare.why`),
is the very finding the definition gives (`engine.explaining_finding` of both
explanations, member by member): same rule, condition and sentences, in
both languages, for every shipped reform and for reforms of each kind a
route can undergo (age, service, groups, regimes), with 29 February
birthdays, members not yet separated and members not entitled."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from bench.generate import population
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.compare import engine as cmp
from diferida.compare import why
from diferida.core import run, run_pair
from diferida.rules import load_rules
from tests.conftest import AS_OF

from .conftest import examples

REFORMS = {
    "age": '[route_overrides."19.2"]\nage = 67\n',
    "age-19_1": '[route_overrides."19.1(a)"]\nage = 60\n',
    "service": '[route_overrides."19.2"]\nmin_service = "15"\n',
    "service-range": '[route_overrides."19.1(a)"]\nmin_service = "12"\nmax_service = "28"\n',
    "groups-19_2": '[route_overrides."19.2"]\ngroups = ["general"]\n',
    "groups": '[route_overrides."19.4(a)"]\ngroups = ["police"]\n',
    "regimes": '[route_overrides."19.1(a)"]\nregimes = ["new"]\n',
    # the amount: a rate, the brackets, the 19.6 minimum and its cut-off
    "rate": '[amount.new]\nbrackets = [{ threshold = "0", rate = "0.0175" }]\n',
    "brackets": '[amount.pre1990]\nbrackets = [{ threshold = "0", rate = "0.015" }, '
                '{ threshold = "25", rate = "0.02" }]\n',
    "minimum": '[minimum]\nrate = "0.35"\n',
    "cutoff": '[regime.deferred_right_cutoff]\nvalue = "1975-12-31"\n',
    "rate-and-age": '[amount.new]\nbrackets = [{ threshold = "0", rate = "0.0175" }]\n'
                    '[route_overrides."19.2"]\nage = 67\n',
}
# every change of these is found column-wise (the others, partly member by member)
COLUMN_WISE = {"age", "age-19_1", "service", "service-range", "groups", "groups-19_2",
               "regimes", "rate", "brackets", "rate-and-age"}


def reform(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(f'base = "article19"\n[meta]\nname = "{name}"\n{REFORMS[name]}')
    return path


@pytest.fixture(scope="module")
def members() -> pl.DataFrame:
    frame = population(3000, seed=29)
    # some members born on 29 February, some not yet separated
    born = [date(1960, 2, 29), date(1964, 2, 29), date(1972, 2, 29)]
    return frame.with_columns(
        pl.when(pl.int_range(pl.len()) % 97 == 0)
        .then(pl.lit(str(born[0]))).when(pl.int_range(pl.len()) % 89 == 0)
        .then(pl.lit(str(born[1]))).when(pl.int_range(pl.len()) % 83 == 0)
        .then(pl.lit(str(born[2]))).otherwise(pl.col("birth_date")).alias("birth_date"))


def changed(frame: pl.DataFrame, ra, rb, as_of: date) -> pl.DataFrame:
    """The valid members whose determination differs between A and B."""
    fields = frame.select([c for c in frame.columns if c in cmp.FIELD_NAMES])
    a, _, _ = run(fields, as_of=as_of, rules=ra)
    b, _, _ = run(fields, as_of=as_of, rules=rb)
    fields = fields[a["_row"]]
    mask = pl.Series([False] * a.height)
    for c in ("status", "route", "eligibility_date", "start_date", "annual_cents",
              "minimum_applied"):
        mask = mask | a[c].ne_missing(b[c])
    return fields.filter(mask)


def both_ways(frame, ra, rb, as_of, lang) -> tuple[pl.DataFrame, pl.DataFrame]:
    fast = cmp.explain_changes(frame, ra, rb, as_of, lang)
    slow = cmp.explain_changes(frame, ra, rb, as_of, lang, by_route=False)
    return fast, slow


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("name", ["article19-strict-19_4", "reform-19_2-age-67"])
def test_shipped_reforms_column_wise_equals_member_by_member(members, name, lang):
    ra, rb = load_rules("article19"), load_rules(name)
    frame = changed(members, ra, rb, AS_OF)
    assert frame.height > 20
    fast, slow = both_ways(frame, ra, rb, AS_OF, lang)
    assert fast.equals(slow)
    # and every one of them was found column-wise (a route explains them all)
    located = why.locate(*(run(frame, as_of=AS_OF, rules=r, require_id=False)[0]
                           for r in (ra, rb)), ra, rb)
    assert located["_route"].null_count() == 0


@pytest.mark.parametrize("name", sorted(REFORMS))
@pytest.mark.slow
def test_each_kind_of_reform_column_wise_equals_member_by_member(members, tmp_path, name):
    ra, rb = load_rules("article19"), load_rules(reform(tmp_path, name))
    frame = changed(members, ra, rb, AS_OF)
    assert frame.height > 0
    for lang in ("es", "en"):
        fast, slow = both_ways(frame, ra, rb, AS_OF, lang)
        assert fast.equals(slow), name
        assert fast["finding_rule"].null_count() == 0  # every change is explained
    if name in COLUMN_WISE:
        full_a, full_b, _, _, _ = run_pair(frame, as_of=AS_OF, rules_a=ra, rules_b=rb,
                                           require_id=False)
        assert why.locate(full_a, full_b, ra, rb)["_route"].null_count() == 0


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000),
       as_of=st.dates(min_value=date(2015, 1, 1), max_value=date(2045, 12, 31)),
       age=st.integers(55, 70), route=st.sampled_from(["19.1(a)", "19.1(b)", "19.2"]))
@pytest.mark.slow
def test_any_age_on_any_date_column_wise_equals_member_by_member(seed, as_of, age, route):
    frame = population(300, seed=seed)
    ra = load_rules("article19")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ages.toml"
        path.write_text(f'base = "article19"\n[meta]\nname = "ages"\n'
                        f'[route_overrides."{route}"]\nage = {age}\n')
        rb = load_rules(path)
    changes = changed(frame, ra, rb, as_of)
    fast, slow = both_ways(changes, ra, rb, as_of, "es")
    assert fast.equals(slow)
