"""The public Python API, pinned: `diferida.__all__` is what a user may
import, each name resolves to the object its module defines, and each has
its documentation. Adding or removing a name is a decision, made here."""

from __future__ import annotations

import importlib
import inspect

import diferida

PUBLIC = {
    "Determination": "diferida.determination",
    "Finding": "diferida.determination",
    "Formula": "diferida.determination",
    "FrameResult": "diferida.core",
    "InputError": "diferida.core",
    "Participant": "diferida.core",
    "Problem": "diferida.core",
    "Rules": "diferida.rules",
    "RulesError": "diferida.rules",
    "builtin_names": "diferida.rules",
    "evaluate": "diferida.core",
    "evaluate_file": "diferida.batch",
    "evaluate_frame": "diferida.core",
    "load_rules": "diferida.rules",
}


def test_the_public_names_are_the_pinned_ones():
    assert sorted(diferida.__all__) == sorted(PUBLIC)


def test_each_public_name_is_its_modules_own_and_documented():
    for name, module in PUBLIC.items():
        obj = getattr(diferida, name)
        assert obj is getattr(importlib.import_module(module), name), name
        assert inspect.getdoc(obj), f"{name} has no docstring"


def test_a_name_that_is_not_public_is_an_attribute_error():
    try:
        diferida.not_a_name  # noqa: B018
    except AttributeError as exc:
        assert "not_a_name" in str(exc)
    else:
        raise AssertionError("diferida.not_a_name did not raise")
