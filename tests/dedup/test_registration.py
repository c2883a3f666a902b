"""The deduplication workflows, stages and the text embedder are registered by the plugins."""

from __future__ import annotations

import subprocess
import sys

from curator.plugins.manager import build_registry


def test_dedup_and_embedder_are_registered() -> None:
    reg = build_registry()
    for name, kind in (("ExactDeduplicationWorkflow", "deduplicator"),
                       ("SemanticDeduplicationWorkflow", "deduplicator"),
                       ("FuzzyDeduplicationWorkflow", "deduplicator"),
                       ("MinHashLSHStage", "deduplicator"),
                       ("EmbeddingCreatorStage", "embedder")):
        assert reg.get(name).kind == kind
    assert not [b for b in reg.broken if "dedup" in (b.error or "")]


def test_plugin_modules_import_no_heavy_library() -> None:
    code = ("import sys, curator.builtin_plugin, curator_text.plugin; "
            "from curator.plugins.manager import build_registry; build_registry(); "
            "bad = [m for m in ('torch', 'transformers', 'ray') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
