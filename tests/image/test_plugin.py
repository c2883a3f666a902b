import json
import subprocess
import sys

import curator_image
from curator_image import plugin

HEAVY = ("torch", "transformers", "webdataset", "PIL", "pyarrow.parquet", "safetensors")


def test_importing_plugin_and_package_loads_no_heavy_library():
    code = ("import sys, json, curator_image.plugin, curator_image; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_hooks_register_every_public_stage():
    seen: dict[str, list[str]] = {}
    for hook in plugin.__all__:
        names = seen.setdefault(hook, [])
        getattr(plugin, hook)(lambda obj, name=None, _n=names, **kw: _n.append(
            name or obj.__name__))
    assert "ImageReaderStage" in seen["curator_register_readers"]
    assert seen["curator_register_writers"] == ["ImageWriterStage"]
    assert set(seen["curator_register_filters"]) == {"ImageAestheticFilterStage",
                                                     "ImageNSFWFilterStage"}
    assert seen["curator_register_embedders"] == ["ImageEmbeddingStage"]
    assert "ImageSemanticDeduplicationWorkflow" in seen["curator_register_deduplicators"]


def test_registered_through_entry_point():
    from curator.plugins.manager import get_registry  # noqa: PLC0415

    registry = get_registry()
    for name in ("ImageReaderStage", "ImageEmbeddingStage", "ImageAestheticFilterStage",
                 "ImageNSFWFilterStage", "ImageWriterStage", "ImageSemanticDeduplicationWorkflow"):
        assert name in registry
        assert registry.get(name).obj is getattr(curator_image, name)


def test_all_exports_exist():
    for name in curator_image.__all__:
        assert getattr(curator_image, name) is not None
