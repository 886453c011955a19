"""Two rule sets (readings or reforms of the article) over the same members."""

from ..lazy import lazy_attributes

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .runner import CompareOptionError, CompareSummary, Projecting, compare_file, table_paths

__all__ = ["CompareOptionError", "CompareSummary", "Projecting", "compare_file", "table_paths"]


# imported when first used: `diferida compare --help` needs no Polars
__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, ".runner"))
