"""The plugin registers everything, stays cheap to import, and `curator analyze` works."""

from __future__ import annotations

import json
import subprocess
import sys

import curator_text
from curator.plugins import get_registry


def test_plugin_import_does_not_load_heavy_libraries() -> None:
    code = ("import sys, curator_text, curator_text.plugin; "
            "print([m for m in ('torch','fasttext','ftfy','transformers','ray') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_everything_is_registered() -> None:
    reg = get_registry()
    assert not [b for b in reg.broken if b.name == "text"] if hasattr(reg, "broken") else True
    for name in ("JsonlReader", "ParquetReader", "JsonlWriter", "ParquetWriter", "ScoreFilter",
                 "WordCountFilter", "RepeatingTopNGramsFilter", "FastTextQualityFilter",
                 "Modify", "UnicodeReformatter", "AddId", "ScoreBucketer"):
        assert reg.get(name) is not None, name
    assert "analyze" in reg.commands


def test_all_exports_exist() -> None:
    assert all(hasattr(curator_text, n) for n in curator_text.__all__)


def test_analyze_command(tmp_path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps({"text": "word " * n}) for n in (1, 5, 10, 60)) + "\n")
    from curator_text.analyze import analyze
    from curator_text.filters import WordCountFilter

    stats = analyze([str(path)], [WordCountFilter(min_words=5)], bins=4)
    s = stats["WordCountFilter"]
    assert s["count"] == 4 and s["kept_fraction"] == 0.75
    assert s["quantiles"]["0.0"] == 1 and s["quantiles"]["1.0"] == 60
    assert sum(s["histogram"]["counts"]) == 4
    out = subprocess.run([sys.executable, "-m", "curator", "analyze", str(path), "--filter",
                          'WordCountFilter:{"min_words": 5}'], capture_output=True, text=True,
                         env={**__import__("os").environ, "CURATOR_SUMMARY": "0"})
    assert out.returncode == 0, out.stderr
    assert "WordCountFilter: 4 documents" in out.stdout
