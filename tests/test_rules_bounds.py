"""A rules file is input like any other (issue: hardening, round two).

- Every number of a rules file is bounded (rules_schema): no rate, threshold,
  minimum, age or count the file may carry can make an amount wrong or a run
  slow; a file outside the bounds is refused when it is loaded, naming the key
  and the file's line.
- Every way a rules file can be bad gives a message and exit 2, never a
  traceback and never an output, through every command that reads a rules
  file (`evaluate`, `examples`, `batch`, `project`, `compare`, `census`,
  `rules show`, `rules diff`): each loads it with `load_rules`, so each gives
  the same message.
- Within the bounds, every amount is rules §6 computed exactly with `Decimal`,
  for generated rules files (hypothesis) and at the bounds themselves."""

from __future__ import annotations

import itertools
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diferida
from diferida import rules_schema
from diferida.core import evaluate_frame
from diferida.fields import MONEY_DIGITS, SERVICE_DIGITS
from diferida.rules import RulesError, load_rules

from .conftest import AS_OF, EXAMPLE_1, examples, run_in_process
from .worked_examples import ONE

# ---- the adversarial corpus: rules files that must be refused ---------------

REFORM = 'base = "article19"\n'
CORPUS: dict[str, tuple[bytes, str]] = {
    # the rate of the report: 28 decimal places gave -6,814.12 for example 1
    "rate-28-places": (REFORM.encode() + b'[amount.new]\nbrackets = [{ threshold = "0", '
                       b'rate = "0.0000000000000000000000000001" }]\n',
                       "line 3: amount.new.brackets[0].rate: "
                       "'0.0000000000000000000000000001' has more than 10 decimal places"),
    "minimum-11-places": (REFORM.encode() + b'[minimum]\nrate = "0.30000000001"\n',
                          "line 3: minimum.rate: '0.30000000001' has more than 10"),
    # more decimal places than Decimal's 28 significant digits: once counted
    # after rounding to those digits (1 place), and accepted by every command
    "minimum-31-places": (REFORM.encode()
                          + b'[minimum]\nrate = "0.3000000000000000000000000000001"\n',
                          "line 3: minimum.rate: '0.3000000000000000000000000000001' has more "
                          "than 10 decimal places"),
    "rate-31-places": (REFORM.encode() + b'[amount.pre1990]\nbrackets = [{ threshold = "0", '
                       b'rate = "0.0150000000000000000000000000001" }, '
                       b'{ threshold = "20", rate = "0.02" }]\n',
                       "line 3: amount.pre1990.brackets[0].rate: "
                       "'0.0150000000000000000000000000001' has more than 10 decimal places"),
    "threshold-30-places": (REFORM.encode() + b'[amount.new]\nbrackets = [{ threshold = "0", '
                            b'rate = "0.01" }, { threshold = "20.000000000000000000000000000001", '
                            b'rate = "0.02" }]\n', "has more than 4 decimal places"),
    "minimum-monthly-30-places": (REFORM.encode() + b'[later_laws.act_3_2013]\n'
                                  b'minimum_monthly = "500.000000000000000000000000000001"\n',
                                  "finer than a cent"),
    "rate-nan": (REFORM.encode() + b'[minimum]\nrate = "NaN"\n',
                 "line 3: minimum.rate: not a finite number: 'NaN'"),
    "rate-snan": (REFORM.encode() + b'[amount.new]\nbrackets = [{ threshold = "0", '
                  b'rate = "sNaN" }]\n', "rate: not a finite number: 'sNaN'"),
    "rate-infinity": (REFORM.encode() + b'[amount.pre1990]\nbrackets = [{ threshold = "0", '
                      b'rate = "Infinity" }]\n', "rate: not a finite number: 'Infinity'"),
    "threshold-infinity": (REFORM.encode() + b'[amount.new]\nbrackets = [{ threshold = "0", '
                           b'rate = "0.01" }, { threshold = "-Infinity", rate = "0.02" }]\n',
                           "threshold: not a finite number"),
    "threshold-1e400": (REFORM.encode() + b'[amount.new]\nbrackets = [{ threshold = "0", '
                        b'rate = "0.01" }, { threshold = "1E+400", rate = "0.02" }]\n',
                        "threshold: '1E+400' is more than 200 years"),
    "minimum-monthly-nan": (REFORM.encode() + b'[later_laws.act_3_2013]\n'
                            b'minimum_monthly = "NaN"\n', "minimum_monthly: not a finite"),
    "minimum-monthly-fraction": (REFORM.encode() + b'[later_laws.act_3_2013]\n'
                                 b'minimum_monthly = "500.001"\n', "finer than a cent"),
    "age-1e20": (REFORM.encode() + b'[route_overrides."19.2"]\nage = 100000000000000000000\n',
                 'line 3: route "19.2", age: must be at most 150'),
    "age-2-63": (REFORM.encode() + b'[route_overrides."19.1(a)"]\nage = 9223372036854775807\n',
                 'route "19.1(a)", age: must be at most 150'),
    "min-entry-age-huge": (REFORM.encode() + b'[data_checks]\nmin_entry_age = 99999999999\n',
                           "line 3: data_checks.min_entry_age: must be at most 100"),
    "route-overrides-list": (REFORM.encode() + b'route_overrides = [1, 2]\n',
                             "line 2: route_overrides must be tables"),
    "meta-not-a-table": (REFORM.encode() + b'meta = "x"\n', "line 2: meta: must be a table"),
    "deep-nesting": (REFORM.encode() + b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n",
                     "nested too deeply"),
    "illustrative-as-text": (REFORM.encode() + b'[meta]\nname = "x"\nillustrative = "true"\n',
                             "line 4: meta.illustrative: must be true or false"),
    "latin-1": (REFORM.encode() + '[meta]\nname = "reforma-años"\n'.encode("latin-1"),
                "line 3: not UTF-8 text"),
    "ten-thousand-brackets": (
        REFORM.encode() + b'[amount.new]\nbrackets = [' + b", ".join(
            b'{ threshold = "%d", rate = "0.01" }' % i for i in range(10_000)) + b"]\n",
        "amount.new.brackets: has more than 20 entries"),
    "rate-as-float": (REFORM.encode() + b'[minimum]\nrate = 0.3\n',
                      "write numbers as strings or integers"),
    "date-with-time": (REFORM.encode() + b'[regime.not_covered_from]\n'
                       b'value = 2000-01-01T00:00:00\n', "not a YYYY-MM-DD date"),
    "time-of-day": (REFORM.encode() + b'[regime.not_covered_from]\nvalue = 07:32:00\n',
                    "not a YYYY-MM-DD date"),
    "citation-not-text": (REFORM.encode() + b'[minimum]\ncitation = 19\n',
                          "line 3: minimum.citation: must be text"),
    "max-below-min": (REFORM.encode() + b'[route_overrides."19.1(a)"]\nmax_service = "5"\n',
                      "max_service must be above min_service"),
    "unknown-key-in-full-file": (
        None, "'rate_x' is not a key of this table"),
}


