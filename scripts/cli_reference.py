#!/usr/bin/env python
"""Write docs/cli-reference.md: every command's `--help`, as the command
prints it, generated from the CLI itself (so it cannot drift: a test
compares the file with a fresh rendering, and `make check` runs it).

    .venv/bin/python scripts/cli_reference.py          # rewrite the file
    .venv/bin/python scripts/cli_reference.py --check  # exit 1 when stale
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

TARGET = Path(__file__).resolve().parents[1] / "docs" / "cli-reference.md"
WIDTH = 88

HEAD = """# `diferida` command reference

Generated from the commands' own help by `scripts/cli_reference.py`; do not
edit by hand (`make check` fails when it is stale: run the script). The
help is in English; every command's output follows `--lang` (Spanish by
default). The guide to the commands is [cli.md](cli.md).
"""


def _walk(cmd: click.Command, path: list[str], parent: click.Context | None):
    settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(cmd, info_name=path[-1], parent=parent, **settings)
    yield path, cmd.get_help(ctx)
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, [*path, name], ctx)


def render() -> str:
    from diferida.cli import main

    parts = [HEAD]
    for path, text in _walk(main, ["diferida"], None):
        parts.append(f"\n## `{' '.join(path)}`\n\n```text\n{text.rstrip()}\n```\n")
    return "".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
