"""The worked examples of rules §8, read from docs/rules.md: the one home of
their figures in the tests.

A test that needs what an example gives (example 1's $10,200.00 a year, most
often) takes it from here, never as a literal, so that changing an example
on the rules page is one edit. `tests/test_rules_doc.py` holds the page's
figures equal to what the engine gives, and `tests/conftest.py`'s
`EXAMPLE_1` equal to example 1's inputs.

    ONE.annual          Decimal("10200.00")
    ONE.annual_text     "10200.00"      as the files, the API and the store hold it
    ONE.annual_shown    "$10,200.00"    as the web pages, the CLI and the letter show it
                                        (the same in Spanish and English)

and the same for `monthly`. The shown text is formatted here, not by the
project's own formatter, so a test comparing a page with it checks that
formatter too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path

RULES = Path(__file__).resolve().parents[1] / "docs" / "rules.md"

# an amount as the page writes it: 10,200.00 (and not the 5,236.87 of 5,236.875)
MONEY = r"\d{1,3}(?:,\d{3})*\.\d{2}\b"
ROUTE_ON = re.compile(r"(19\.\d(?:\([ab]\))?) on (\d{4}-\d{2}-\d{2})")


@cache
def rows() -> dict[int, list[str]]:
    """The cells of each row of the §8 table, by its number."""
    text = RULES.read_text(encoding="utf-8")
    part = text.split('<a id="s8">', 1)[1].split('<a id="s9">', 1)[0]
    found = {}
    for line in part.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].isdigit():
            found[int(cells[0])] = cells
    return found


@dataclass(frozen=True)
class Example:
    """One worked example: its inputs, and what it gives (route, eligibility
    date and amounts are None for a not-entitled one)."""

    n: int
    birth: date
    entry: date
    separation: date
    service: Decimal
    compensation: Decimal
    group: str
    refund_requested: bool
    result: str  # the page's result cell, word for word
    route: str | None
    eligibility: date | None
    annual: Decimal | None
    monthly: Decimal | None

    @property
    def entitled(self) -> bool:
        return "not_entitled" not in self.result

    @property
    def minimum_applied(self) -> bool:
        return "minimum applied" in self.result

    def text(self, field: str) -> str:
        """`annual` or `monthly` as a file holds it: "10200.00"."""
        value = getattr(self, field)
        assert isinstance(value, Decimal), f"example {self.n} has no {field}"
        return str(value)

    def shown(self, field: str) -> str:
        """`annual` or `monthly` as the pages show it: "$10,200.00"."""
        value = getattr(self, field)
        assert isinstance(value, Decimal), f"example {self.n} has no {field}"
        return f"${value:,}"

    @property
    def annual_text(self) -> str:
        return self.text("annual")

    @property
    def annual_shown(self) -> str:
        return self.shown("annual")

    @property
    def monthly_text(self) -> str:
        return self.text("monthly")

    @property
    def monthly_shown(self) -> str:
        return self.shown("monthly")

    def file_inputs(self) -> dict[str, str]:
        """The inputs as text in the file formats (the keys of conftest's
        `EXAMPLE_1`)."""
        return {"birth_date": self.birth.isoformat(), "entry_date": self.entry.isoformat(),
                "separation_date": self.separation.isoformat(),
                "creditable_service_years": str(self.service),
                "average_compensation": str(self.compensation), "group": self.group,
                "refund_requested": "true" if self.refund_requested else "false"}


def _amount(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


@cache
def example(n: int) -> Example:
    """Example `n` (1 to 11) of rules §8."""
    cells = rows()[n]
    result = [c for c in cells if c][-1]
    refund = False
    if n != 1 and "as 1, but `refund_requested` true" in cells[1]:  # example 9
        cells, refund = rows()[1], True
    birth, entry, separation, service, compensation, group = cells[1:7]
    route = on = annual = monthly = None
    if "not_entitled" not in result:
        match = ROUTE_ON.search(result)
        assert match, f"example {n}: no route and date in {result!r}"
        route, on = match.group(1), date.fromisoformat(match.group(2))
        before, after = result.split("monthly", 1)
        annual, monthly = _amount(re.findall(MONEY, before)[-1]), \
            _amount(re.findall(MONEY, after)[-1])
    return Example(n=n, birth=date.fromisoformat(birth), entry=date.fromisoformat(entry),
                   separation=date.fromisoformat(separation), service=Decimal(service),
                   compensation=_amount(compensation), group=group, refund_requested=refund,
                   result=result, route=route, eligibility=on, annual=annual, monthly=monthly)


ONE = example(1)
