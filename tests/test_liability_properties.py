"""The schedule of changes of `diferida valuation`, on any pair of small
censuses (last year's and this year's) with members who joined, left, died,
were refunded, started being paid or whose in-pay amount or data changed:

* the lines add up exactly: last year's liability plus every line is this
  year's, to the cent (the `--json` summary's `changes`);
* each experience line is the difference of two separate runs of
  `value_file` on census files built here as liability/measure.py
  `schedule` describes them: T0 the prior census valued at the measurement
  date on the prior basis; T1 without the members who left the file; T2
  also without those who died; T3 also without those refunded; T4 with the
  rows of those who started being paid replaced by this year's; T5 with
  every other member's row replaced by this year's; T6 with the joiners
  too (this year's census). The line "expected" closes the roll-forward:
  last year's liability + interest − payments + that line = T0;
* the change of benefit terms (last year's rules set, `--prior-rules`, to
  this year's) and each change of assumptions are the differences of runs
  on this year's census with the rules, then the assumptions, changed one
  at a time (the discount rate, then the mortality); this year's liability
  is the last of them.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from diferida.liability.runner import value_file

from .conftest import run_in_process

PRIOR_DATE = date(2025, 6, 30)
C = date(2026, 6, 30)  # the measurement date, and the census date
HEADER = ["participant_id", "birth_date", "entry_date", "separation_date",
          "creditable_service_years", "average_compensation", "group", "refund_requested",
          "deferred_right_1960", "requested_start_date", "office", "benefit_status",
          "monthly_in_pay", "in_pay_since"]
FATES = ("joined", "left", "died", "refunded", "started", "changed", "gone")
AGE67 = "reform-19_2-age-67"  # a rules set of other benefit terms (rules §2 at 67)


@dataclass(frozen=True)
class Row:
    pid: str
    birth: date
    entry: date
    separation: date
    service: Decimal
    pay: Decimal
    status: str = "deferred"
    monthly: Decimal | None = None
    since: date | None = None

    def csv(self) -> str:
        return ",".join([
            self.pid, self.birth.isoformat(), self.entry.isoformat(),
            self.separation.isoformat(), str(self.service), str(self.pay), "general", "false",
            "false", "", "Ponce", self.status,
            "" if self.monthly is None else str(self.monthly),
            "" if self.since is None else self.since.isoformat()])


def day_between(lo: date, hi: date):
    return st.integers(0, (hi - lo).days).map(lambda n: lo + timedelta(days=n))


@st.composite
def member(draw, n: int) -> tuple[str, Row | None, Row | None]:
    """One member's fate and rows: (fate, last year's row, this year's row)."""
    year = draw(st.integers(1950, 1975))
    birth = date(year, draw(st.integers(1, 12)), draw(st.integers(1, 28)))
    entry = date(year + draw(st.integers(20, 27)), birth.month, birth.day)
    service = draw(st.integers(5, 30))
    separation = min(date(entry.year + service, entry.month, entry.day), date(2020, 6, 30))
    service = min(service, separation.year - entry.year)
    pay = Decimal(draw(st.integers(1_800_000, 7_000_000))).scaleb(-2)
    base = Row(f"M{n}", birth, entry, separation, Decimal(service), pay)
    monthly = st.integers(30_000, 300_000).map(lambda c: Decimal(c).scaleb(-2))
    paying = draw(st.booleans())
    prior = base if not paying else replace(
        base, status="in_pay", monthly=draw(monthly),
        since=draw(day_between(date(2012, 7, 1), PRIOR_DATE)))
    fate = draw(st.sampled_from(FATES))
    if fate == "joined":
        return fate, None, prior
    if fate == "left":
        return fate, prior, None
    if fate == "died":
        return fate, prior, replace(base, status="deceased")
    if fate == "refunded":
        return fate, base, replace(base, status="refunded")
    if fate == "started":
        return fate, base, replace(base, status="in_pay", monthly=draw(monthly),
                                   since=draw(day_between(PRIOR_DATE + timedelta(days=1), C)))
    if fate == "gone":  # deceased in both files: in neither liability
        gone = replace(base, status="deceased")
        return fate, gone, gone
    # changed: the same status, the amount in pay or the data changed (or nothing)
    if paying and draw(st.booleans()):
        now = replace(prior, monthly=draw(monthly))
    elif draw(st.booleans()):
        now = replace(prior, pay=(prior.pay * Decimal("1.05")).quantize(Decimal("0.01")))
    else:
        now = prior
    return fate, prior, now


