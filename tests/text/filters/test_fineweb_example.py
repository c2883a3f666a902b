"""The FineWeb example's YAML spec builds the same chain as its Python pipeline."""

from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
EXAMPLE = os.path.join(ROOT, "examples", "fineweb")


def test_yaml_spec_builds_the_python_chain() -> None:
    spec_mod = pytest.importorskip("curator.spec")
    pytest.importorskip("curator_web")
    spec = spec_mod.load_spec(os.path.join(EXAMPLE, "fineweb.yaml"))
    yaml_names = [s.name for s in spec_mod.pipeline_from_spec(spec).build()]
    mod_spec = importlib.util.spec_from_file_location("fineweb_example",
                                                      os.path.join(EXAMPLE, "fineweb.py"))
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    py_names = [s.name for s in mod.build_pipeline("/nonexistent").build()]
    assert yaml_names == py_names
    assert ["URLFilter", "GopherRepetitionFilter", "GopherQualityFilter", "C4QualityFilter",
            "FineWebQualityFilter"] == [n for n in py_names if n.endswith("Filter")]
