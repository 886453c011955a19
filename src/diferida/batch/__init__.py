"""Whole populations from files: `diferida batch` and `evaluate_file`.

    >>> from diferida.batch import evaluate_file
    >>> summary = evaluate_file("members.csv", "determinations.parquet", "rejects.csv",
    ...                         as_of=date(2026, 11, 29))
    >>> summary.rows_read, summary.by_status, summary.rows_rejected
"""

from .errors import FileProblem
from .io import load_table, read_table, row_numbers
from .runner import AccountingError, Summary, evaluate_file

__all__ = [
    "AccountingError",
    "FileProblem",
    "Summary",
    "evaluate_file",
    "load_table",
    "read_table",
    "row_numbers",
]
