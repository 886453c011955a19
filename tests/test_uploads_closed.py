"""A file posted to the analyst's pages is closed when the request ends,
whatever the page answered: the pages read their forms themselves
(`request.form()`), and an upload left open held a temporary file until the
garbage collector found it (a ResourceWarning, an error in the tests)."""

from __future__ import annotations

import gc
import warnings

import pytest
from fastapi.testclient import TestClient

from diferida.server import create_app
from diferida.service.settings import Settings

from .workbench_helpers import add_users, csrf_of, sign_in


@pytest.fixture
def app(tmp_path):
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'wb.db'}",
                              rate_limit_public="off"))
    with TestClient(app):
        add_users(app.state.store)
    return app


def _left_open(post) -> list[str]:
    gc.collect()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        post()
        gc.collect()
    return [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]


def test_an_upload_is_closed_when_the_page_refuses_before_reading_it(app):
    anonymous = TestClient(app)
    assert _left_open(lambda: anonymous.post(
        "/analista/importar", data={"csrf_token": "x"},
        files={"archivo": ("solicitudes.csv", b"participant_id\nA-1\n")},
        follow_redirects=False)) == []


def test_an_upload_is_closed_once_the_page_has_read_it(app):
    page = TestClient(app)
    sign_in(page, "ana")
    token = csrf_of(page.get("/analista/nuevo").text)
    assert _left_open(lambda: page.post(
        "/analista/importar", data={"csrf_token": token},
        files={"archivo": ("solicitudes.csv", b"participant_id\nA-1\n")})) == []
