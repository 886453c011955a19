"""Answers of the calculator kept for a short while, so that the page can
post, redirect and get (Back and reload keep the answer) without a person's
details in any URL.

A posted calculation is stored under a random token (128 bits) and the
browser is sent to `/resultado/<token>`; that page evaluates the stored
values again. Only what was typed is kept, in this process's memory, for
`TTL_SECONDS`, at most `MAX_ITEMS` at once (the oldest go first); nothing is
written to disk or to a log. With several worker processes a token is known
only to the worker that made it: a reload that reaches another one asks the
person to calculate again (docs/web.md).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

TTL_SECONDS = 60 * 60
MAX_ITEMS = 10_000


@dataclass(frozen=True)
class Draft:
    values: dict[str, str]
    lang: str
    created: float


class Drafts:
    def __init__(self, ttl: float = TTL_SECONDS, max_items: int = MAX_ITEMS,
                 clock=time.monotonic):
        self.ttl, self.max_items, self.clock = ttl, max_items, clock
        self._items: OrderedDict[str, Draft] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, values: dict[str, str], lang: str) -> str:
        token = secrets.token_urlsafe(16)
        now = self.clock()
        with self._lock:
            self._expire(now)
            self._items[token] = Draft(dict(values), lang, now)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)
        return token

    def get(self, token: str) -> Draft | None:
        now = self.clock()
        with self._lock:
            self._expire(now)
            return self._items.get(token)

    def _expire(self, now: float) -> None:
        while self._items:
            token, draft = next(iter(self._items.items()))
            if now - draft.created < self.ttl:
                break
            del self._items[token]


DRAFTS = Drafts()
