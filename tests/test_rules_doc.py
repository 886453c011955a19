"""docs/rules.md, the rules as this project applies them, is the one page the
code, the tests and the docs cite ("rules §n"), and nothing points outside
the repository:

* every `rules §n` (and every `§m` of a list or range after it) names a
  section docs/rules.md has, each section with its anchor `#sn`;
* no tracked file points outside the repository (a parent `shared` folder,
  an absolute path of a machine), and no file still cites the old contract
  by its name;
* every relative link of a Markdown page, and every repository path named
  in any file, exists; a link's `#anchor` exists in the page it names;
* the worked examples of rules §8 are what the engine gives, figure by
  figure (the table is read from the page by `tests/worked_examples.py`,
  never copied here), and conftest's `EXAMPLE_1` is the page's example 1.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl
import pytest

import diferida
from diferida.outcomes import REASONS

from .conftest import AS_OF, EXAMPLE_1
from .worked_examples import ONE, example, rows

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
THIS = Path(__file__).resolve()
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".html", ".css", ".js", ".sh", ".sql", ".cfg",
                 ".ini", ".yml", ".yaml", ".json", ".mako", ".csv", ".in", ""}


@cache
def tracked() -> tuple[Path, ...]:
    """The repository's text files: those git tracks, or without git every
    file outside the ignored folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout.decode()
        paths = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", ".venv", "var", "build", "__pycache__", ".pytest_cache",
                ".ruff_cache", ".hypothesis", "test-output", "out"}
        paths = [p for p in ROOT.rglob("*")
                 if not skip & set(p.relative_to(ROOT).parts) and p.is_file()]
    return tuple(p for p in paths
                 if p.suffix in TEXT_SUFFIXES and p.is_file() and p.resolve() != THIS)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def where(path: Path, text: str, pos: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, pos) + 1}"


# ---- the sections of docs/rules.md -------------------------------------------

def sections() -> set[str]:
    """The sections of docs/rules.md: a `## n.` heading (or `### n.m`), each
    with its anchor `<a id="sn">` just before it."""
    text = read(RULES)
    found = re.findall(r'<a id="s(\d+(?:\.\d+)*)"></a>\s*\n+#{2,3} (\d+(?:\.\d+)*)\.? ', text)
    assert all(a == h for a, h in found), found
    headings = re.findall(r"^#{2,3} (\d+(?:\.\d+)*)\.? ", text, re.M)
    assert sorted(headings) == sorted(h for _, h in found), \
        "every numbered section has its anchor"
    return {h for _, h in found}


def test_the_rules_page_keeps_the_numbering_the_citations_use():
    have = sections()
    assert {str(n) for n in range(1, 10)} <= have
    text = read(RULES)
    for title in ("Input: one participant", "Regime", "Conditions common to every route",
                  "Routes to eligibility", "When the pension starts", "Amount",
                  "Output: the determination", "Worked examples",
                  "What this project does not apply"):
        assert re.search(rf"^## \d+\. {re.escape(title)}", text, re.M), title


CITATION = re.compile(r"\brules(?:\.md)?\s+§(\d+(?:\.\d+)*)"
                      r"((?:\s*(?:,|and|y|or|–|-|to)\s*§\d+(?:\.\d+)*)*)")


def citations() -> list[tuple[str, str]]:
    """Every section number cited as `rules §n`, with where it is cited."""
    cited = []
    for path in tracked():
        text = read(path)
        for m in CITATION.finditer(text):
            for n in [m.group(1), *re.findall(r"§(\d+(?:\.\d+)*)", m.group(2))]:
                cited.append((n, where(path, text, m.start())))
    return cited


def test_every_rules_citation_names_a_section_of_the_rules_page():
    have = sections()
    cited = citations()
    assert cited, "the code cites the rules page"
    missing = [(n, at) for n, at in cited if n not in have]
    assert not missing, f"cited sections docs/rules.md does not have: {missing}"


def test_a_citation_of_a_missing_section_is_found():
    # the check above, shown to catch what it is for
    assert [m.group(1) for m in CITATION.finditer("see rules §12, and rules §4.2")] \
        == ["12", "4.2"]
    assert re.findall(r"§(\d+)", CITATION.search("rules §2–§7").group(2)) == ["7"]
    assert not {"12", "4.2"} & sections()


