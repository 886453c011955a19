"""The valuation report: `diferida valuation` and `value_file`.

The total pension liability of a census at a measurement date (a fiscal
year's end), its sensitivity to the discount rate, the schedule of changes
from a prior measurement and the employers' shares (docs/valuation.md).

    >>> from diferida.liability import value_file
    >>> s = value_file("census.csv", "valuation.xlsx", discount="0.0381",
    ...                mortality="pub2010", as_of=date(2026, 6, 30))
    >>> s.liability["total"]
"""

from ..lazy import lazy_attributes

TYPE_CHECKING = False

if TYPE_CHECKING:
    from .runner import ValuationSummary, value_file

_LAZY = dict.fromkeys(("ValuationSummary", "value_file"), ".runner")
__all__ = ["ValuationSummary", "value_file"]

__getattr__ = lazy_attributes(__name__, _LAZY)
