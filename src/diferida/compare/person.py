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
from ..explain import cite
from ..i18n import catalog
from ..render import LABELS, rules_of, start_text
from .engine import COMPARED
from .report import Values
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

    def rule_text(self) -> str | None:
        """The rule that explains the change, as a reader names it: the route
        the finding is about ("la Regla 19.4(b)"), else the finding's rule."""
        f = self.finding
        if f is None:
            return None
        route = self.route
        rules = next((r for r in (rules_of(self.a), rules_of(self.b))
                      if route is not None and any(x.id == route for x in r.routes)), None)
        citation = cite(rules.route(route).citation if rules and route is not None else f.rule,
                        self.a.lang)
        return catalog(self.a.lang)["the_rule"].format(citation=citation)

    def text(self) -> str:
        """What differs and why, in words (the determinations' language):
        each field that differs from A to B ("Fecha de elegibilidad: 10 de
        marzo de 2028 → 10 de marzo de 2035"), then the finding that explains
        it under each side. Codes and ISO dates stay in `to_dict`."""
        lang = self.a.lang
        t = catalog(lang)["compare_person"]
        if self.same:
            return t["same"]
        ra, rb = rules_of(self.a), rules_of(self.b)
        values = Values(ra, rb, lang)
        labels = catalog(lang)["compare_report"]["fields"]
        lines = [t["differs"].format(a=self.a.rules_name, b=self.b.rules_name)]
        for name in self.fields:
            shown = [_value(values, name, side, d) for side, d in (("a", self.a), ("b", self.b))]
            lines.append("  " + t["change"].format(field=labels[name], a=shown[0], b=shown[1]))
        if self.finding is not None:
            lines.append(t["why"].format(rule=self.rule_text()))
            for key, f in (("under_a", self.under_a), ("under_b", self.under_b)):
                lines.append("  " + t[key].format(text=f.text if f else t["not_checked"]))
        return "\n".join(lines)

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


def _value(values: Values, name: str, side: str, d: Determination) -> str:
    """A compared field of one side in words: the catalogs' statuses and
    reasons, a route's citation, dates written out, the start as the
    determination's start row says it, money, sí/no."""
    if name == "start_date" and d.status != "not_entitled":
        # rules §5 Decision: the determination's own start row, never a bare
        # past date (nor a bare "—" for a premature request)
        return start_text(d, LABELS[d.lang])
    v = getattr(d, name)
    if name == "minimum_applied" and d.status == "not_entitled":
        v = None  # no amount, so no minimum either way
    if name == "reasons":
        v = ";".join(v) if v else None
    return values.text(f"{name}_{side}", v)


def compare_person(a: Determination, b: Determination) -> PersonComparison:
    """The differences between two determinations of the same person (the
    same fields, as-of date and language) and the finding that explains them."""
    da, db = a.to_dict(), b.to_dict()
    fields = tuple(f for f in COMPARED if f in da and da[f] != db[f])
    fa, fb = explaining_finding(list(a.explanation), list(b.explanation)) if fields else (
        None, None)
    return PersonComparison(a, b, fields, fa, fb)
