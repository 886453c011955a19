"""The checks' states of the case page in a real browser (Debian's chromium
through Playwright, the application under uvicorn on a throw-away SQLite
store), checked with axe-core (WCAG 2.1 A and AA) at 1280 and 375 px: a
version whose facts contradict its check (no send button, the reason said)
and a version with a note box per warning."""

from __future__ import annotations

import pytest

from diferida.service import workflow

from .axe_helpers import axe_violations, describe
from .conftest import serving
from .test_workbench_checks_pages import EX4, TWO
from .workbench_helpers import PASSWORDS, add_users

pytestmark = pytest.mark.browser
WIDTHS = ({"width": 1280, "height": 900}, {"width": 375, "height": 740})


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("checks-browser") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with serving(app) as url:
        store = app.state.store
        add_users(store)
        ana = store.sign_in_record("ana")[0]
        cases = {k: workflow.open_draft(store, ana, v, lang="es").case_id
                 for k, v in (("contradicted", EX4), ("two", TWO))}
        yield url, cases


@pytest.mark.parametrize("state", ["contradicted", "two"])
def test_the_checks_states_have_no_axe_violation(browser, site, state):
    url, cases = site
    context = browser.new_context(base_url=url, viewport=WIDTHS[0])
    try:
        page = context.new_page()
        page.goto("/analista/entrar?lang=es")
        page.fill("#f-name", "ana")
        page.fill("#f-password", PASSWORDS["ana"])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        page.goto(f"/analista/casos/{cases[state]}")
        if state == "contradicted":
            assert page.locator("#contradicted").is_visible()
            assert page.locator("#submit").count() == 0
        else:
            boxes = page.locator("textarea[name^='acknowledgement.']")
            assert boxes.count() == 2
            # each box has its own visible label naming its warning
            for i in range(2):
                box_id = boxes.nth(i).get_attribute("id")
                assert page.locator(f"label[for='{box_id}']").inner_text().strip()
        for size in WIDTHS:
            page.set_viewport_size(size)
            found = axe_violations(page)
            assert not found, describe(found)
    finally:
        context.close()
