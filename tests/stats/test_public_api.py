"""The public API of ``stats`` (its ``__init__``): every name resolves lazily to its submodule's object."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys

import stats


def test_all_lists_every_public_name_once() -> None:
    assert sorted(stats.__all__) == sorted(stats._PUBLIC) and len(set(stats.__all__)) == len(stats.__all__)
    assert set(stats.__all__) <= set(dir(stats))


def test_each_name_is_its_submodules_object() -> None:
    for name, module in stats._PUBLIC.items():
        assert getattr(stats, name) is getattr(importlib.import_module(module), name), name


def test_no_public_name_is_also_a_submodule() -> None:
    # `import stats.x` sets the attribute `x` of the package to the module, which would hide a function x
    for name in stats.__all__:
        assert importlib.util.find_spec(f"stats.{name}") is None, name


def test_importing_the_package_reads_no_submodule() -> None:
    code = "import sys, stats; print(sorted(m for m in sys.modules if m.startswith('stats.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        stats.no_such_function  # noqa: B018
    except AttributeError as exc:
        assert "no_such_function" in str(exc)
    else:
        raise AssertionError("no AttributeError")
