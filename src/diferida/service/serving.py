"""The uvicorn configuration `diferida serve` runs with: in a module of its
own, so that the other commands do not load uvicorn, and at module level, so
that uvicorn can hand it to its worker processes."""

from __future__ import annotations

import socket

import uvicorn


class NoDelayConfig(uvicorn.Config):
    """uvicorn's configuration without its proxy headers (see __init__), and
    with TCP_NODELAY. With several workers uvicorn opens the listening socket
    itself, without naming TCP, so asyncio leaves Nagle's algorithm on for
    every connection: a response written in two parts then waits for the
    client's delayed ACK (about 40 ms). TCP_NODELAY set on the listening
    socket is inherited by the connections it accepts."""

    def __init__(self, *args, **kwargs) -> None:
        # Who the client is, is the app's to say (DIFERIDA_TRUSTED_PROXIES,
        # service/proxies.py): uvicorn's own X-Forwarded-For handling trusts
        # 127.0.0.1 by default, so any local process could name any address.
        kwargs.setdefault("proxy_headers", False)
        super().__init__(*args, **kwargs)

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
