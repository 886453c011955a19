"""Whole populations from files: `diferida batch` and `evaluate_file`.

    >>> from diferida.batch import evaluate_file
    >>> summary = evaluate_file("members.csv", "determinations.parquet", "rejects.csv",
    ...                         as_of=date(2026, 11, 29))
    >>> summary.rows_read, summary.by_status, summary.rows_rejected
"""

from ..lazy import lazy_attributes

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .errors import FileProblem
    from .io import load_table, read_table, row_numbers
    from .runner import AccountingError, Summary, evaluate_file

# Imported when first used, so that `diferida batch --help` (which imports
# diferida.batch.cli, and so this package) does not load Polars.
_LAZY = {
    "FileProblem": ".errors",
    **dict.fromkeys(("load_table", "read_table", "row_numbers"), ".io"),
    **dict.fromkeys(("AccountingError", "Summary", "evaluate_file"), ".runner"),
}

__all__ = [
    "AccountingError",
    "FileProblem",
    "Summary",
    "evaluate_file",
    "load_table",
    "read_table",
    "row_numbers",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
