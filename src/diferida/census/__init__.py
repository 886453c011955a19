"""`diferida census`: the shape of a member file before it is projected
(distributions, outliers named by member, the backlog of eligible members
who have not claimed, and what changed since a prior file)."""

from .runner import CensusSummary, census_file

__all__ = ["CensusSummary", "census_file"]
