"""An import shim that lets NeMo Curator's own unit tests import Curator.

It is test tooling, kept outside the installed packages and off the test suite's ``sys.path``:
``compat/run_nemo_tests.sh`` puts ``compat/nemo_shim`` on ``PYTHONPATH`` for one out-of-tree run.
Each ``nemo_curator.X`` module is built on first import from the Curator modules listed in
``MODULES`` (their names merged, later modules winning); a package with no entry is empty.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

# nemo_curator module -> the Curator modules whose names it exposes.
MODULES: dict[str, tuple[str, ...]] = {
    "nemo_curator.tasks": ("curator.tasks", "curator_text.tasks"),
    "nemo_curator.tasks.tasks": ("curator.tasks",),
    "nemo_curator.tasks.document": ("curator_text.tasks",),
    "nemo_curator.tasks.file_group": ("curator.tasks",),
    "nemo_curator.stages.base": ("curator.stages.base",),
    "nemo_curator.stages.resources": ("curator.resources",),
    "nemo_curator.stages.function_decorators": ("curator.stages.function",),
    "nemo_curator.pipeline": ("curator.pipeline",),
    "nemo_curator.pipeline.pipeline": ("curator.pipeline",),
    "nemo_curator.backends.xenna": ("curator.executors.xenna",),
    "nemo_curator.utils.performance_utils": ("curator.tasks",),
    "nemo_curator.stages.text.filters": ("curator_text.filters",),
    "nemo_curator.stages.text.filters.doc_filter": ("curator_text.filters.base",),
    "nemo_curator.stages.text.filters.heuristic": ("curator_text.filters",),
    "nemo_curator.stages.text.filters.heuristic.code": ("curator_text.filters",),
    "nemo_curator.stages.text.filters.heuristic.repetition": ("curator_text.filters",),
    "nemo_curator.stages.text.filters.histogram": ("curator_text.filters.histogram",),
    "nemo_curator.stages.text.filters.token": ("curator_text.filters.token",),
    "nemo_curator.stages.text.filters.fasttext": ("curator_text.filters.fasttext",),
    "nemo_curator.stages.text.utils.constants": ("curator_text.filters.heuristic",
                                                 "curator_text.modifiers.text"),
    "nemo_curator.stages.text.modifiers": ("curator_text.modifiers",),
    "nemo_curator.stages.text.modifiers.modifier": ("curator_text.modifiers.base",),
    "nemo_curator.stages.text.modifiers.string": ("curator_text.modifiers",),
    "nemo_curator.stages.text.modifiers.unicode": ("curator_text.modifiers",),
    "nemo_curator.stages.text.modules": ("curator_text.stages",),
    "nemo_curator.stages.text.modules.add_id": ("curator_text.stages.add_id",),
}

# NeMo name -> Curator name, where only the spelling differs (module, nemo name, curator name).
ALIASES: dict[str, dict[str, str]] = {
    "nemo_curator.utils.performance_utils": {"StagePerfStats": "StagePerf"},
}


def _derived(module: str) -> dict[str, object]:
    """NeMo names that Curator has under another shape (a pattern string, another signature),
    built here when Curator has no name of its own for them."""
    if module == "nemo_curator.stages.text.utils.constants":
        import re

        from curator_text.filters._vec import NEMO_URL_REGEX

        return {"regex_url": re.compile(NEMO_URL_REGEX)}
    return {}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        # only the mapped modules and the packages above them exist
        if any(m == fullname or m.startswith(fullname + ".") for m in MODULES):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []
        for source in MODULES.get(module.__name__, ()):
            src = importlib.import_module(source)
            module.__dict__.update({k: v for k, v in vars(src).items()
                                    if not (k.startswith("__") and k.endswith("__"))})
        for name, value in _derived(module.__name__).items():
            module.__dict__.setdefault(name, value)
        for nemo, ours in ALIASES.get(module.__name__, {}).items():
            if hasattr(module, ours):
                setattr(module, nemo, getattr(module, ours))


sys.meta_path.insert(0, _Finder())
__path__ = []
