"""diferida: deferred pensions under Article 19 of the regulation of the
Puerto Rico Government Employees Retirement System.

    >>> import diferida
    >>> d = diferida.evaluate({"birth_date": "1970-05-10", ...}, as_of=date(2026, 11, 29))
    >>> d.status, d.eligibility_date, d.annual_amount
"""

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (slow to load)

if TYPE_CHECKING:
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

# Every name is imported when first used, so that `import diferida` is quick:
# the `diferida` command can answer Ctrl-C while it is still loading.
_LAZY = {
    **dict.fromkeys(("FrameResult", "InputError", "Participant", "Problem", "evaluate",
                     "evaluate_frame"), ".core"),
    **dict.fromkeys(("Determination", "Finding", "Formula"), ".determination"),
    **dict.fromkeys(("Rules", "RulesError", "builtin_names", "load_rules"), ".rules"),
    "evaluate_file": ".batch",
}

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
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    try:  # a submodule not imported yet (diferida.validation, ...)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module 'diferida' has no attribute {name!r}")


__version__ = "0.1.0"
