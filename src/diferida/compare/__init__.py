"""Two rule sets (readings or reforms of the article) over the same members."""

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .runner import CompareOptionError, CompareSummary, Projecting, compare_file, table_paths

__all__ = ["CompareOptionError", "CompareSummary", "Projecting", "compare_file", "table_paths"]


def __getattr__(name: str):  # imported when first used: `diferida compare --help` needs no Polars
    if name in __all__:
        from . import runner

        value = getattr(runner, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
