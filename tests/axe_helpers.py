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

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]}
AXE_RUN = "options => axe.run(document, options).then(results => results.violations)"


def axe_violations(page) -> list[dict]:
    """axe-core's violations in the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        from axe_playwright_python.sync_playwright import Axe

        page.evaluate(Axe().axe_script)
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
