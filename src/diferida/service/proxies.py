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

uvicorn's own handling of the header (which trusts 127.0.0.1 by default) is
turned off by `diferida serve` (service/serving.py); this middleware does
the work instead, with the service's setting.
"""

from __future__ import annotations

import ipaddress

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


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


def _trusted(address: Address, proxies: tuple[Network, ...]) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address.version == net.version and address in net for net in proxies)


def forwarded_client(peer: str, forwarded_for: list[str],
                     proxies: tuple[Network, ...]) -> str:
    """The client of a request that came from `peer` with these
    X-Forwarded-For header values."""
    peer_address = _address(peer)
    if not proxies or peer_address is None or not _trusted(peer_address, proxies):
        return peer
    client = peer
    hops = [h for value in forwarded_for for h in value.split(",")]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # not an address: the last hop vouched for is as far as one can see
            break
        client = str(address)
        if not _trusted(address, proxies):
            break
    return client


class ForwardedClient:
    """Pure ASGI, outermost: sets the request's client from X-Forwarded-For
    when, and only when, the connection comes from a trusted proxy."""

    def __init__(self, app, proxies: tuple[Network, ...]):
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope, receive, send):
        if self.proxies and scope["type"] in ("http", "websocket"):
            peer = scope.get("client")
            values = [v.decode("latin-1") for k, v in scope.get("headers") or ()
                      if k == b"x-forwarded-for"]
            if peer and values:
                client = forwarded_client(peer[0], values, self.proxies)
                if client != peer[0]:
                    # in place, as uvicorn does: its access line shows the client too
                    scope["client"] = (client, 0)
        await self.app(scope, receive, send)
