"""Imports on first use: a package's public names (module ``__getattr__``, PEP 562) and whole
modules (:class:`LazyModule`)."""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports", "LazyModule"]


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps each public name to the
    module that defines it; a name is imported when first looked up and kept in ``namespace``
    (the package's globals), so later lookups skip ``__getattr__``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


class LazyModule(types.ModuleType):
    """Stands for the module ``name``, imported when one of its attributes is first read (then
    copied here, so later reads cost what a module's do). For a module that a hot path rarely
    needs and that is slow to import: ``pc = LazyModule("pyarrow.compute")`` instead of
    ``import pyarrow.compute as pc`` (its ~500 function wrappers take 30-50 ms to build and to
    tear down at exit)."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        module = importlib.import_module(self.__name__)
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return getattr(module, attr)
