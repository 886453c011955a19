"""Answers of the calculator kept for a short while, so that the page can
post, redirect and get (Back and reload keep the answer) without a person's
details in any URL.

A posted calculation is stored under a random token (128 bits) and the
browser is sent to `/resultado/<token>`; that page evaluates the stored
values again. Only what was typed is kept, in this process's memory, for
`TTL_SECONDS`, at most `MAX_ITEMS` answers and `MAX_BYTES` bytes at once
(the oldest go first); nothing is written to disk or to a log. An answer is
at most `MAX_VALUES` values of at most `MAX_VALUE_CHARS` characters each (the
form refuses a longer one with a message naming its field before anything
is kept: web/forms.py), so one answer is small whatever a client posts.
With several worker processes a token is known only to the worker that made
it: a reload that reaches another one asks the person to calculate again
(docs/web.md).
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..errors import DiferidaError

TTL_SECONDS = 60 * 60
MAX_ITEMS = 10_000
# What all the answers kept may take of the process's memory, as Python
# counts it (sys.getsizeof of the strings and the dict, plus the entry).
MAX_BYTES = 16 * 1024 * 1024
# One answer: the form's inputs (25 today, each date in its three boxes, and the
# scenario panel's date), each as long as a person types one.
MAX_VALUES = 32
MAX_VALUE_CHARS = 200
# The token, the entry of the ordered dict and the Draft itself.
ENTRY_BYTES = 400


@dataclass(frozen=True)
class Draft:
    values: dict[str, str]
    lang: str
    created: float
    size: int = 0


def size_of(values: dict[str, str]) -> int:
    """The bytes an answer takes in memory, as the store counts them."""
    return ENTRY_BYTES + sys.getsizeof(values) + sum(
        sys.getsizeof(k) + sys.getsizeof(v) for k, v in values.items())


class DraftTooLarge(DiferidaError, ValueError):
    """An answer beyond the bounds of one answer: never kept."""


class Drafts:
    def __init__(self, ttl: float = TTL_SECONDS, max_items: int = MAX_ITEMS,
                 clock=time.monotonic, max_bytes: int = MAX_BYTES):
        self.ttl, self.max_items, self.clock = ttl, max_items, clock
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, Draft] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """The bytes of the answers kept now (never more than `max_bytes`)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def put(self, values: dict[str, str], lang: str) -> str:
        values = dict(values)
        if len(values) > MAX_VALUES or any(
                not isinstance(v, str) or len(v) > MAX_VALUE_CHARS for v in values.values()):
            raise DraftTooLarge(f"an answer is at most {MAX_VALUES} values of at most "
                                f"{MAX_VALUE_CHARS} characters")
        size = size_of(values)
        if size > self.max_bytes:
            raise DraftTooLarge(f"an answer of {size} bytes is more than the store holds")
        token = secrets.token_urlsafe(16)
        now = self.clock()
        with self._lock:
            self._expire(now)
            self._items[token] = Draft(values, lang, now, size)
            self._bytes += size
            while len(self._items) > self.max_items or self._bytes > self.max_bytes:
                self._drop(next(iter(self._items)))
        return token

    def get(self, token: str) -> Draft | None:
        now = self.clock()
        with self._lock:
            self._expire(now)
            return self._items.get(token)

    def _drop(self, token: str) -> None:
        self._bytes -= self._items.pop(token).size

    def _expire(self, now: float) -> None:
        while self._items:
            token, draft = next(iter(self._items.items()))
            if now - draft.created < self.ttl:
                break
            self._drop(token)


DRAFTS = Drafts()
