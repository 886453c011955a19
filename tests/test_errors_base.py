"""Every error the project raises on purpose derives from one base,
`diferida.errors.DiferidaError` (and keeps the built-in class it always had,
so callers that catch ValueError or KeyError still do). Private control-flow
exceptions (a leading underscore) are not errors for callers and are left
out."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import diferida
from diferida.errors import DiferidaError


def _modules():
    for info in pkgutil.walk_packages(diferida.__path__, "diferida."):
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def test_every_public_exception_class_of_the_project_is_a_diferida_error():
    found, outside = [], []
    for module in _modules():
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) \
                    and obj.__module__ == module.__name__ and not name.startswith("_"):
                found.append(f"{module.__name__}.{name}")
                if not issubclass(obj, DiferidaError):
                    outside.append(f"{module.__name__}.{name}")
    assert len(found) > 15
    assert not outside, outside


def test_the_accounting_error_is_not_an_assertion():
    from diferida.batch.population import AccountingError

    assert not issubclass(AccountingError, AssertionError)
    assert issubclass(AccountingError, RuntimeError)
