"""``curator migrate``: NeMo Curator imports of every modality rewritten to Curator's modules."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest
from curator._migrate_exports import EXPORTS
from curator.cli import main as cli_main
from curator.migrate import current_exports, exports, migrate_source


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
    live = current_exports()
    assert {m: sorted(n) for m, n in table.items()} == live  # installed: read from __all__
    for module, names in EXPORTS.items():  # the snapshot (for packages not installed) is not
        # stale: regenerate with python -m curator.migrate --print-exports > \
        # packages/core/src/curator/_migrate_exports.py
        assert names <= set(live[module]), sorted(names - set(live[module]))


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
    ("from nemo_curator.stages.audio.io.convert import AudioToDocumentStage", None,
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
    src = ("from nemo_curator.models.client.llm_client import GenerationConfig\n"
           "from nemo_curator.stages.synthetic.nemotron_cc.nemotron_cc import "
           "KnowledgeListPostProcessingStage\n"
           "from nemo_curator.utils import prompts\n")
    res = migrate_source(src, "s.py")
    assert res.text == src  # kept, so the script fails loudly at that import
    assert [str(u) for u in res.unmapped] == [
        "s.py:1: nemo_curator.models.client.llm_client.GenerationConfig (LLM clients are not "
        "offered: Curator calls no LLM endpoint)",
        "s.py:2: nemo_curator.stages.synthetic.nemotron_cc.nemotron_cc."
        "KnowledgeListPostProcessingStage (synthetic data generation (LLM stages) is not offered)",
        "s.py:3: nemo_curator.utils.prompts (LLM prompt templates are not offered (no LLM "
        "stages))"]
