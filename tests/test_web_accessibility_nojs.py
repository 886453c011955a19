"""Every state of the calculator with JavaScript off: 0 WCAG 2.1 A/AA
violations (axe-core checks the HTML the server sent, see
test_web_accessibility.py, which holds the states and the checks)."""

from __future__ import annotations

import pytest

from .test_web_accessibility import STATES, VIEWPORTS, check_state, checker  # noqa: F401


@pytest.mark.parametrize("width", list(VIEWPORTS))
@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("state", list(STATES))
def test_every_state_without_javascript_has_no_wcag_2_1_aa_violation(
        browser, base_url, checker, state, lang, width):  # noqa: F811
    check_state(browser, base_url, checker, state, lang, width, js=False)
