"""The speed layer: how the rules are run fast, never what they say.

Everything here changes how Polars is asked to compute the rules' columns,
not which columns or values come out:

* `plan.Stages` records the stages of validation and of the rules once per
  rules version and replays them on every table;
* `flatten.flatten` splits deep expressions into shallow sub-stages for a
  few rows, through Polars' JSON form of an expression
  (`Expr.meta.serialize` / `Expr.deserialize`: a format Polars calls
  unstable across versions);
* `plan.PreparedPlans` keeps a plan resolved once and replays it on one
  small table after another, reading the table through an IO source
  (`polars.io.plugins.register_io_source`, marked unstable);
* `unstable` holds every other unstable Polars API the package uses (the
  optimiser's flags for a few rows, Parquet read in streaming batches and
  written by a streaming sink), each with its stable way, and `UNSTABLE`,
  the names no module outside this package may use
  (tests/test_speed_fence.py).

`DIFERIDA_SPEED_LAYER=off` in the environment turns the unstable parts off:
stages are replayed as recorded (no flattening), every table is planned
as usual (no prepared plans), and `unstable`'s functions take their
stable ways. The answers are the same; `make test` runs
the core tests both ways. See docs/speed.md."""

from __future__ import annotations

import os


def enabled() -> bool:
    """Whether the unstable parts of the speed layer are used (read at each
    call, so a test can switch it)."""
    return os.environ.get("DIFERIDA_SPEED_LAYER", "on").strip().lower() not in (
        "off", "0", "false", "no")
