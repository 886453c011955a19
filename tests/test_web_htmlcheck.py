"""An offline check of the web pages' HTML: well-formed, unique ids, every
form control labelled, every id reference resolved, a page language, nothing
inline (the pages' Content-Security-Policy forbids it) and nothing loaded
from another site. The tests at the bottom show the check catches each fault.

`problems(html)` is used by test_web_pages.py and test_web_browser.py."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
KNOWN = VOID | {
    "a", "abbr", "article", "aside", "b", "body", "button", "caption", "code", "dd", "details",
    "div", "dl", "dt", "em", "fieldset", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "head", "header", "html", "i", "label", "legend", "li", "main", "nav", "noscript", "ol",
    "optgroup", "option", "p", "script", "section", "select", "small", "span", "strong",
    "summary", "table", "tbody", "td", "textarea", "tfoot", "th", "thead", "time", "title", "tr",
    "ul",
}
# Elements a <p> cannot contain (the parser would close the <p> before them).
NOT_IN_P = {"address", "article", "aside", "div", "dl", "fieldset", "footer", "form", "h1", "h2",
            "h3", "h4", "h5", "h6", "header", "main", "nav", "ol", "p", "section", "table", "ul"}
INTERACTIVE = {"a", "button", "input", "select", "textarea", "label"}
CHILDREN = {"ul": {"li"}, "ol": {"li"}, "dl": {"div", "dt", "dd"}, "tr": {"td", "th"},
            "select": {"option", "optgroup"}, "tbody": {"tr"}, "thead": {"tr"}}
UNLABELLED_INPUTS = {"hidden", "submit", "button", "reset", "image"}
ID_REFS = ("for", "aria-describedby", "aria-labelledby", "aria-controls", "form")


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.ids: dict[str, int] = {}
        self.refs: list[tuple[str, str, str]] = []  # (attribute, id, tag)
        self.controls: list[tuple[str, dict[str, str | None], bool]] = []
        self.label_for: set[str] = set()
        self.doctype = False
        self.html_lang: str | None = None
        self.script_text = False

    def _where(self) -> str:
        return "/".join(t for t, _ in self.stack[-4:])

    def handle_decl(self, decl: str) -> None:
        if decl.lower() == "doctype html":
            self.doctype = True

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        names = [k for k, _ in attrs_list]
        attrs = dict(attrs_list)
        if len(names) != len(set(names)):
            self.problems.append(f"<{tag}> repeats an attribute: {names}")
        if tag not in KNOWN:
            self.problems.append(f"unknown element <{tag}> in {self._where()}")
        parent = self.stack[-1][0] if self.stack else None
        if parent in CHILDREN and tag not in CHILDREN[parent]:
            self.problems.append(f"<{tag}> cannot be a child of <{parent}>")
        if tag in NOT_IN_P and any(t == "p" for t, _ in self.stack):
            self.problems.append(f"<{tag}> inside <p> in {self._where()}")
        if tag in INTERACTIVE - {"label"} and any(t in ("a", "button") for t, _ in self.stack):
            self.problems.append(f"interactive <{tag}> inside a link or button")
        if tag == "form" and any(t == "form" for t, _ in self.stack):
            self.problems.append("nested <form>")
        if tag == "html":
            self.html_lang = attrs.get("lang")
        # (an empty style="" is what the browser leaves after a screenshot)
        if (attrs.get("style") or "").strip():
            self.problems.append(f"inline style on <{tag}>")
        if any(k.startswith("on") for k in attrs):
            self.problems.append(f"inline event handler on <{tag}>")
        for key in ("src", "href", "action", "formaction"):
            value = attrs.get(key) or ""
            if tag == "a" and key == "href" and value.startswith("https://"):
                continue  # a link to another site loads nothing until followed
            if value.startswith(("http:", "https:", "//")):
                self.problems.append(f"<{tag} {key}={value!r}> loads from another site")
            if key == "href" and value.startswith("#") and len(value) > 1:
                self.refs.append(("href", value[1:], tag))
        if attrs.get("id") is not None:
            self.ids[attrs["id"]] = self.ids.get(attrs["id"], 0) + 1
        for key in ID_REFS:
            for ref in (attrs.get(key) or "").split():
                self.refs.append((key, ref, tag))
        if tag == "label" and attrs.get("for"):
            self.label_for.add(attrs["for"])
        in_label = any(t == "label" for t, _ in self.stack)
        if tag in ("input", "select", "textarea"):
            if not (tag == "input" and attrs.get("type") in UNLABELLED_INPUTS):
                self.controls.append((tag, attrs, in_label))
        if tag == "script":
            self.script_text = True
        if tag not in VOID:
            self.stack.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.problems.append(f"end tag for void element </{tag}>")
            return
        if not self.stack or self.stack[-1][0] != tag:
            open_tag = self.stack[-1][0] if self.stack else None
            self.problems.append(f"</{tag}> closes <{open_tag}> in {self._where()}")
            if any(t == tag for t, _ in self.stack):
                while self.stack and self.stack[-1][0] != tag:
                    self.stack.pop()
                self.stack.pop()
            return
        self.stack.pop()
        if tag == "script":
            self.script_text = False

    def handle_data(self, data: str) -> None:
        if self.script_text and data.strip():
            self.problems.append("inline script")


def problems(html: str, *, fragment: bool = False) -> list[str]:
    """Everything wrong with a page (or a fragment of one), as sentences."""
    c = _Checker()
    c.feed(html)
    c.close()
    out = list(c.problems)
    if c.stack:
        out.append(f"unclosed elements: {[t for t, _ in c.stack]}")
    if not fragment:
        if not c.doctype:
            out.append("no <!DOCTYPE html>")
        if c.html_lang not in ("es", "en"):
            out.append(f"<html lang> is {c.html_lang!r}, not es or en")
    out += [f"id {i!r} is used {n} times" for i, n in c.ids.items() if n > 1]
    out += [f"{key}={ref!r} on <{tag}> names no element" for key, ref, tag in c.refs
            if ref not in c.ids]
    for tag, attrs, in_label in c.controls:
        labelled = (in_label or attrs.get("id") in c.label_for or attrs.get("aria-label")
                    or attrs.get("aria-labelledby"))
        if not labelled:
            out.append(f"<{tag} name={attrs.get('name')!r}> has no label")
    return out


# --- the check itself catches what it should --------------------------------------------

GOOD = ('<!DOCTYPE html><html lang="es"><head><title>x</title></head><body>'
        '<label for="a">A</label><input id="a" name="a" aria-describedby="h">'
        '<p id="h">help</p></body></html>')


def test_a_well_formed_labelled_page_has_no_problems():
    assert problems(GOOD) == []


def test_a_repeated_id_is_reported():
    assert any("used 2 times" in p for p in problems(GOOD.replace('id="h"', 'id="a"')))


def test_an_input_without_a_label_is_reported():
    assert any("has no label" in p for p in problems(GOOD.replace('for="a"', 'for="b"')))


def test_a_page_without_a_language_is_reported():
    assert any("lang" in p for p in problems(GOOD.replace(' lang="es"', "")))


def test_a_misnested_element_is_reported():
    bad = GOOD.replace("<p id=\"h\">help</p>", "<p id=\"h\"><div>help</div></p>")
    assert any("inside <p>" in p for p in problems(bad))


def test_an_unclosed_element_is_reported():
    assert any("closes" in p or "unclosed" in p
               for p in problems(GOOD.replace("</p>", "")))


def test_inline_script_style_and_other_sites_are_reported():
    bad = GOOD.replace("</body>", '<script>alert(1)</script><span style="x"></span>'
                       '<img src="https://cdn.example/x.png" alt=""></body>')
    found = problems(bad)
    assert any("inline script" in p for p in found)
    assert any("inline style" in p for p in found)
    assert any("another site" in p for p in found)
    # a secure link to another site (the Retirement Board's page) loads nothing
    assert problems(GOOD.replace("</body>", '<a href="https://example.org/">x</a></body>')) == []
    assert any("another site" in p for p in problems(
        GOOD.replace("</body>", '<a href="http://example.org/">x</a></body>')))


def test_a_reference_to_a_missing_id_is_reported():
    assert any("names no element" in p
               for p in problems(GOOD.replace('aria-describedby="h"', 'aria-describedby="zz"')))
