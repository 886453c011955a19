"""An illustrative rules set's title, in either language, quotes its own
file's numbers (render.title_words): no number of the law stands in the
catalog, and a placeholder never reaches a reader."""

from __future__ import annotations

from datetime import date

import pytest

import diferida
from diferida.money import format_money
from diferida.render import rules_title
from diferida.rules import load_rules
from diferida.words import pct

PERSON = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": "30000", "group": "general", "refund_requested": "false"}


def quoted(name: str) -> list[str]:
    rules = load_rules(name)
    if rules.relief is None:
        return [str(rules.route("19.2").age)]
    out = []
    for a in rules.relief.ordered():
        if a.kind == "raise":
            out += [pct(a.rate), format_money(a.cap_monthly)]
        if a.kind == "one_time":
            out += [format_money(a.amount), format_money(a.below_monthly)]
    return out


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("name", ["reform-19_2-age-67", "relief-pc2038-illustrative",
                                  "relief-bonus-1000-illustrative"])
def test_the_title_quotes_the_rules_file(name, lang):
    d = diferida.evaluate(PERSON, as_of=date(2026, 11, 29), rules=name, lang=lang)
    title = rules_title(d)
    assert "{" not in title and "}" not in title
    for value in quoted(name):
        assert value in title, (value, title)
