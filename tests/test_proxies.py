"""Who the client is behind a reverse proxy: uvicorn's ProxyHeadersMiddleware
with the strictly parsed DIFERIDA_TRUSTED_PROXIES (service/proxies.py).
The rules of the client's address are held in
tests/test_service_refusals_in_both_languages.py; these hold what the middleware
adds and what the wrapper keeps."""

from __future__ import annotations

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from diferida.service.proxies import ForwardedClient, forwarded_client, parse_proxies

from .conftest import run_async

PROXIES = parse_proxies("DIFERIDA_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1")


def _through(peer: str, headers: list[tuple[bytes, bytes]]) -> dict:
    seen: dict = {}

    async def app(scope, receive, send):
        seen.update(client=scope["client"], scheme=scope.get("scheme"),
                    headers=list(scope["headers"]), keys=set(scope))

    scope = {"type": "http", "scheme": "http", "client": (peer, 5000), "headers": headers}
    run_async(ForwardedClient(app, PROXIES)(scope, None, None))
    return {**seen, "scope": scope}


def test_the_work_is_uvicorns_middleware():
    assert isinstance(ForwardedClient(None, PROXIES)._forwarded, ProxyHeadersMiddleware)
    assert ForwardedClient(None, ())._forwarded is None  # no proxy: nothing to do


def test_a_trusted_proxy_sets_the_scheme_and_the_app_sees_the_headers_as_sent():
    sent = [(b"x-forwarded-for", b"203.0.113.9, nonsense, 198.51.100.4"),
            (b"x-forwarded-proto", b"https")]
    seen = _through("10.1.2.3", sent)
    assert seen["client"][0] == "198.51.100.4" and seen["scheme"] == "https"
    assert seen["headers"] == sent and "diferida.x_forwarded_for" not in seen["keys"]
    # in place: the server's access line reads the same scope
    assert seen["scope"]["client"][0] == "198.51.100.4"
    # from anyone else, neither header is believed
    seen = _through("192.0.2.7", sent)
    assert seen["client"] == ("192.0.2.7", 5000) and seen["scheme"] == "http"


def test_an_ipv4_proxy_seen_through_a_dual_stack_listener_is_trusted():
    assert forwarded_client("::ffff:10.0.0.1", ["203.0.113.9"], PROXIES) == "203.0.113.9"
    assert forwarded_client("::ffff:192.0.2.7", ["203.0.113.9"], PROXIES) == "::ffff:192.0.2.7"
