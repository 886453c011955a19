"""What deferred pensions will cost, fiscal year by fiscal year, and what
they are worth today: `diferida project` and `project_file`.

    >>> from diferida.projection import project_file
    >>> s = project_file("members.parquet", "flows.xlsx", discount="0.04,0.0625",
    ...                  mortality="pub2010", as_of=date(2026, 11, 29))
    >>> s.totals
"""

from .engine import Assumptions, Members, Projection, project
from .mortality import MAX_AGE, MortalityTable, TableError, load_csv_table, resolve
from .options import OptionError
from .runner import ProjectionSummary, project_file

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