@st.composite
def pairs(draw):
    n = draw(st.integers(1, 8))
    members = [draw(member(i)) for i in range(n)]
    # each file has a row (a census of no rows is refused, as it should be)
    assume(any(p for _, p, _ in members) and any(c for _, _, c in members))
    discount = draw(st.sampled_from(["0.03", "0.035"]))
    prior_mortality = draw(st.sampled_from(["none", "table"]))
    mortality = draw(st.sampled_from(["none", "table"]))
    prior_rules = draw(st.sampled_from([None, AGE67]))
    return members, discount, prior_mortality, mortality, prior_rules


def write(path: Path, rows) -> Path:
    path.write_text("\n".join([",".join(HEADER), *(r.csv() for r in rows)]) + "\n",
                    encoding="utf-8")
    return path


def cents(dollars: str) -> int:
    return int(Decimal(dollars).scaleb(2))


TABLE = "age,sex,qx\n" + "".join(f"{a},{s},0.02\n" for s in ("F", "M") for a in range(121))


def check(members, discount: str, prior_mortality: str, mortality: str,
          prior_rules: str | None = None) -> None:
    """`prior_rules`: last year's rules set (None: this year's, article19)."""
    with tempfile.TemporaryDirectory(prefix="diferida-schedule-") as d:
        folder = Path(d)
        (folder / "q.csv").write_text(TABLE, encoding="utf-8")
        mort = {"none": "none", "table": str(folder / "q.csv")}
        prior_rows = {p.pid: p for _, p, _ in members if p is not None}
        now_rows = {c.pid: c for _, _, c in members if c is not None}
        fate = {(p or c).pid: f for f, p, c in members}
        prior = write(folder / "prior.csv", prior_rows.values())
        current = write(folder / "current.csv", now_rows.values())
        toml = folder / "prior.toml"
        prior_table = "q.csv" if prior_mortality == "table" else "none"
        toml.write_text(f'discount = "0.03"\nmortality = "{prior_table}"\n', encoding="utf-8")

        r = run_in_process("valuation", str(current), "-o", str(folder / "out.json"),
                           "--as-of", C.isoformat(), "--discount", discount, "--mortality",
                           mort[mortality], "--prior", str(prior), "--prior-date",
                           PRIOR_DATE.isoformat(), "--prior-assumptions", str(toml),
                           *(["--prior-rules", prior_rules] if prior_rules else []),
                           "--json", "--lang", "en")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["counts"]["rows_rejected"] == 0 and out["prior_counts"]["rows_rejected"] == 0
        line = {ch["line"]: cents(ch["amount"]) for ch in out["changes"]}
        keys = [ch["line"] for ch in out["changes"]]
        assert keys[0] == "start" and keys[-1] == "end"
        # (a) the lines add up to the change, to the cent
        assert line["start"] + sum(line[k] for k in keys[1:-1]) == line["end"], out["changes"]
        assert line["end"] == cents(out["liability"]["total"])

        def value(rows, disc: str, mortality_of: str, name: str,
                  rules: str | None = prior_rules) -> int:
            rows = list(rows)
            if not rows:  # no members, no liability (a file needs a row)
                return 0
            path = write(folder / f"{name}.csv", rows)
            s = value_file(path, folder / f"{name}.json", discount=disc,
                           mortality=mort[mortality_of], measurement_date=C, as_of=C,
                           rules=rules, lang="en")
            return cents(s.liability["total"])

        # (b) the experience, member set by member set, on the prior basis
        def without(rows: dict, *fates: str) -> dict:
            return {k: v for k, v in rows.items() if fate[k] not in fates}

        t = {}
        rows = dict(prior_rows)
        t[0] = value(rows.values(), "0.03", prior_mortality, "T0")
        for k, f in ((1, "left"), (2, "died"), (3, "refunded")):
            rows = without(rows, f)
            t[k] = value(rows.values(), "0.03", prior_mortality, f"T{k}")
        rows = {k: now_rows[k] if fate[k] == "started" else v for k, v in rows.items()}
        t[4] = value(rows.values(), "0.03", prior_mortality, "T4")
        rows = {k: now_rows[k] if fate[k] in ("changed", "gone") else v
                for k, v in rows.items()}
        t[5] = value(rows.values(), "0.03", prior_mortality, "T5")
        rows.update({k: v for k, v in now_rows.items() if fate[k] == "joined"})
        t[6] = value(rows.values(), "0.03", prior_mortality, "T6")
        # T6 is this year's census but for the rows of the members who died or
        # were refunded, which are worth nothing
        assert t[6] == value(now_rows.values(), "0.03", prior_mortality, "census")
        assert line["start"] + line["interest"] + line["payments"] + \
            line["experience_expected"] == t[0]
        for k, f in enumerate(("left", "died", "refunded", "started", "changed", "joined"),
                              start=1):
            assert line[f"experience_{f}"] == t[k] - t[k - 1], (f, t, out["changes"])
        # the benefit terms: this year's census on the prior basis, this year's rules
        y1 = value(now_rows.values(), "0.03", prior_mortality, "Y1", rules=None)
        assert line["benefit_terms"] == y1 - t[6], (t, y1, out["changes"])
        if prior_rules is None:
            assert line["benefit_terms"] == 0

        # the assumptions, one at a time, on this year's census and rules
        y2 = value(now_rows.values(), discount, prior_mortality, "Y2", rules=None)
        y3 = value(now_rows.values(), discount, mortality, "Y3", rules=None)
        assert line["discount"] == y2 - y1, (y1, y2, out["changes"])
        assert line["mortality"] == y3 - y2, (y2, y3, out["changes"])
        assert line["claims"] == line["other"] == 0
        assert line["end"] == y3
        if discount == "0.03":
            assert line["discount"] == 0
        if mortality == prior_mortality:
            assert line["mortality"] == 0


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pairs())
def test_any_pair_of_censuses_reconciles_line_by_line_with_separate_runs(case):
    check(*case)


def test_a_pair_with_every_kind_of_change_reconciles():
    """One member of each fate, the discount and the mortality both changed:
    every line of the schedule is exercised (the property above draws them)."""
    def base(n: int, **kw) -> Row:
        return replace(Row(f"M{n}", date(1958 + n, 3, 1), date(1983 + n, 3, 1),
                           date(2008 + n, 6, 30), Decimal(25), Decimal(30000 + 1000 * n)),
                       **kw)
    paying = {"status": "in_pay", "monthly": Decimal("1200.50"), "since": date(2016, 7, 1)}
    members = [
        ("joined", None, base(0)),
        ("left", base(1, **paying), None),
        ("died", base(2), base(2, status="deceased")),
        ("refunded", base(3), base(3, status="refunded")),
        ("started", base(4), base(4, status="in_pay", monthly=Decimal("900.00"),
                                  since=date(2025, 10, 1))),
        ("changed", base(5, **paying), base(5, **{**paying, "monthly": Decimal("1250.00")})),
        ("changed", base(6), base(6, pay=Decimal("40000.00"))),
        ("gone", base(7, status="deceased"), base(7, status="deceased")),
    ]
    check(members, "0.035", "none", "table", AGE67)
