"""Duplicate-group sizes (issue 20, "dedup group sizes when dedup ran"): exact, semantic and
fuzzy dedup publish how many groups of each size they found; workflows return them
(``DeduplicationResult.group_sizes``), a pipeline with a dedup stage has them in its stage
counters and the reports, and the HTML page draws them as a bar plot."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import Pipeline, ProcessingStage, Task
from curator.dedup import (
    ExactDeduplicationWorkflow,
    SemanticDeduplicationStage,
    SemanticDeduplicationWorkflow,
)
from curator.report import group_size_bars, report_schema
from curator.run.stats import DEDUP_GROUP_SIZES

from tests.core.report.test_html_report import CHROMIUM, _assert_offline, _chromium

# planted groups: sizes 2, 2, 3 and 5, plus 6 unique records
SIZES = [2, 2, 3, 5]
EXPECTED = {2: 2, 3: 1, 5: 1}
DIM = 16


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("CURATOR_SUMMARY", "0")


def _records() -> list[tuple[str, str, list[float]]]:
    """``(id, text, embedding)``: each group repeats one text (and a base vector + 1e-4 noise)."""
    rng = np.random.default_rng(3)
    out = []
    for g, size in enumerate(SIZES):
        base = rng.normal(size=DIM)
        out += [(f"g{g}_{c}", f"group {g} text", (base + rng.normal(scale=1e-4, size=DIM)).tolist())
                for c in range(size)]
    out += [(f"u{u}", f"unique text {u}", rng.normal(size=DIM).tolist()) for u in range(6)]
    return [out[i] for i in rng.permutation(len(out))]


def _write(tmp_path) -> str:
    recs = _records()
    d = tmp_path / "in"
    d.mkdir()
    for k in range(2):
        part = recs[k::2]
        pq.write_table(pa.table({"id": [r[0] for r in part], "text": [r[1] for r in part],
                                 "embeddings": [r[2] for r in part]}), d / f"p{k}.parquet")
    return str(d)


def test_group_size_counts_and_bars():
    from curator.dedup.workflow import group_size_counts

    assert group_size_counts([7, 7, 9, 4, 4, 4]) == {2: 1, 3: 1, 4: 1}
    assert group_size_counts([]) == {}
    assert group_size_bars({"2": 5, "3": 1}) == [("2", 5.0), ("3", 1.0)]
    many = {str(k): 1 for k in range(2, 40)}
    bars = dict(group_size_bars(many))
    assert bars["2"] == 1 and bars["3-4"] == 2 and bars["33-64"] == 7
    assert sum(bars.values()) == len(many)


def test_exact_workflow_group_sizes_also_on_a_resumed_run(tmp_path):
    src = _write(tmp_path)
    wf = ExactDeduplicationWorkflow(src, str(tmp_path / "out"), num_partitions=3)
    first = wf.run()
    assert first.group_sizes == EXPECTED and first.num_duplicates == sum(SIZES) - len(SIZES)
    again = wf.run()  # every partition's output exists: read back, same sizes
    assert again.group_sizes == EXPECTED


def test_semantic_workflow_group_sizes(tmp_path):
    src = _write(tmp_path)
    result = SemanticDeduplicationWorkflow(src, str(tmp_path / "out"), n_clusters=3,
                                           eps=0.01).run()
    assert result.group_sizes == EXPECTED
    dups = pa.concat_tables(pq.read_table(f) for f in sorted(
        (tmp_path / "out" / "duplicates").glob("semantic_c*.parquet"))).to_pydict()
    for dup, kept in zip(dups["id"], dups["duplicate_of"], strict=True):  # same group
        assert dup.split("_")[0] == kept.split("_")[0] and kept not in dups["id"]
    again = SemanticDeduplicationWorkflow(src, str(tmp_path / "out"), n_clusters=3,
                                          eps=0.01).run()
    assert again.group_sizes == EXPECTED


def test_fuzzy_workflow_group_sizes(tmp_path):
    pytest.importorskip("curator_text")
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    words = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat"
    recs = _records()
    d = tmp_path / "in"
    d.mkdir()
    texts = [f"{r[1]} {words} {r[1]}" if r[0].startswith("g") else
             f"{r[1]} " + " ".join(np.random.default_rng(int(r[0][1:])).permutation(
                 [f"w{i}" for i in range(40)])) for r in recs]
    pq.write_table(pa.table({"id": [r[0] for r in recs], "text": texts}), d / "a.parquet")
    result = FuzzyDeduplicationWorkflow(str(d), str(tmp_path / "out"), seed=1).run()
    assert result.group_sizes == EXPECTED


class Source(ProcessingStage[Task, Task]):
    """Emits 3 DocumentBatch tasks of the planted records (a group's copies spread over tasks)."""

    name = "Source"

    @property
    def is_source(self) -> bool:
        return True

    def process(self, task: Task) -> list[Task]:
        from curator_text import DocumentBatch

        recs = _records()
        return [DocumentBatch(task_id=f"t{k}", dataset_name="d", data=pa.table({
            "id": [r[0] for r in recs[k::3]], "embeddings": [r[2] for r in recs[k::3]]}))
            for k in range(3)]


@pytest.fixture(scope="module")
def semantic_run(tmp_path_factory):
    pytest.importorskip("curator_text")
    tmp = tmp_path_factory.mktemp("semreport")
    pipeline = Pipeline("semantic-report", stages=[
        Source(), SemanticDeduplicationStage(n_clusters=3, eps=0.01, spill_dir=str(tmp / "s"))])
    result = pipeline.run(summary=False, progress=False, report=str(tmp / "run.json"))
    pipeline.run(summary=False, progress=False, report=str(tmp / "run.html"))
    return result, tmp


def test_pipeline_dedup_stage_publishes_group_sizes_to_stats_and_json(semantic_run):
    result, tmp = semantic_run
    assert result.ok
    want = {str(k): v for k, v in EXPECTED.items()}
    (gather,) = [s for s in result.stats.stages if s.counters]
    assert gather.counters == {DEDUP_GROUP_SIZES: want}
    data = json.loads((tmp / "run.json").read_text())
    jsonschema.validate(data, report_schema())
    (stage,) = [s for s in data["stages"] if s["counters"]]
    assert stage["name"] == gather.name and stage["counters"] == {DEDUP_GROUP_SIZES: want}
    assert f"{gather.name} {DEDUP_GROUP_SIZES}: 2=2, 3=1, 5=1" in result.summary()


def test_html_draws_the_group_sizes_bar_plot(semantic_run, tmp_path):
    _, tmp = semantic_run
    page = (tmp / "run.html").read_text()
    _assert_offline(page)
    assert "<h2>Duplicate group sizes</h2>" in page and "(4 groups)" in page
    assert "<h2>Stage counters</h2>" not in page  # group sizes are drawn, not tabled
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed; the page was checked as text only")
    dom, log = _chromium(tmp / "run.html", tmp_path)
    assert "CONSOLE" not in log and "Uncaught" not in log
    (plot,) = [p for p in dom.split('<svg class="plot bars"')[1:]]
    bars = plot.split("</svg>")[0]
    assert bars.count('<rect class="bar"') == 3  # sizes 2, 3 and 5
    assert "2: 2</title>" in bars and "5: 1</title>" in bars


def test_image_duplicates_report_group_sizes(tmp_path):
    pytest.importorskip("curator_image")
    from curator_image import find_image_duplicates

    recs = _records()  # exact: the groups share a content hash; semantic: near vectors
    ids = [r[0] for r in recs]
    pq.write_table(pa.table({"image_id": ids, "content_hash": [r[1] for r in recs],
                             "embedding": [r[2] for r in recs]}), tmp_path / "e.parquet")
    exact = find_image_duplicates(str(tmp_path), semantic=False)
    semantic = find_image_duplicates(str(tmp_path), exact=False, eps=0.01, n_clusters=2)
    assert exact.group_sizes == EXPECTED and semantic.group_sizes == EXPECTED
    assert set(semantic.reasons) == {"semantic"} and len(semantic) == sum(SIZES) - len(SIZES)
