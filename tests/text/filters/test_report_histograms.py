"""ScoreFilter publishes each filter's scores to the run report, with its bounds marked."""

from __future__ import annotations

import json

from curator import Pipeline
from curator_text import JsonlReader, JsonlWriter, ScoreFilter, WordCountFilter


def test_score_filter_scores_reach_the_report_with_thresholds(tmp_path):
    (tmp_path / "in").mkdir()
    with open(tmp_path / "in" / "a.jsonl", "w") as fh:
        for i in range(50):
            fh.write(json.dumps({"text": "word " * (i + 1)}) + "\n")
    Pipeline("h", stages=[
        JsonlReader(file_paths=str(tmp_path / "in" / "*.jsonl")),
        ScoreFilter(WordCountFilter(min_words=10, max_words=40), text_field="text"),
        JsonlWriter(path=str(tmp_path / "out")),
    ]).run(report=str(tmp_path / "run.json"))

    report = json.loads((tmp_path / "run.json").read_text())
    (hist,) = [h for h in report["histograms"] if h["name"] == "WordCountFilter"]
    assert hist["count"] == 50
    assert (hist["min"], hist["max"]) == (1.0, 50.0)
    assert hist["thresholds"] == [10.0, 40.0]
    assert sum(hist["counts"]) == 50