def _corpus_file(tmp_path: Path, name: str) -> Path:
    content, _ = CORPUS[name]
    if content is None:  # a complete rules file with a misspelt key
        text = (Path(diferida.__file__).parent / "rules" / "article19.toml").read_text()
        content = text.replace('rate = "0.30"', 'rate_x = "0.30"').encode()
    path = tmp_path / f"{name}.toml"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("name", list(CORPUS))
def test_a_bad_rules_file_is_refused_on_loading_naming_the_key_and_line(tmp_path, name):
    path = _corpus_file(tmp_path, name)
    with pytest.raises(RulesError) as err:
        load_rules(path)
    assert CORPUS[name][1] in str(err.value)
    assert str(err.value).startswith(str(path))


def test_a_folder_named_as_rules_is_refused(tmp_path):
    with pytest.raises(RulesError, match="a folder, not a rules file"):
        load_rules(tmp_path)


MEMBERS_CSV = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
               "average_compensation,group,refund_requested\n"
               "p1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false\n"
               "p2,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,general,false\n")


def _commands(members: Path, out: Path, rules: Path) -> dict[str, list[str]]:
    """Every command that reads a rules file: each loads it with `load_rules`."""
    return {
        "evaluate": ["evaluate", "--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
                     "--separation-date", "2010-06-30", "--service", "22",
                     "--compensation", "30000", "--no-refund", "--rules", str(rules)],
        "evaluate-two": ["evaluate", "--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
                         "--separation-date", "2010-06-30", "--service", "22",
                         "--compensation", "30000", "--no-refund", "--rules", "article19",
                         "--rules", str(rules)],
        "examples": ["examples", "--rules", str(rules)],
        "batch": ["batch", str(members), "--output", str(out / "batch.csv"),
                  "--rules", str(rules)],
        "project": ["project", str(members), "--output", str(out / "project.csv"),
                    "--discount", "0.04", "--mortality", "none",
                    "--rules", str(rules)],
        "compare": ["compare", str(members), "--rules", "article19", "--rules", str(rules),
                    "--output", str(out / "compare.csv")],
        "compare-a": ["compare", str(members), "--rules", str(rules), "--rules", "article19",
                      "--output", str(out / "compare.csv")],
        "census": ["census", str(members), "--output", str(out / "census.xlsx"),
                   "--rules", str(rules)],
        "rules-show": ["rules", "show", str(rules)],
        "rules-diff": ["rules", "diff", "article19", str(rules)],
    }


