"""diferida: deferred pensions under Article 19 of the regulation of the
Puerto Rico Government Employees Retirement System.

    >>> import diferida
    >>> d = diferida.evaluate({"birth_date": "1970-05-10", ...}, as_of=date(2026, 11, 29))
    >>> d.status, d.eligibility_date, d.annual_amount
"""

from .core import (
    FrameResult,
    InputError,
    Participant,
    Problem,
    evaluate,
    evaluate_frame,
)
from .determination import Determination, Finding, Formula
from .rules import Rules, RulesError, builtin_names, load_rules

__all__ = [
    "Determination",
    "Finding",
    "Formula",
    "FrameResult",
    "InputError",
    "Participant",
    "Problem",
    "Rules",
    "RulesError",
    "builtin_names",
    "evaluate",
    "evaluate_file",
    "evaluate_frame",
    "load_rules",
]


def __getattr__(name: str):
    # the file layer is imported only when used, so `import diferida` stays light
    if name == "evaluate_file":
        from .batch import evaluate_file

        return evaluate_file
    raise AttributeError(f"module 'diferida' has no attribute {name!r}")
__version__ = "0.1.0"
