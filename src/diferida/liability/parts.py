"""What a valuation report is written from (`ReportParts`), one record for
every format: the workbook and the JSON (report.py), the GASB 73 sections
(gasb_report.py) and the printed document (pdf.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from .measure import Basis, Liability, Line, RollForward


@dataclass(frozen=True)
class ReportParts:
    """Everything a valuation report is written from, in every format (the
    workbook, the JSON, the PDF): the summary and the liability, the basis
    (and last year's), the schedule of changes and what it rests on, the
    employers (their shares, names and members), the rules sets, the
    assumptions page, the GASB 73 report, the roll-forward, the language."""

    summary: Any  # runner.ValuationSummary
    liability: Liability
    basis: Basis
    prior_basis: Basis
    lines: list[Line] | None
    info: dict[str, Any] | None
    employers: Any  # measure.employers: (codes, payments, shares, proportions)
    names: dict[str, str] | None
    rules: Any  # rules.Rules
    prior_rules: Any
    prior_date: date | None
    assumptions: dict[str, Any]
    lang: str
    gasb73: Any = None  # runner.GasbPart
    roll_forward: RollForward | None = None
    employer_members: dict[str, int] | None = None

    def schedule(self) -> tuple[list[Line], dict[str, Any], date] | None:
        """The schedule of changes, what it rests on and last year's date;
        None without a prior census (the three come together)."""
        if self.lines is None:
            return None
        assert self.info is not None and self.prior_date is not None
        return self.lines, self.info, self.prior_date
