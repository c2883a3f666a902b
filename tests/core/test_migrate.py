"""``curator migrate``: NeMo Curator imports of every modality rewritten to Curator's modules."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest
from curator.cli import main as cli_main
from curator.migrate import current_exports, exports, migrate_source, rules
from curator.plugins.hookspecs import hookimpl
from curator.plugins.manager import build_registry, register_plugin, use_registry
from curator.plugins.migration import MigrationRules
from curator.plugins.registry import PluginInfo


def _run(code: str) -> dict:
    """Executes migrated code and returns its namespace (the imports must really work)."""
    namespace: dict = {}
    exec(compile(code, "<migrated>", "exec"), namespace)
    return namespace


def test_every_mapped_name_imports_and_the_table_is_the_packages() -> None:
    table = exports()
    for module, names in table.items():
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name), f"{module}.{name} is in the table but does not import"
    assert {m: sorted(n) for m, n in table.items()} == current_exports()  # read from __all__


def test_every_plugin_declares_its_own_rows_and_every_declared_name_imports() -> None:
    registry = build_registry()
    declared = {info.distribution: r for info, r in registry.migrations}
    for dist in ("curator-core", "curator-text", "curator-image", "curator-audio",
                 "curator-video", "curator-web"):
        assert dist in declared, f"{dist} declares no migrate rules"
    for dist, r in declared.items():
        for module in r.curator_modules():
            importlib.import_module(module)  # a module a package names must exist
        for nemo, (module, name) in r.renames.items():
            assert hasattr(importlib.import_module(module), name), (dist, nemo)
        for prefix, _ in r.modules:
            assert prefix.startswith("nemo_curator"), (dist, prefix)
        for key, why in r.not_offered.items():
            assert key.startswith("nemo_curator") and why.strip(), (dist, key)


class _RulesPlugin:
    """A third party's plugin declaring NeMo mappings through the hook alone."""

    def __init__(self, rules: MigrationRules) -> None:
        self.rules = rules

    @hookimpl
    def curator_migrate_rules(self) -> MigrationRules:
        return self.rules


def test_a_plugin_adds_mappings_and_reasons_without_editing_core() -> None:
    registry = build_registry()
    plugin = _RulesPlugin(MigrationRules(
        modules=(("nemo_curator.stages.widgets", ("json",)),),
        renames={"nemo_curator.stages.widgets.Decoder": ("json", "JSONDecoder")},
        not_offered={"nemo_curator.stages.widgets.gpu": "needs a GPU widget"}))
    register_plugin(registry, plugin, PluginInfo("widgets", "curator-widgets", "1.0"))
    assert not registry.broken
    src = ("from nemo_curator.stages.widgets import dumps, Decoder\n"
           "from nemo_curator.stages.widgets.gpu import Fast\n")
    with use_registry(registry):
        assert rules().candidates("nemo_curator.stages.widgets.x") == ("json",)
        res = migrate_source(src, "w.py")
    assert res.text.splitlines()[0] == "from json import dumps, JSONDecoder as Decoder"
    assert [str(u) for u in res.unmapped] == [
        "w.py:2: nemo_curator.stages.widgets.gpu.Fast (needs a GPU widget)"]
    with use_registry(registry):  # a not-offered module is reported, never imported as another
        res = migrate_source("from nemo_curator.stages.widgets import gpu\n"
                             "import nemo_curator.stages.widgets.gpu as g\n", "w.py")
    assert "json" not in res.text
    assert [u.reason for u in res.unmapped] == ["needs a GPU widget"] * 2


def test_a_plugin_returning_something_else_is_refused_with_what_to_return() -> None:
    class Bad:
        @hookimpl
        def curator_migrate_rules(self):
            return {"modules": ()}

    registry = build_registry()
    register_plugin(registry, Bad(), PluginInfo("bad", "curator-bad", "1.0"))
    assert registry.broken and "return a curator.plugins.migration.MigrationRules" in \
        registry.broken[-1].error


def test_indented_and_multiline_imports() -> None:
    src = textwrap.dedent('''\
        import os

        def build():
            from nemo_curator.pipeline import Pipeline
            try:
                from nemo_curator.stages.text.filters import (
                    ScoreFilter,
                    WordCountFilter as WCF,  # a comment inside
                )
            except ImportError:
                raise
            from nemo_curator.stages.file_partitioning import FilePartitioningStage
            from nemo_curator.tasks import DocumentBatch, FileGroupTask
            return Pipeline, ScoreFilter, WCF, FilePartitioningStage, DocumentBatch, FileGroupTask
        ''')
    res = migrate_source(src)
    assert "nemo_curator" not in res.text and not res.unmapped
    assert "    from curator import Pipeline\n" in res.text
    assert "        from curator_text import ScoreFilter, WordCountFilter as WCF\n" in res.text
    assert "from curator.stages import FilePartitioningStage" in res.text
    import curator
    import curator_text
    from curator.stages import FilePartitioningStage
    assert _run(res.text)["build"]() == (
        curator.Pipeline, curator_text.ScoreFilter, curator_text.WordCountFilter,
        FilePartitioningStage, curator_text.DocumentBatch, curator.FileGroupTask)


