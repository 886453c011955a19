"""Shared fixtures: the determination date used across tests and the
SPEC §8 participants."""

from __future__ import annotations

from datetime import date

import pytest

AS_OF = date(2026, 11, 29)


@pytest.fixture
def as_of() -> date:
    return AS_OF
