"""The security headers of the API's documentation pages, /docs (Swagger UI,
where tokens are pasted), its OAuth2 redirect page and /redoc, served from
files shipped in `fastapi-offline`: the same Content-Security-Policy,
frame-ancestors, nosniff and Referrer-Policy as the calculator's pages, as
far as those pages let.

What they need, and nothing else:

* their scripts, from this site only (`/static-offline-docs/…`), and the
  small script written into each page (Swagger UI's start, the OAuth2
  redirect), allowed by its SHA-256 hash, computed from the page as sent:
  no other inline script runs, injected or not;
* styles from this site and inline: ReDoc writes its styles into the page
  as it renders (styled-components), Swagger UI sets style attributes;
* images from this site and `data:` (Swagger UI's icons); `blob:` workers
  (ReDoc's search); requests to this site only (the OpenAPI document, "Try
  it out").
"""

from __future__ import annotations

import base64
import hashlib
import re

# A script element without a src attribute, and its text.
_INLINE_SCRIPT = re.compile(
    rb"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)

POLICY = ("default-src 'self'; script-src 'self'{hashes}; "
          "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
          "connect-src 'self'; worker-src 'self' blob:; form-action 'self'; "
          "frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
OTHER_HEADERS = [(b"x-content-type-options", b"nosniff"),
                 (b"referrer-policy", b"no-referrer"),
                 (b"x-frame-options", b"DENY")]


def policy_for(html: bytes) -> str:
    """The Content-Security-Policy of one documentation page: its own inline
    scripts allowed by hash, nothing else inline."""
    hashes = sorted({"'sha256-" + base64.b64encode(hashlib.sha256(m).digest()).decode() + "'"
                     for m in _INLINE_SCRIPT.findall(html)})
    return POLICY.format(hashes="".join(" " + h for h in hashes))


class DocsHeaders:
    """Pure ASGI: adds the headers to the answers of the documentation pages
    (small HTML documents, read whole to hash their inline scripts) and
    nosniff to the files they load."""

    def __init__(self, app, pages: tuple[str, ...], static_prefix: str):
        self.app = app
        self.pages = frozenset(p for p in pages if p)
        self.static_prefix = static_prefix.rstrip("/") + "/"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        if path.startswith(self.static_prefix):
            return await self.app(scope, receive, self._static_send(send))
        if path not in self.pages:
            return await self.app(scope, receive, send)

        start: dict | None = None
        body: list[bytes] = []

        async def send_page(message):
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                return await send(message)
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            html = b"".join(body)
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() not in (b"content-security-policy",
                                            *(name for name, _ in OTHER_HEADERS))]
            headers += [(b"content-security-policy", policy_for(html).encode()),
                        *OTHER_HEADERS]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, send_page)

    @staticmethod
    def _static_send(send):
        async def send_static(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"x-content-type-options"]
                message = {**message, "headers": [*headers,
                                                  (b"x-content-type-options", b"nosniff")]}
            await send(message)
        return send_static
