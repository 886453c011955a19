"""Two rule sets (readings or reforms of the article) over the same members."""

from .runner import CompareOptionError, CompareSummary, Projecting, compare_file, table_paths

__all__ = ["CompareOptionError", "CompareSummary", "Projecting", "compare_file", "table_paths"]
