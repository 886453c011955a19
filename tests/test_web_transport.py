"""How the web pages travel: HEAD answers like GET without a body, and
answers are gzip-compressed when the client accepts it (small ones are not),
with the security headers, the static files and the API's answers intact."""

from __future__ import annotations

import gzip

import httpx
import pytest

from .test_web_pages import EXAMPLE_1
from .worked_examples import ONE


@pytest.fixture(scope="module")
def http(base_url):  # noqa: F811
    # no automatic decompression: the test reads what travelled
    with httpx.Client(base_url=base_url, headers={"Accept-Encoding": "identity"}) as c:
        yield c


def raw(http, method: str, url: str, accept: str = "gzip", **kwargs) -> httpx.Response:
    request = http.build_request(method, url, headers={"Accept-Encoding": accept}, **kwargs)
    response = http.send(request, stream=True)
    response.read_bytes = b"".join(response.iter_raw())
    response.close()
    return response


@pytest.mark.parametrize("url", ["/", "/?lang=en"])
def test_head_of_the_calculator_is_200_with_the_headers_of_get_and_no_body(http, url):
    get = raw(http, "GET", url, accept="identity")
    head = raw(http, "HEAD", url, accept="identity")
    assert get.status_code == 200 and head.status_code == 200
    assert head.read_bytes == b""
    for name in ("content-type", "content-security-policy", "x-content-type-options",
                 "cache-control", "referrer-policy"):
        assert head.headers[name] == get.headers[name], name


def test_head_of_a_static_file_and_of_a_missing_one(http):
    page = raw(http, "GET", "/", accept="identity").read_bytes.decode("utf-8")
    css = next(u for u in page.split('"') if u.startswith("/web/static/web.css"))
    head = raw(http, "HEAD", css, accept="identity")
    assert head.status_code == 200 and head.read_bytes == b""
    assert head.headers["content-type"].startswith("text/css")
    assert raw(http, "HEAD", "/web/static/nothing.css").status_code == 404


def test_the_page_is_gzip_compressed_when_accepted_and_decompresses_to_the_same_page(http):
    plain = raw(http, "GET", "/", accept="identity")
    packed = raw(http, "GET", "/", accept="gzip, deflate")
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in packed.headers["vary"].lower()
    assert len(packed.read_bytes) < len(plain.read_bytes) / 2
    assert gzip.decompress(packed.read_bytes) == plain.read_bytes
    # the security headers survive the compression
    assert packed.headers["content-security-policy"] == plain.headers["content-security-policy"]
    assert packed.headers["cache-control"] == "no-store"


def test_an_answer_and_the_static_files_are_compressed_too(http):
    posted = raw(http, "POST", "/calcular", data=EXAMPLE_1)
    assert posted.status_code == 303  # post/redirect/get
    answer = raw(http, "GET", posted.headers["location"])
    assert answer.status_code == 200 and answer.headers["content-encoding"] == "gzip"
    assert ONE.annual_shown in gzip.decompress(answer.read_bytes).decode("utf-8")
    page = raw(http, "GET", "/", accept="identity").read_bytes.decode("utf-8")
    for name in ("web.css", "web.js"):
        url = next(u for u in page.split('"') if u.startswith(f"/web/static/{name}"))
        packed = raw(http, "GET", url)
        plain = raw(http, "GET", url, accept="identity")
        assert packed.headers["content-encoding"] == "gzip"
        assert gzip.decompress(packed.read_bytes) == plain.read_bytes
        assert packed.headers["x-content-type-options"] == "nosniff"


def test_a_tiny_answer_is_not_compressed(http):
    health = raw(http, "GET", "/health")
    assert health.status_code == 200
    assert len(health.read_bytes) < 1024
    assert "content-encoding" not in health.headers


def test_an_api_answer_is_compressed_and_keeps_its_json(http):
    body = {**EXAMPLE_1, "participant_id": "T1"}
    r = raw(http, "POST", "/api/v1/determinations", json=body)
    assert r.status_code == 200, r.read_bytes[:300]
    assert r.headers["content-encoding"] == "gzip"
    assert b'"annual_amount"' in gzip.decompress(r.read_bytes)
