"""axe-core in the browser tests (WCAG 2.1 A and AA rules), shared by the
calculator's accessibility states, the workbench's walk and the letter.

axe-playwright-python ships axe-core's script inside the package: nothing is
fetched. The script is put in a page once (it stays until the page loads
another document) and run as often as the test resizes the page.

axe is itself a script: in a page with JavaScript disabled it cannot run.
A page made without JavaScript is checked as its exact HTML, at its URL, in
a page of a context where axe can run and the page's own script is left
out (`checker_context`, `page_for_axe`)."""

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


def checker_context(browser, **options):
    """A context, with JavaScript, in which axe checks the pages made
    without it; the application's own scripts are served empty."""
    context = browser.new_context(**options)
    context.route("**/web/static/*.js*", lambda route: route.fulfill(
        status=200, content_type="text/javascript", body=""))
    return context


def page_for_axe(checker, page, js: bool):
    """The page axe checks: the page itself with JavaScript; without it, a
    new page of `checker` holding the exact HTML `page` holds, at its URL
    (close it when done)."""
    if js:
        return page
    html, url = page.content(), page.url
    axe_page = checker.new_page()
    axe_page.set_viewport_size(page.viewport_size)
    axe_page.route(lambda u: u == url, lambda route: route.fulfill(
        status=200, content_type="text/html; charset=utf-8", body=html))
    axe_page.goto(url)
    assert axe_page.title() == page.title()
    return axe_page


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"][:5]:
            lines.append(f"    {', '.join(map(str, node['target']))}: {node['html'][:160]}")
    return "\n".join(lines)
