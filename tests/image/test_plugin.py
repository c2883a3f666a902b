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


def test_one_hook_registers_every_public_stage_with_its_class_kind():
    assert plugin.__all__ == ["curator_migrate_rules", "curator_register"]
    seen: dict[str, str | None] = {}
    plugin.curator_register(lambda obj, name=None, kind=None, **kw: seen.__setitem__(
        name or obj.__name__, kind or getattr(obj, "kind", None)))
    assert {n: k for n, k in seen.items() if k != "stage"} == {
        "ImageReaderStage": "reader", "WebDatasetReaderStage": "reader",
        "WebDatasetShardPartitionStage": "reader", "ImageWriterStage": "writer",
        "ImageAestheticFilterStage": "filter", "ImageNSFWFilterStage": "filter",
        "ImageEmbeddingStage": "embedder", "ImageDuplicateRemovalStage": "deduplicator",
        "ImageDuplicatesRemovalStage": "deduplicator",
        "ImageSemanticDeduplicationWorkflow": "deduplicator", "ImageBatch": "task"}


def test_registered_through_entry_point():
    from curator.plugins.manager import get_registry

    registry = get_registry()
    for name in ("ImageReaderStage", "ImageEmbeddingStage", "ImageAestheticFilterStage",
                 "ImageNSFWFilterStage", "ImageWriterStage", "ImageSemanticDeduplicationWorkflow"):
        assert name in registry
        assert registry.get(name).obj is getattr(curator_image, name)


def test_all_exports_exist():
    for name in curator_image.__all__:
        assert getattr(curator_image, name) is not None