# ---- nothing points outside the repository -------------------------------------

OUTSIDE = re.compile(r"(?:\.\./)+shared\b|/work/|\bshared/SPEC\b|\bSPEC\.md\b")
# The old contract cited by name. The one exception is a value of the
# built-in rules data: the `description` of article19 is part of the content
# its version hash is taken over, and changing it would change the version of
# every determination already stored.
OLD_CITATION = re.compile(r"\bSPEC(?:\s+§|'s\b|\]\()")
FROZEN = {("src/diferida/rules/article19.toml",
           'description = "Article 19 as written; 19.4 open to police and firefighters '
           'of both regimes (SPEC §2 Decision)."')}


def test_no_file_points_outside_the_repository():
    found = []
    for path in tracked():
        text = read(path)
        found += [f"{where(path, text, m.start())}: {m.group(0)}"
                  for m in OUTSIDE.finditer(text)]
    assert not found, found


def test_no_file_cites_the_rules_by_another_name():
    found = []
    for path in tracked():
        text = read(path)
        rel = str(path.relative_to(ROOT))
        for m in OLD_CITATION.finditer(text):
            line = text[text.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0]
            if (rel, line) not in FROZEN:
                found.append(f"{where(path, text, m.start())}: {line.strip()}")
    assert not found, found


def test_the_frozen_description_is_still_the_stored_rules_value():
    # if the description changes, the exception above goes with it
    assert diferida.load_rules("article19").description == \
        next(iter(FROZEN))[1].split('"')[1]


LINK = re.compile(r"\]\(([^)\s]+)\)|(?:href|src)=\"([^\"]+)\"")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = read(page)
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#+\s+(.*)$", re.sub(r"```.*?```", "", text, flags=re.S),
                              re.M):
        s = slug(heading)
        ids.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return ids


def broken_links(page: Path, text: str) -> list[str]:
    broken = []
    for m in LINK.finditer(re.sub(r"```.*?```", "", text, flags=re.S)):
        target = m.group(1) or m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue  # a URL, or a path of the running site
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        try:
            goal.relative_to(ROOT)
        except ValueError:
            broken.append(f"{target}: outside the repository")
            continue
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no such anchor")
    return broken


def test_every_relative_link_of_the_docs_exists():
    found = []
    for path in tracked():
        if path.suffix == ".md":
            found += [f"{path.relative_to(ROOT)}: {b}" for b in broken_links(path, read(path))]
    assert not found, found


def test_a_broken_link_is_found():
    page = ROOT / "docs" / "decisions.md"
    assert broken_links(page, "[SPEC](../../shared/rules.md)") \
        == ["../../shared/rules.md: outside the repository"]
    assert broken_links(page, "[a](nothing.md) [b](rules.md#s10) [c](rules.md#s4)") \
        == ["nothing.md: no such file", "rules.md#s10: no such anchor"]


# A repository path named anywhere (a comment, a docstring, a page), when its
# folder is one git tracks: `docs/x.md`, `tests/test_x.py`, `src/diferida/...`
NAMED = re.compile(r"(?<![\w/.<>-])((?:docs|src|tests|bench|scripts)/[\w./-]*"
                   r"\.(?:md|py|toml|csv|sql|png|html|css|js|sh|txt))(?![\w/*<-])")


def test_every_repository_path_named_in_a_file_exists():
    folders = {p.parent for p in tracked()}
    found = []
    for path in tracked():
        text = read(path)
        for m in NAMED.finditer(text):
            named = ROOT / m.group(1)
            if named.parent in folders and not named.exists():
                found.append(f"{where(path, text, m.start())}: {m.group(1)}")
    assert not found, found


# ---- the worked examples of rules §8 are the engine's ------------------------

def test_rules_8_has_the_eleven_worked_examples_of_the_shipped_file():
    assert sorted(rows()) == list(range(1, 12))
    shipped = pl.read_csv((resources.files("diferida") / "data" / "spec_examples.csv")
                          .read_bytes(), infer_schema=False)
    for given in shipped.iter_rows(named=True):
        n = int(given["participant_id"].removeprefix("spec-"))
        inputs = {k: v for k, v in given.items() if k in example(n).file_inputs()}
        assert inputs == example(n).file_inputs(), n
        if n == 9:  # "as 1, but refund_requested true": nothing else of the row differs
            assert {k: v for k, v in given.items() if k not in ("participant_id",
                                                                "refund_requested")} == \
                {k: v for k, v in shipped.row(0, named=True).items()
                 if k not in ("participant_id", "refund_requested")}


