"""An import shim that lets NeMo Curator's own unit tests import Curator.

It is test tooling, kept outside the installed packages and off the test suite's ``sys.path``:
``compat/run_nemo_tests.sh`` puts ``compat/nemo_shim`` on ``PYTHONPATH`` for one out-of-tree run.
Each ``nemo_curator.X`` module is built on first import from the Curator modules that the
installed packages declare for it (``MigrationRules.shim`` of their ``curator_migrate_rules``
hook; their names merged, later modules winning) plus the renames declared for it; a package with
no entry is empty.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from curator.migrate import rules

_RULES = rules()
MODULES: dict[str, tuple[str, ...]] = _RULES.shim
"""nemo_curator module -> the Curator modules whose names it exposes (from the plugins)."""


def _derived(module: str) -> dict[str, object]:
    """NeMo names that Curator has under another shape (a pattern string, another signature),
    built here when Curator has no name of its own for them."""
    if module == "nemo_curator.stages.text.utils.constants":
        import re

        from curator_text.filters._vec import NEMO_URL_REGEX

        return {"regex_url": re.compile(NEMO_URL_REGEX)}
    return {}


def _renames(module: str) -> dict[str, tuple[str, str]]:
    prefix = module + "."
    return {k[len(prefix):]: v for k, v in _RULES.renames.items()
            if k.startswith(prefix) and "." not in k[len(prefix):]}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        # only the mapped modules and the packages above them exist
        if any(m == fullname or m.startswith(fullname + ".") for m in MODULES):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        sources = MODULES.get(spec.name, ())
        if len(sources) == 1 and not _derived(spec.name) and not _renames(spec.name):
            # one Curator module stands for it: the module itself, so that a test's
            # patch("nemo_curator.x.Name") reaches the code that looks Name up
            return importlib.import_module(sources[0])
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if not module.__name__.startswith("nemo_curator"):
            return
        module.__path__ = []
        for source in MODULES.get(module.__name__, ()):
            src = importlib.import_module(source)
            module.__dict__.update({k: v for k, v in vars(src).items()
                                    if not (k.startswith("__") and k.endswith("__"))})
        for name, value in _derived(module.__name__).items():
            module.__dict__.setdefault(name, value)
        for nemo, (ours_module, ours) in _renames(module.__name__).items():
            value = getattr(importlib.import_module(ours_module), ours, None)
            if value is not None:
                setattr(module, nemo, value)


sys.meta_path.insert(0, _Finder())
__path__ = []
