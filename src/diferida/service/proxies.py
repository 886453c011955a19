"""Who the client is: the address the connection comes from, unless it comes
from a reverse proxy the administrator named (DIFERIDA_TRUSTED_PROXIES); only
then is the proxy's `X-Forwarded-For` believed.

The rate limits and the count of failed sign-ins are kept per client
(service/throttle.py). A header any client can write must not decide who the
client is: believed from anyone, a spoofed `X-Forwarded-For` gives each
request an address of its own (no limit holds) or someone else's (an
analyst locked out by failures sent in their name). So the header is read
only on connections from a trusted proxy, from its right end (what the
nearest proxy wrote) leftwards, past the addresses of trusted proxies: the
first address that is not one is the client. What a client wrote to the
left of that is never read.

The work is uvicorn's own middleware (`ProxyHeadersMiddleware`), given the
service's setting; uvicorn's handling at the server, which trusts 127.0.0.1
by default, is turned off by `diferida serve` (service/serving.py). Around
it, two things the middleware does not do:

* the setting is parsed strictly (`parse_proxies`): a mistyped entry stops
  the start with a message naming the setting, where the middleware would
  take it as a host name that never matches;
* a hop that is not an address (`unknown`, garbage) ends what the proxies
  vouch for: only the hops to its right are handed over, so the client is
  never a word some proxy or client wrote.

An IPv4 proxy is also trusted when the connection shows its address in
IPv6's IPv4-mapped form (`::ffff:10.0.0.1`, a dual-stack listener). From a
trusted proxy, `X-Forwarded-Proto` also sets the request's scheme.
"""

from __future__ import annotations

import ipaddress

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_HEADER = b"x-forwarded-for"
_KEPT = "diferida.x_forwarded_for"  # the request's own headers, while the middleware runs


def parse_proxies(name: str, text: str) -> tuple[Network, ...]:
    """Addresses or networks (CIDR), separated by commas or spaces; none for
    an empty text. A mistyped entry stops the start, never means "trust
    everyone" or "trust no one" silently."""
    out: list[Network] = []
    for entry in text.replace(",", " ").split():
        try:
            out.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{name} must list IP addresses or networks (such as "
                             f"'127.0.0.1, 10.0.0.0/8'), got {entry!r}") from None
    return tuple(out)


def _trusted_hosts(proxies: tuple[Network, ...]) -> list[str]:
    """The networks as uvicorn's middleware reads them, each IPv4 one also in
    its IPv4-mapped IPv6 form."""
    hosts = [str(net) for net in proxies]
    hosts += [f"::ffff:{net.network_address}/{96 + net.prefixlen}"
              for net in proxies if net.version == 4]
    return hosts


def _address(text: str) -> Address | None:
    """An address as a proxy writes it in X-Forwarded-For: bare, IPv4 with a
    port, or IPv6 in brackets with or without a port; None for anything else."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _vouched(values: list[str]) -> str:
    """The hops of these X-Forwarded-For values to the right of the last one
    that is not an address ("" when the last hop is not one)."""
    hops = [h.strip() for value in values for h in value.split(",")]
    for i in range(len(hops) - 1, -1, -1):
        if _address(hops[i]) is None:
            hops = hops[i + 1:]
            break
    return ", ".join(hops)


class ForwardedClient:
    """Pure ASGI, outermost: uvicorn's `ProxyHeadersMiddleware` with the
    trusted networks, which sets the request's client (and scheme) from the
    forwarded headers when, and only when, the connection comes from a
    trusted proxy; in place, so uvicorn's access line shows the client too.
    The middleware sees the vouched part of X-Forwarded-For; the app, the
    request's headers as they came."""

    def __init__(self, app, proxies: tuple[Network, ...]):
        self.app = app
        self.proxies = proxies
        self._forwarded = (ProxyHeadersMiddleware(self._restore,
                                                  trusted_hosts=_trusted_hosts(proxies))
                           if proxies else None)

    async def __call__(self, scope, receive, send):
        if self._forwarded is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        values = [v.decode("latin-1") for k, v in headers if k == _HEADER]
        if values:
            vouched = _vouched(values)
            scope[_KEPT] = headers
            scope["headers"] = [*((k, v) for k, v in headers if k != _HEADER),
                                *([(_HEADER, vouched.encode("latin-1"))] if vouched else [])]
        await self._forwarded(scope, receive, send)

    async def _restore(self, scope, receive, send):
        if _KEPT in scope:
            scope["headers"] = scope.pop(_KEPT)
        await self.app(scope, receive, send)


def forwarded_client(peer: str, forwarded_for: list[str],
                     proxies: tuple[Network, ...]) -> str:
    """The client `ForwardedClient` gives a request that came from `peer`
    with these X-Forwarded-For header values."""
    seen: list[str] = []

    async def app(scope, receive, send):
        seen.append(scope["client"][0])

    scope = {"type": "http", "client": (peer, 0), "headers": [
        (_HEADER, value.encode("latin-1")) for value in forwarded_for]}
    step = ForwardedClient(app, proxies)(scope, None, None)
    try:
        step.send(None)  # nothing in it waits: it ends at the first step
    except StopIteration:
        return seen[0]
    step.close()
    raise RuntimeError("the proxy headers middleware waited on something")
