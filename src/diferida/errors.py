"""The base of the project's own errors: `except DiferidaError` catches
every error this project raises on purpose (bad input, a file or an option
that cannot be used, a refusal of the service), and nothing else. Each
error also keeps the built-in class it always had (ValueError, KeyError...),
so code that catches those still does."""

from __future__ import annotations


class DiferidaError(Exception):
    """An error of this project, raised on purpose with a message for people."""
