"""`diferida valuation`'s schedule of changes over a census with rejected
rows (docs/valuation.md "Rejected rows and the schedule of changes"): a
census whose rejected rows are more than the share allowed is refused (exit
2, nothing written) unless --allow-rejects; with them, and under the share,
the first page (the workbook's first sheet, the JSON) says how many rows
each census lost, and the members matched to a rejected row of the other
census are on lines of their own, never experience (not members who left
or joined, not an actual payment less the expected). And `paid_in_year` on
a member not yet in pay rejects the row, naming row, id and field."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from diferida.i18n import catalog
from diferida.projection.options import MAX_REJECTED_SHARE

from .conftest import run_in_process
from .print_helpers import cells, sheet_names
from .test_valuation import A1, A2, A4, HEADER

STATUS = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
PAID = STATUS + ",paid_in_year"
PRIOR = [A1 + ",deferred,,", A2 + ",deferred,,", A4 + ",in_pay,1000.00,2012-06-01"]
# the same members, each row's paid_in_year unreadable
UNREADABLE = [A1 + ",deferred,,,x", A2 + ",deferred,,,x", A4 + ",in_pay,1000.00,2012-06-01,x"]
DATES = ("--as-of", "2026-06-30", "--prior-date", "2025-06-30")


def write(folder: Path, rows: list[str], header: str = STATUS, name: str = "census.csv"
          ) -> Path:
    p = folder / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return p


def valuation(folder: Path, census: Path, prior: Path, *args: str, output: str = "v.json",
              lang: str = "en", discount: str = "0.04"):
    return run_in_process("valuation", str(census), "-o", str(folder / output), "--prior",
                          str(prior), *DATES, "--discount", discount, "--lang", lang, *args)


def lines(report: dict) -> dict[str, int]:
    return {ln["line"]: round(float(ln["amount"]) * 100) for ln in report["changes"]}


def adds_up(changes: dict[str, int]) -> bool:
    return sum(v for k, v in changes.items() if k != "end") == changes["end"]


def many(n: int, paid: bool, bad: set[int] = frozenset()) -> list[str]:
    """n deferred members (ids M000 ...) like A1, paid 0 in the year (an
    unreadable value on the rows of `bad`)."""
    rows = []
    for k in range(n):
        row = A1.replace("A1,", f"M{k:03d},") + ",deferred,,"
        rows.append(row + ("," + ("x" if k in bad else "0") if paid else ""))
    return rows


# ---- refused over the share, unless --allow-rejects ----------------------------------


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_census_of_unreadable_payments_is_refused_and_nothing_written(tmp_path, lang):
    # every row's paid_in_year unreadable: without the refusal the liability
    # was 0.00 and the whole prior liability "members who left"
    prior = write(tmp_path, PRIOR, name="prior.csv")
    census = write(tmp_path, UNREADABLE, header=PAID)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = valuation(tmp_path, census, prior, "--rejects", str(tmp_path / "rej.csv"),
                  "--prior-rejects", str(tmp_path / "prej.csv"), lang=lang)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    message = r.stderr.strip()
    assert len(message) <= 300, len(message)
    assert "--allow-rejects" in message and "3" in message and "census.csv" in message
    assert ("rows rejected" if lang == "en" else "filas rechazadas") in message
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_prior_census_over_the_share_is_refused_naming_it(tmp_path):
    prior = write(tmp_path, [*PRIOR, A1.replace("A1,", "B1,").replace("general", "clerk")
                             + ",deferred,,"], name="prior.csv")
    census = write(tmp_path, PRIOR)
    r = valuation(tmp_path, census, prior)
    assert r.returncode == 2, r.stdout
    assert "--prior" in r.stderr and "prior.csv: 1 of 4 rows rejected" in r.stderr
    assert not (tmp_path / "v.json").exists()


def test_the_message_stays_short_with_long_names_and_both_censuses_over(tmp_path):
    long = "a" * 200
    prior = write(tmp_path, [*PRIOR[:2], PRIOR[2].replace("general", "clerk")],
                  name=f"{long}-prior.csv")
    census = write(tmp_path, UNREADABLE, header=PAID, name=f"{long}.csv")
    for lang in ("en", "es"):
        r = valuation(tmp_path, census, prior, lang=lang)
        assert r.returncode == 2
        assert len(r.stderr.strip()) <= 300, r.stderr
        assert "--prior" in r.stderr and "--allow-rejects" in r.stderr


@pytest.mark.parametrize("lang", ["en", "es"])
def test_allowed_the_first_page_says_how_many_and_nothing_is_experience(tmp_path, lang):
    prior = write(tmp_path, PRIOR, name="prior.csv")
    census = write(tmp_path, UNREADABLE, header=PAID)
    r = valuation(tmp_path, census, prior, "--allow-rejects", "--json", lang=lang)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    report = json.loads((tmp_path / "v.json").read_text())
    note = report["rejected_rows"]
    assert note == s["rejected_rows"]
    assert note["census"] == {"rows_read": 3, "rows_rejected": 3}
    assert note["prior"] == {"rows_read": 3, "rows_rejected": 0}
    assert note["prior_members_whose_row_was_rejected"] == 3
    assert note["members_whose_prior_row_was_rejected"] == 0
    assert note["max_share"] == str(MAX_REJECTED_SHARE) and note["over_share_allowed"]
    assert "3" in note["note"] and "--allow-rejects" in note["note"]
    # JSON: the note comes with the counts, before the liability and the lines
    keys = list(report)
    assert keys.index("rejected_rows") < keys.index("liability") < keys.index("changes")
    c = lines(report)
    assert adds_up(c)
    # not a member who left, not an actual payment of 0 less the expected:
    # the prior liability and its interest go out on the line of its own
    assert c["experience_left"] == 0 and c["experience_payments"] == 0
    assert c["experience_expected"] == 0
    assert c["rejected_current"] == -(c["start"] + c["interest"])
    assert report["changes_basis"]["members"]["left"] == 0
    assert report["changes_basis"]["members"]["rejected_current"] == 3

    # the workbook's first sheet, first rows
    out = "v.xlsx"
    r = valuation(tmp_path, census, prior, "--allow-rejects", output=out, lang=lang)
    assert r.returncode == 0, r.stderr
    t = catalog(lang)["liability"]
    first = sheet_names(tmp_path / out)[0]
    sheet = cells(tmp_path / out, first)
    assert sheet["A2"][1] == t["section_rejected"]
    assert (sheet["A3"][1], sheet["B3"][1]) == (t["rejected_census"],
                                                t["rejected_of"].format(rejected=3, read=3))
    assert (sheet["A4"][1], sheet["B4"][1]) == (t["rejected_prior"],
                                                t["rejected_of"].format(rejected=0, read=3))
    assert sheet["A5"][1] == t["rejected_now"] and sheet["B5"] == ("n", "3")
    assert sheet["A6"][1] == t["rejected_then"] and sheet["B6"] == ("n", "0")
    assert sheet["B7"][1] == t["rejected_rule_value"]
    assert sheet["A8"][1] == t["rejected_share"]
    changes = catalog(lang)["liability_changes"]
    words = [v for _, v in cells(tmp_path / out, t["sheet_changes"]).values()]
    assert changes["rejected_current"] in words


def test_at_the_share_the_schedule_is_made_and_its_first_page_says_so(tmp_path):
    # 1 row of 100 rejected: the share itself (not more) is allowed; 2 are not
    assert MAX_REJECTED_SHARE == Decimal("0.01")  # the figures below are for 1 in 100
    prior = write(tmp_path, many(100, paid=False), name="prior.csv")
    census = write(tmp_path, many(100, paid=True, bad={50}), header=PAID)
    r = valuation(tmp_path, census, prior, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "v.json").read_text())
    note = report["rejected_rows"]
    assert note["census"] == {"rows_read": 100, "rows_rejected": 1}
    assert note["prior_members_whose_row_was_rejected"] == 1
    assert not note["over_share_allowed"]
    members = report["changes_basis"]["members"]
    assert members["left"] == 0 and members["rejected_current"] == 1
    assert adds_up(lines(report))
    assert valuation(tmp_path, census, prior, output="v.xlsx").returncode == 0
    first = cells(tmp_path / "v.xlsx", sheet_names(tmp_path / "v.xlsx")[0])
    t = catalog("en")["liability"]
    assert first["A2"][1] == t["section_rejected"]
    assert first["B3"][1] == t["rejected_of"].format(rejected=1, read=100)
    assert "A8" not in first or first["A8"][1] != t["rejected_share"]

    two = write(tmp_path, many(100, paid=True, bad={50, 60}), header=PAID, name="two.csv")
    r = valuation(tmp_path, two, prior, output="two.json")
    assert r.returncode == 2 and "2 of 100 rows rejected" in r.stderr
    assert not (tmp_path / "two.json").exists()


def test_what_a_rejected_row_takes_out_is_the_members_part_of_last_years_liability(tmp_path):
    # at a discount of 0 and no mortality every figure is exact: the
    # schedule with M050's row of this census rejected is the schedule
    # without M050 in either census, but for its line of its own, which is
    # minus M050's liability rolled forward plus its expected payments
    prior = write(tmp_path, many(100, paid=False), name="prior.csv")
    census = write(tmp_path, many(100, paid=True, bad={50}), header=PAID)
    without = write(tmp_path, [r for r in many(100, paid=False) if not r.startswith("M050")],
                    name="without.csv")
    census_without = write(tmp_path, [r for r in many(100, paid=True)
                                      if not r.startswith("M050")], header=PAID,
                           name="census-without.csv")
    alone = write(tmp_path, [r for r in many(100, paid=False) if r.startswith("M050")],
                  name="alone.csv")
    a = lines(json.loads(valuation(tmp_path, census, prior, "--json", output="a.json",
                                   discount="0").stdout))
    b = lines(json.loads(valuation(tmp_path, census_without, without, "--json",
                                   output="b.json", discount="0").stdout))
    m = lines(json.loads(valuation(tmp_path, census_without, alone, "--json",
                                   output="m.json", discount="0").stdout))
    # M050 alone, last year: its liability; at 0, its interest is 0
    assert m["interest"] == 0
    assert a["rejected_current"] == -m["start"]
    assert a["start"] == b["start"] + m["start"]
    assert "rejected_current" not in b and "rejected_prior" not in a
    for key in b:
        if key not in ("start", "interest", "payments_actual"):
            assert a[key] == b[key], key
    assert adds_up(a) and adds_up(b)


def test_a_member_whose_prior_row_was_rejected_did_not_join(tmp_path):
    # A2's row of the prior census is rejected (an unknown group); A2 is in
    # this census: on the line of its own, not a member who joined; its
    # actual payments of the year with it, not as experience
    bad_a2 = A2.replace("police", "clerk") + ",deferred,,"
    prior = write(tmp_path, [PRIOR[0], bad_a2, PRIOR[2]], name="prior.csv")
    census = write(tmp_path, [A1 + ",deferred,,,0", A2 + ",deferred,,,0",
                              A4 + ",in_pay,1000.00,2012-06-01,12000.00"], header=PAID)
    r = valuation(tmp_path, census, prior, "--allow-rejects")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "v.json").read_text())
    note = report["rejected_rows"]
    assert note["prior"] == {"rows_read": 3, "rows_rejected": 1}
    assert note["members_whose_prior_row_was_rejected"] == 1
    members = report["changes_basis"]["members"]
    assert members["joined"] == 0 and members["rejected_prior"] == 1
    c = lines(report)
    assert c["experience_joined"] == 0 and c["rejected_prior"] > 0
    assert adds_up(c)
    runs = {ln["line"]: ln["runs"] for ln in report["changes"]}
    assert runs["rejected_prior"] == ["T6", "T7"] and runs["benefit_terms"][0] == "T7"


def test_without_rejected_rows_the_schedule_is_as_before(tmp_path):
    prior = write(tmp_path, PRIOR, name="prior.csv")
    census = write(tmp_path, PRIOR)
    report = json.loads(valuation(tmp_path, census, prior, "--json").stdout)
    assert "rejected_current" not in lines(report) and "rejected_prior" not in lines(report)
    assert report["rejected_rows"]["census"]["rows_rejected"] == 0
    assert valuation(tmp_path, census, prior, output="v.xlsx").returncode == 0
    first = cells(tmp_path / "v.xlsx", sheet_names(tmp_path / "v.xlsx")[0])
    assert first["A2"][1] != catalog("en")["liability"]["section_rejected"]


# ---- paid_in_year on a member not yet in pay -----------------------------------------


@pytest.mark.parametrize("lang, words", [
    ("en", "Paid in the year (paid_in_year): 1200.00 for a member not yet in pay"),
    ("es", "Pagado en el año (paid_in_year): 1200.00 para un miembro que aún no cobra"),
])
def test_a_payment_to_a_deferred_member_rejects_the_row(tmp_path, lang, words):
    rows = [A1 + ",deferred,,,1200.00", A2 + ",deferred,,,0",
            A4 + ",in_pay,1000.00,2012-06-01,12000.00"]
    src = write(tmp_path, rows, header=PAID)
    rej = tmp_path / "rej.csv"
    r = run_in_process("valuation", str(src), "-o", str(tmp_path / "v.json"), "--as-of",
                       "2026-06-30", "--discount", "0.04", "--rejects", str(rej), "--json",
                       "--lang", lang)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["counts"]["rows_rejected"] == 1 and s["counts"]["rows_read"] == 3
    line = pl.read_csv(rej, infer_schema=False).row(0, named=True)
    assert (line["row"], line["participant_id"], line["field"], line["code"]) == \
        ("2", "A1", "paid_in_year", "paid_deferred")
    assert words in line["message"]
    # without a rejects file, the sample on stderr names row, id and field
    r = run_in_process("valuation", str(src), "-o", str(tmp_path / "w.json"), "--as-of",
                       "2026-06-30", "--discount", "0.04", "--lang", lang)
    assert f"2: A1: {words}" in r.stderr


def test_a_census_without_status_pays_nobody(tmp_path):
    # every member of a census without benefit_status is deferred: an amount
    # paid is refused, 0 is read
    src = write(tmp_path, [A1 + ",250.00", A2 + ",0"], header=HEADER + ",paid_in_year")
    rej = tmp_path / "rej.csv"
    r = run_in_process("valuation", str(src), "-o", str(tmp_path / "v.json"), "--as-of",
                       "2026-06-30", "--discount", "0.04", "--rejects", str(rej), "--json",
                       "--lang", "en")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["rows_rejected"] == 1
    line = pl.read_csv(rej, infer_schema=False).row(0, named=True)
    assert (line["participant_id"], line["field"], line["code"]) == \
        ("A1", "paid_in_year", "paid_deferred")


def test_a_deceased_or_refunded_member_may_have_been_paid(tmp_path):
    rows = [A1 + ",deceased,,,3000.50", A2 + ",refunded,,,100.00", A4 + ",in_pay,1000.00,"
            "2012-06-01,12000.00"]
    src = write(tmp_path, rows, header=PAID)
    r = run_in_process("valuation", str(src), "-o", str(tmp_path / "v.json"), "--as-of",
                       "2026-06-30", "--discount", "0.04", "--json", "--lang", "en")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["rows_rejected"] == 0
