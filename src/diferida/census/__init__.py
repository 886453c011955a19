"""`diferida census`: the shape of a member file before it is projected
(distributions, outliers named by member, the backlog of eligible members
who have not claimed, and what changed since a prior file).

    >>> from diferida.census import census_file
    >>> s = census_file("members.csv", "census.xlsx", "census.html",
    ...                 prior="last-year.csv", as_of=date(2026, 6, 30))
"""

from ..lazy import lazy_attributes

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from .runner import CensusSummary, census_file

# Imported when first used, so that `diferida census --help` does not load Polars.
_LAZY = dict.fromkeys(("CensusSummary", "census_file"), ".runner")

__all__ = ["CensusSummary", "census_file"]


__getattr__ = lazy_attributes(__name__, _LAZY)
