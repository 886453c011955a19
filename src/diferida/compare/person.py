"""One person under two rule sets: what differs between the two
determinations, and the finding that explains it.

The one implementation behind `diferida evaluate … --rules A --rules B` and
the web calculator's "compare with": both evaluate the same fields with
`diferida.evaluate` under each rule set and hand the two determinations
here. The finding is chosen by `why.explaining_finding`, the definition
`diferida compare` applies to every changed member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..determination import Determination, Finding
from .engine import COMPARED
from .why import ROUTE_CONDITIONS, explaining_finding


@dataclass(frozen=True)
class PersonComparison:
    """Two determinations of one person; `fields` are the compared fields
    that differ (in COMPARED's order); `under_a` / `under_b` the explaining
    finding of each side (either may be None: a finding on one side only)."""

    a: Determination
    b: Determination
    fields: tuple[str, ...]
    under_a: Finding | None
    under_b: Finding | None

    @property
    def same(self) -> bool:
        return not self.fields

    @property
    def finding(self) -> Finding | None:
        """The finding that names the rule: B's, when B states one (the rule
        that B applies differently), else A's."""
        return self.under_b or self.under_a

    @property
    def route(self) -> str | None:
        """The route the explaining finding is about, when it is about one."""
        f = self.finding
        if f is None or f.condition not in ROUTE_CONDITIONS:
            return None
        route = f.values.get("route")
        return None if route is None else str(route)

    def to_dict(self) -> dict[str, Any]:
        """What `evaluate --rules A --rules B --json` prints."""
        da, db = self.a.to_dict(), self.b.to_dict()
        why = None
        if self.finding is not None:
            why = {"rule": self.finding.rule, "condition": self.finding.condition,
                   "under_a": self.under_a.text if self.under_a else None,
                   "under_b": self.under_b.text if self.under_b else None}
        return {"a": da, "b": db,
                "differences": {f: {"a": da[f], "b": db[f]} for f in self.fields},
                "explaining_finding": why}


def compare_person(a: Determination, b: Determination) -> PersonComparison:
    """The differences between two determinations of the same person (the
    same fields, as-of date and language) and the finding that explains them."""
    da, db = a.to_dict(), b.to_dict()
    fields = tuple(f for f in COMPARED if f in da and da[f] != db[f])
    fa, fb = explaining_finding(list(a.explanation), list(b.explanation)) if fields else (
        None, None)
    return PersonComparison(a, b, fields, fa, fb)
