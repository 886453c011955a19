"""Numbers and dates typed on the command line are read in the digits 0-9
only (diferida/digits.py): Python's int(), Decimal() and str.isdigit() would
take Arabic-Indic ٥٠٠ as 500, an underscore between digits (1_0), and a
superscript ² as a digit (then a traceback from int()); date.fromisoformat()
would take 20260630 and week dates. Each is refused, exit 2, nothing
written, the message naming the option and which digits are read."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from diferida.compare.bands import BandsError, parse_bands
from diferida.digits import WholeNumber, iso_date
from diferida.projection.options import (
    OptionError,
    parse_cola,
    parse_horizon,
    parse_mortality_scale,
    parse_rates,
    parse_sex_blend,
    parse_start,
)
from diferida.service.store.chain import parse_anchor

from .conftest import run_in_process
from .test_valuation import A1, A2, HEADER

ARABIC_500 = "٥٠٠"  # Arabic-Indic digits: 500 to int() and Decimal()


def census(folder: Path) -> Path:
    p = folder / "members.csv"
    p.write_text("\n".join([HEADER, A1, A2]) + "\n", encoding="utf-8")
    return p


def refused(folder: Path, *args: str) -> str:
    src = census(folder)
    before = sorted(p.name for p in folder.iterdir())
    r = run_in_process(*args[:1], str(src), "-o", str(folder / "out.csv"), *args[1:])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert sorted(p.name for p in folder.iterdir()) == before
    return r.stderr


@pytest.mark.parametrize("lang, says", [
    ("en", 'value 1, "٥٠٠", is not an amount of money (dollars in the digits 0-9'),
    ("es", "el valor 1, «٥٠٠», no es una cantidad de dinero (dólares en los dígitos 0-9"),
])
def test_bands_in_arabic_indic_digits_are_refused(tmp_path, lang, says):
    for value in (ARABIC_500, f"{ARABIC_500},1000", "500,1_000", "５００"):
        with pytest.raises(BandsError):
            parse_bands(value, lang)
    with pytest.raises(BandsError) as e:
        parse_bands(ARABIC_500, lang)
    assert says in str(e.value)
    err = refused(tmp_path, "compare", "--rules", "article19", "--rules", "article19",
                  "--as-of", "2026-06-30", "--discount", "0.04", "--mortality", "pub2010",
                  "--bands", ARABIC_500, "--lang", lang)
    assert "--bands" in err and says in err


PROJECT = ("project", "--mortality", "none", "--as-of", "2026-06-30", "--lang", "en")


@pytest.mark.parametrize("args, says", [
    (["--discount", "٠.٠٤"], "--discount: '٠.٠٤' is not a number: only the digits 0-9"),
    (["--discount", "1_0e-2"], "--discount: '1_0e-2' is not a number: only the digits 0-9"),
    (["--discount", "0.04", "--cola", "٠"], "--cola: '٠' is not a number: only the digits 0-9"),
    (["--discount", "0.04", "--sex-blend", "٠.٥"], "--sex-blend: '٠.٥' is not a number"),
    (["--discount", "0.04", "--mortality-scale", "١"], "--mortality-scale: '١' is not a"),
    (["--discount", "0.04", "--horizon", "٥"],
     "--horizon: '٥' is not a whole number: only the digits 0-9"),
    (["--discount", "0.04", "--horizon", "1_0"], "--horizon: '1_0' is not a whole number"),
    (["--discount", "0.04", "--start", "age:٦٥"], "'٦٥' is not a whole number: only the"),
    (["--discount", "0.04", "--start", "age:²"], "'²' is not a whole number: only the"),
    (["--discount", "0.04", "--chunk-rows", ARABIC_500],
     "'٥٠٠' is not a whole number: only the digits 0-9"),
    (["--discount", "0.04", "--as-of", "20260630"], "'20260630' is not a valid YYYY-MM-DD"),
    (["--discount", "0.04", "--as-of", "2026-W01-1"], "is not a valid YYYY-MM-DD"),
])
def test_project_options_are_read_in_the_digits_0_to_9(tmp_path, args, says):
    assert says in refused(tmp_path, *PROJECT, *args)


def test_valuation_options_are_read_in_the_digits_0_to_9(tmp_path):
    src = census(tmp_path)
    for args, says in ((["--discount", "٠.٠٤"], "--discount: '٠.٠٤' is not a number"),
                       (["--discount", "0.04", "--prior", str(src), "--prior-date",
                         "٢٠٢٥-٠٦-٣٠"], "--prior-date"),
                       (["--discount", "0.04", "--chunk-rows", "٥"], "--chunk-rows")):
        r = run_in_process("valuation", str(src), "-o", str(tmp_path / "v.json"), "--as-of",
                           "2026-06-30", "--lang", "en", *args)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        assert not (tmp_path / "v.json").exists()


def test_the_shared_parsers_refuse_other_digits_and_keep_what_they_read():
    for parse, text in ((parse_rates, "٠.٠٤"), (parse_cola, "٠.٠٢"), (parse_sex_blend, "٠.٥"),
                        (parse_mortality_scale, "١"), (parse_horizon, "١٠"),
                        (parse_start, "age:٦٥"), (parse_rates, "0.0_4")):
        with pytest.raises(OptionError, match="digits 0-9"):
            parse(text)
    # what was read before is read the same
    assert parse_rates("0.04,1e-2")[1][1] == parse_rates("0.01")[0][1]
    assert parse_horizon(" 10 ") == 10 and parse_start("age:65").age == 65
    assert parse_mortality_scale("0.9") == 0.9 and float(parse_cola("0.02")) == 0.02
    with pytest.raises(OptionError, match=r"4% is 0\.04"):  # the hint kept for ASCII text
        parse_rates("4%")


def test_a_whole_number_option_and_a_date_in_other_digits():
    port = WholeNumber(0, 65535)
    assert port.convert("8000", None, None) == 8000
    for text in ("٨٠٠٠", "8_000", "８０００"):
        with pytest.raises(click.BadParameter, match="digits 0-9"):
            port.convert(text, None, None)
    from diferida.server import serve_cmd
    types = {p.name: p.type for p in serve_cmd.params}
    assert isinstance(types["port"], WholeNumber) and isinstance(types["workers"], WholeNumber)
    assert iso_date("2026-06-30") is not None
    for text in ("20260630", "2026-W01-1", "٢٠٢٦-٠٦-٣٠", "2026-02-30"):
        assert iso_date(text) is None


def test_an_audit_anchor_id_in_other_digits_is_refused():
    hash_ = "0" * 64
    assert parse_anchor(f"cases:5:{hash_}")[1] == 5
    for rid in ("٥", "²"):
        with pytest.raises(ValueError, match="CHAIN:ID:HASH"):
            parse_anchor(f"cases:{rid}:{hash_}")


def test_a_discount_rate_has_at_most_its_decimals():
    # a rate labels the outputs' columns (pv_0.04): 100,000 digits is refused,
    # briefly, and the most decimals allowed still read
    from diferida.projection.options import MAX_DISCOUNT_PLACES, OptionError, parse_rates

    assert parse_rates("0." + "1" * MAX_DISCOUNT_PLACES)[0][0] == "0." + "1" * MAX_DISCOUNT_PLACES
    with pytest.raises(OptionError) as refused:
        parse_rates("0." + "1" * 100_000)
    assert len(str(refused.value)) <= 300 and "decimals" in str(refused.value)