def _refusal(rules: Path) -> str:
    """The one message every command gives for a rules file `load_rules` refuses."""
    with pytest.raises(RulesError) as err:
        load_rules(rules)
    return f"--rules: {err.value}"


@pytest.mark.parametrize("name", list(CORPUS))
def test_every_command_refuses_every_bad_rules_file_with_exit_2_one_message_no_output(
        tmp_path, name):
    # minimum-31-places and rate-31-places: past Decimal's 28 digits, such a
    # rate was counted as 1 place and accepted (exit 0, an amount computed)
    rules = _corpus_file(tmp_path, name)
    message = _refusal(rules)
    assert CORPUS[name][1] in message
    members = tmp_path / "members.csv"
    members.write_text(MEMBERS_CSV)
    out = tmp_path / "out"
    out.mkdir()
    for command, args in _commands(members, out, rules).items():
        proc = run_in_process(*args)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, (command, proc.stderr)
        assert message in proc.stderr.splitlines(), (command, proc.stderr)
        assert list(out.iterdir()) == [], (command, list(out.iterdir()))


def test_decimal_places_are_counted_from_the_digits_not_after_rounding():
    from decimal import Decimal as D

    from diferida.rules_schema import decimal_places

    assert [decimal_places(D(x)) for x in (
        "0.3000000000000000000000000000001", "0.30", "0", "0.000", "100", "1E+3", "1E-3",
        "0.0000000001", "12.5000", "0." + "0" * 40 + "1")] == [31, 1, 0, 0, 0, 0, 3, 10, 1, 41]


# ---- the bounds keep every amount exact ------------------------------------

def test_the_largest_exact_numerator_fits_128_bit_integers():
    # rates of RATE_PLACES places, the largest compensation and service the
    # input accepts: the largest numerator money.round_half_up forms
    most = (2 * (10 ** (MONEY_DIGITS + 2) - 1) * 10**rules_schema.RATE_PLACES
            * (10 ** (SERVICE_DIGITS + 4) - 1) + 12 * 10**rules_schema.RATE_PLACES * 10**4)
    assert most == rules_schema.EXACT_BOUND
    assert most < 2**127 - 1


def spec_amount(comp: Decimal, service: Decimal, brackets: list[tuple[Decimal, Decimal]],
                minimum: Decimal | None) -> tuple[Decimal, Decimal]:
    """rules §6 with these numbers, exactly: the marginal scale, the 19.6 minimum,
    rounded once half up to the cent (annual, and annual / 12)."""
    exact = Decimal(0)
    for i, (threshold, rate) in enumerate(brackets):
        upper = brackets[i + 1][0] if i + 1 < len(brackets) else None
        years = max(service - threshold, Decimal(0))
        if upper is not None:
            years = min(years, upper - threshold)
        exact += comp * rate * years
    if minimum is not None:
        exact = max(exact, comp * minimum)
    cent = Decimal("0.01")
    return exact.quantize(cent, ROUND_HALF_UP), (exact / 12).quantize(cent, ROUND_HALF_UP)


_files = itertools.count()


def _reform(tmp_path: Path, brackets: list[tuple[Decimal, Decimal]], minimum: Decimal,
            name: str) -> Path:
    scale = ", ".join(f'{{ threshold = "{t}", rate = "{r}" }}' for t, r in brackets)
    path = tmp_path / f"{name}-{next(_files)}.toml"  # a new file for each example
    path.write_text(f'{REFORM}[meta]\nname = "{name}"\n'
                    f'[amount.pre1990]\nbrackets = [{scale}]\n'
                    f'[amount.new]\nbrackets = [{scale}]\n'
                    f'[minimum]\nrate = "{minimum}"\n')
    return path


