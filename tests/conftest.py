"""Shared fixtures: the determination date used across tests and the
SPEC §8 participants."""

from __future__ import annotations

from datetime import date

import pytest

AS_OF = date(2026, 11, 29)


@pytest.fixture
def as_of() -> date:
    return AS_OF


# SPEC §8 example 1, as text in the file formats: the participant most tests
# start from, changing only the fields the test is about.
EXAMPLE_1 = {
    "birth_date": "1970-05-10",
    "entry_date": "1988-07-01",
    "separation_date": "2010-06-30",
    "creditable_service_years": "22",
    "average_compensation": "30000.00",
    "group": "general",
    "refund_requested": "false",
}


def participant(**changes: object) -> dict[str, object]:
    """Example 1 with some fields changed; a value of None removes the field."""
    p: dict[str, object] = {**EXAMPLE_1, **changes}
    return {k: v for k, v in p.items() if v is not None}


def cli_command() -> list[str]:
    """The installed `diferida` command, or the module when not installed."""
    import shutil
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "diferida"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("diferida")
    return [found] if found else [sys.executable, "-m", "diferida.cli"]
