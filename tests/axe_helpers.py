"""axe-core in the browser tests (WCAG 2.1 A and AA rules), shared by the
calculator's accessibility states, the workbench's walk and the letter.

axe-playwright-python ships axe-core's script inside the package: nothing is
fetched. The script is put in a page once (it stays until the page loads
another document) and run as often as the test resizes the page.

axe is itself a script: in a page with JavaScript disabled it cannot run.
A page "without JavaScript" is therefore checked as the page whose own
script is not served (`context_without_page_script`: web.js, the only script
the pages have, is answered empty). Forms then post natively and nothing is
fetched, as without JavaScript; what could still tell the two apart, an
inline script or a <noscript>, no page may have (`SCRIPT_ONLY_PARTS`, which
the tests check). A browser with JavaScript disabled walks the calculator's
stories and the error links."""

from __future__ import annotations

import functools

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]}
AXE_RUN = "options => axe.run(document, options).then(results => results.violations)"


# axe's color contrast parses the computed color of every element it checks
# with colorjs.io, again for each element: a third of axe's time on these
# pages, which hold a handful of distinct color strings. Each string is
# parsed once, by axe's own parser, and the same four channels are set again
# for the next element with that string; a string axe cannot parse is not
# kept, and fails each time as before. The results are axe's own, checked by
# `test_axe_with_its_colors_kept_finds_what_axe_alone_finds`.
KEEP_PARSED_COLORS = """() => {
  const Color = axe.commons.color.Color;
  const parse = Color.prototype.parseString;
  if (typeof parse !== 'function') {
    throw new Error('axe-core has no Color.parseString to keep colors for: see axe_helpers.py');
  }
  if (parse.kept) return;
  const known = new Map();
  const kept = function (text) {
    const channels = known.get(text);
    if (channels !== undefined) {
      [this.r, this.g, this.b, this.alpha] = channels;
      return this;
    }
    parse.call(this, text);
    known.set(text, [this.r, this.g, this.b, this.alpha]);
    return this;
  };
  kept.kept = true;
  Color.prototype.parseString = kept;
}"""


@functools.cache
def axe_script() -> str:
    from axe_playwright_python.sync_playwright import Axe

    return Axe().axe_script


def put_axe(page, keep_colors: bool = True) -> None:
    """axe-core into the page (until it loads another document)."""
    page.evaluate(axe_script())
    if keep_colors:
        page.evaluate(KEEP_PARSED_COLORS)


def axe_violations(page) -> list[dict]:
    """axe-core's violations in the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        put_axe(page)
    return page.evaluate(AXE_RUN, AXE_OPTIONS)


# what a page would show differently with JavaScript disabled than with its
# own script not served: the tests check that no page has any
SCRIPT_ONLY_PARTS = "document.querySelectorAll('script:not([src]), noscript').length"


def context_without_page_script(browser, **options):
    """A context whose pages run no script of their own (web.js is served
    empty), in which axe can run: the pages as they are without JavaScript."""
    context = browser.new_context(**options)
    context.route("**/web/static/*.js*", lambda route: route.fulfill(
        status=200, content_type="text/javascript", body=""))
    return context


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"][:5]:
            lines.append(f"    {', '.join(map(str, node['target']))}: {node['html'][:160]}")
    return "\n".join(lines)
