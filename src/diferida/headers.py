"""The HTTP headers every HTML page of diferida is sent with: the
calculator's and the workbench's pages (`diferida.web`) and the printed case
of the API (`diferida.service.api`). Here, below both, so that each reads
the one definition.

No inline script or style and nothing from another origin: the pages work
offline, and injected markup cannot run."""

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # The pages carry a person's data: keep them out of shared caches.
    "Cache-Control": "no-store",
}
