"""What deferred pensions will cost, fiscal year by fiscal year, and what
they are worth today: `diferida project` and `project_file`.

    >>> from diferida.projection import project_file
    >>> s = project_file("members.parquet", "flows.xlsx", discount="0.04,0.0625",
    ...                  mortality="pub2010", as_of=date(2026, 11, 29))
    >>> s.totals
"""

from ..lazy import lazy_attributes

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .engine import Assumptions, Members, Projection, project
    from .mortality import MAX_AGE, MortalityTable, TableError, load_csv_table, resolve
    from .options import OptionError
    from .runner import ProjectionSummary, project_file

# Imported when first used, so that `diferida project --help` (which imports
# diferida.projection.cli, and so this package) does not load NumPy or Polars.
_LAZY = {
    **dict.fromkeys(("Assumptions", "Members", "Projection", "project"), ".engine"),
    **dict.fromkeys(("MAX_AGE", "MortalityTable", "TableError", "load_csv_table", "resolve"),
                    ".mortality"),
    "OptionError": ".options",
    **dict.fromkeys(("ProjectionSummary", "project_file"), ".runner"),
}

__all__ = [
    "MAX_AGE",
    "Assumptions",
    "Members",
    "MortalityTable",
    "OptionError",
    "Projection",
    "ProjectionSummary",
    "TableError",
    "load_csv_table",
    "project",
    "project_file",
    "resolve",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