def test_conftest_example_1_is_the_rules_page_example_1():
    # the participant most tests start from cannot drift from the page
    assert EXAMPLE_1 == ONE.file_inputs()
    assert (ONE.annual_text, ONE.monthly_text) == (str(ONE.annual), str(ONE.monthly))
    assert ONE.annual_shown == f"${ONE.annual:,.2f}"


@pytest.fixture(scope="module")
def determinations() -> dict[int, dict]:
    shipped = pl.read_csv((resources.files("diferida") / "data" / "spec_examples.csv")
                          .read_bytes(), infer_schema=False)
    out = diferida.evaluate_frame(shipped, as_of=AS_OF).determinations
    return {int(r["participant_id"].removeprefix("spec-")): r for r in out.iter_rows(named=True)}


@pytest.mark.parametrize("n", range(1, 12))
def test_each_worked_example_of_rules_8_is_what_the_engine_gives(n, determinations):
    want, d = example(n), determinations[n]
    if not want.entitled:
        assert d["status"] == "not_entitled"
        assert d["reasons"] == ";".join(r for r in REASONS if f"`{r}`" in want.result)
        assert want.annual is want.monthly is want.route is want.eligibility is None
        return
    assert (d["route"], d["eligibility_date"]) == (want.route, want.eligibility)
    assert (d["annual_amount"], d["monthly_amount"]) == (want.annual, want.monthly)
    assert f"{d['annual_amount']:,}" in want.result and f"{d['monthly_amount']:,}" in want.result
    assert d["minimum_applied"] is want.minimum_applied
    regime = {"pre1990": "pre-1990", "new": "new participant"}[d["regime"]]
    assert regime in want.result or n == 11  # example 11 says its regime by its entry (1955)


# ---- the numbers of docs/rules.md held to the rules file ---------------------

WHO = {("pre1990",): "pre-1990", ("new",): "new participant"}


def _routes_table() -> list[list[str]]:
    text = RULES.read_text(encoding="utf-8")
    part = text[text.index("## 4. Routes to eligibility"):text.index("## 5.")]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines()
            if line.startswith("| 19.")]


def test_the_routes_table_of_rules_4_states_the_rules_files_ages_and_service():
    # changing an age or a service bound in docs/rules.md §4 (or in
    # rules/article19.toml) without the other fails here
    rules = diferida.load_rules(None)
    table = _routes_table()
    assert [row[0] for row in table] == [r.id for r in rules.routes]
    for (route, who, age, service, _), r in zip(table, rules.routes, strict=True):
        assert int(age) == r.age, route
        want = (f"{r.min_service:f} ≤ S < {r.max_service:f}" if r.max_service is not None
                else f"S ≥ {r.min_service:f}")
        assert service == want, route
        if set(r.groups) == {"police", "firefighter"}:
            assert who == "police/firefighter", route
        else:
            assert who == WHO[tuple(r.regimes)], route


def test_the_amount_and_minimum_of_rules_6_are_the_rules_files():
    from decimal import Decimal

    rules = diferida.load_rules(None)
    text = RULES.read_text(encoding="utf-8")
    part = text[text.index("## 6. Amount"):text.index('<a id="s7">')]
    def pc(rate: Decimal) -> str:
        return f"{(rate * 100).normalize():f}%"

    pre = rules.amount["pre1990"].brackets
    assert f"AC × ({pc(pre[0].rate)} × min(S, {pre[1].threshold:f}) + " \
           f"{pc(pre[1].rate)} × max(S − {pre[1].threshold:f}, 0))" in part
    (new,) = rules.amount["new"].brackets
    assert f"AC × {pc(new.rate)} × S" in part
    assert f"the annual amount is at least\n  {pc(rules.minimum_rate)} × AC" in part
    assert rules.minimum_rate == Decimal("0.30")