def _members(rows: list[tuple[str, str, str]]) -> pl.DataFrame:
    """Pre-1990 members who entered before 1960 (the 19.6 minimum applies),
    separated, no refund: (id, service, compensation)."""
    return pl.DataFrame({
        "participant_id": [r[0] for r in rows],
        "birth_date": ["1900-01-01"] * len(rows),
        "entry_date": ["1950-01-01"] * len(rows),
        "separation_date": ["1960-01-01"] * len(rows),
        "creditable_service_years": [r[1] for r in rows],
        "average_compensation": [r[2] for r in rows],
        "group": ["general"] * len(rows),
        "refund_requested": ["false"] * len(rows),
    })


def _check(tmp_path, brackets, minimum, rows, name):
    import decimal

    path = _reform(tmp_path, brackets, minimum, name)
    result = evaluate_frame(_members(rows), as_of=AS_OF, rules=path)
    assert result.rejected.height == 0, result.rejected.to_dicts()
    got = {r["participant_id"]: (r["annual_amount"], r["monthly_amount"])
           for r in result.determinations.iter_rows(named=True)}
    with decimal.localcontext() as ctx:
        ctx.prec = 80  # exact for every product of the bounds
        for pid, service, comp in rows:
            want = spec_amount(Decimal(comp), Decimal(service), brackets, minimum)
            assert got[pid] == want, (pid, service, comp, brackets, minimum)


def test_amounts_at_the_bounds_are_exact(tmp_path):
    top = Decimal("0.9999999999")  # 10 places, just under the whole compensation
    brackets = [(Decimal(0), top), (Decimal("0.0001"), Decimal("0.0000000001")),
                (Decimal("199.9999"), top)]
    most_comp = "9" * MONEY_DIGITS + ".99"
    rows = [("max-max", "59.9999", most_comp),  # service below the age at separation (60)
            ("max-ten", "10", most_comp), ("min-max", "59.9999", "0.01"),
            ("middle", "22.1234", "30000.01")]
    _check(tmp_path, brackets, top, rows, "bounds")


def test_example_1_with_a_10_place_rate_on_new_participants_is_unchanged(tmp_path):
    # the report's case: a reform of new participants' rate leaves a pre-1990
    # member's 10,200.00 alone (it gave -6,814.12 with 28 places)
    path = tmp_path / "r.toml"
    path.write_text(REFORM + '[amount.new]\nbrackets = [{ threshold = "0", '
                    'rate = "0.0000000001" }]\n')
    d = diferida.evaluate(EXAMPLE_1, as_of=AS_OF, rules=path)
    assert (d.annual_amount, d.monthly_amount) == (ONE.annual, ONE.monthly)


@st.composite
def rules_and_members(draw):
    places = st.integers(0, rules_schema.RATE_PLACES)
    n = draw(st.integers(1, 5))
    thresholds = sorted(draw(st.sets(st.integers(1, 60 * 10_000), min_size=n - 1,
                                     max_size=n - 1)))
    brackets = [(Decimal(0), None)] + [(Decimal(t).scaleb(-4), None) for t in thresholds]
    rated = []
    for threshold, _ in brackets:
        p = draw(places)
        rated.append((threshold, Decimal(draw(st.integers(0, 10**p))).scaleb(-p)))
    p = draw(places)
    minimum = Decimal(draw(st.integers(0, 10**p))).scaleb(-p)
    rows = []
    for i in range(draw(st.integers(1, 8))):
        # entitled (at least 10 years: 19.1) and below the age at separation (60)
        service = Decimal(draw(st.integers(100_000, 599_999))).scaleb(-4)
        comp = Decimal(draw(st.integers(1, 10 ** (MONEY_DIGITS + 2) - 1))).scaleb(-2)
        rows.append((f"m{i}", f"{service:f}", f"{comp:f}"))
    return rated, minimum, rows


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rules_and_members())
@pytest.mark.slow
def test_every_amount_under_generated_rules_is_the_exact_decimal_of_spec_6(tmp_path, case):
    brackets, minimum, rows = case
    _check(tmp_path, brackets, minimum, rows, "generated")


def test_a_version_is_the_hash_of_the_resolved_table_the_schema_reads():
    # the schema checks the table; the version is still the hash of what is
    # stored with a determination, so stored determinations keep theirs
    import hashlib
    import json

    for name in diferida.builtin_names():
        r = load_rules(name)
        digest = hashlib.sha256(json.dumps(r.resolved, sort_keys=True,
                                           ensure_ascii=False).encode()).hexdigest()
        assert r.version == f"{r.name}@{digest[:12]}"