def test_import_module_forms() -> None:
    src = textwrap.dedent('''\
        import nemo_curator.stages.text.filters as F
        import nemo_curator.stages.text.modifiers
        import json, nemo_curator.pipeline

        flt = F.WordCountFilter(min_words=2)
        mod = nemo_curator.stages.text.modifiers.UnicodeReformatter()
        p = nemo_curator.pipeline.Pipeline(name="x")
        ''')
    res = migrate_source(src)
    assert "nemo_curator" not in res.text, res.text
    assert not res.unmapped
    ns = _run(res.text)
    import curator
    import curator_text
    assert isinstance(ns["flt"], curator_text.WordCountFilter)
    assert isinstance(ns["mod"], curator_text.UnicodeReformatter)
    assert isinstance(ns["p"], curator.Pipeline)
    assert "import json" in res.text


@pytest.mark.parametrize(("line", "module", "name"), [
    ("from nemo_curator.stages.image.filters.aesthetic_filter import ImageAestheticFilterStage",
     "curator_image", "ImageAestheticFilterStage"),
    ("from nemo_curator.tasks import ImageBatch", "curator_image", "ImageBatch"),
    ("from nemo_curator.stages.audio.io.convert import AudioToDocumentStage", "curator_audio",
     "AudioToDocumentStage"),
    ("from nemo_curator.tasks import AudioBatch", "curator_audio", "AudioBatch"),
    ("from nemo_curator.stages.audio.metrics.get_wer import GetPairwiseWerStage", "curator_audio",
     "GetPairwiseWerStage"),
    ("from nemo_curator.stages.video.clipping.clip_extraction_stages import "
     "FixedStrideExtractorStage", "curator_video", "FixedStrideExtractorStage"),
    ("from nemo_curator.tasks.video import VideoTask", "curator_video", "VideoTask"),
    ("from nemo_curator.stages.text.download import CommonCrawlDownloadExtractStage",
     "curator_web", "CommonCrawlDownloadExtractStage"),
    ("from nemo_curator.stages.text.download.base.url_generation import URLGenerator",
     "curator_web", "URLGenerator"),
    ("from nemo_curator.stages.deduplication.exact.workflow import ExactDeduplicationWorkflow",
     "curator.dedup", "ExactDeduplicationWorkflow"),
    ("from nemo_curator.stages.deduplication.fuzzy.workflow import FuzzyDeduplicationWorkflow",
     "curator_text.dedup", "FuzzyDeduplicationWorkflow"),
    ("from nemo_curator.utils.file_utils import get_all_file_paths_under", "curator.utils",
     "get_all_file_paths_under"),
    ("from nemo_curator.utils.hash_utils import get_deterministic_hash", "curator.utils",
     "get_deterministic_hash"),
])
def test_each_modality_goes_to_its_package(line: str, module: str | None, name: str) -> None:
    res = migrate_source(line + "\n", "x.py")
    if module is None:  # no counterpart: left as it was and reported
        assert res.text == line + "\n"
        assert [str(u) for u in res.unmapped] == [f"x.py:1: {line.split()[1]}.{name}"]
        return
    assert res.text == f"from {module} import {name}\n"
    assert not res.unmapped
    assert getattr(importlib.import_module(module), name)


def test_unmapped_names_are_reported_and_kept() -> None:
    src = textwrap.dedent('''\
        from nemo_curator.stages.text.filters import WordCountFilter, NoSuchFilter
        if True:
            from nemo_curator.utils.no_such_module import NoSuchHelper
        ''')
    res = migrate_source(src, "script.py")
    assert res.text.splitlines() == [
        "from curator_text import WordCountFilter",
        "from nemo_curator.stages.text.filters import NoSuchFilter",
        "if True:",
        "    from nemo_curator.utils.no_such_module import NoSuchHelper"]
    assert [str(u) for u in res.unmapped] == [
        "script.py:1: nemo_curator.stages.text.filters.NoSuchFilter",
        "script.py:3: nemo_curator.utils.no_such_module.NoSuchHelper"]


def test_cli_writes_in_place_dry_run_diffs_and_reports(tmp_path, capsys) -> None:
    script = tmp_path / "job.py"
    original = ("from nemo_curator.pipeline import Pipeline\n"
                "from nemo_curator.stages.text.filters import NoSuchFilter\n")
    script.write_text(original)
    assert cli_main(["migrate", "--dry-run", str(script)]) == 1
    out, err = capsys.readouterr()
    assert "-from nemo_curator.pipeline import Pipeline" in out
    assert "+from curator import Pipeline" in out
    assert f"{script}:2: nemo_curator.stages.text.filters.NoSuchFilter" in err
    assert script.read_text() == original
    assert cli_main(["migrate", str(tmp_path)]) == 1
    assert script.read_text().startswith("from curator import Pipeline\n")
    script.write_text("from nemo_curator.pipeline import Pipeline\n")
    proc = subprocess.run([sys.executable, "-m", "curator.migrate", str(script)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert script.read_text() == "from curator import Pipeline\n"


def test_names_curator_does_not_offer_are_reported_with_the_reason() -> None:
    src = "from nemo_curator.utils.decoder_utils import extract_video_metadata\n"
    res = migrate_source(src, "s.py")
    assert res.text == src  # kept, so the script fails loudly at that import
    assert [str(u) for u in res.unmapped] == [
        "s.py:1: nemo_curator.utils.decoder_utils.extract_video_metadata (NeMo's video decoding "
        "internals; curator_video decodes on its own)"]
