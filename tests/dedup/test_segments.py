"""Segmented files (one file per writer, a segment per reader) and the fuzzy workflow's cache
made of them: its files grow with the writers, not with writers x readers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator.dedup.segments import find_segments, read_segment, segment_files, write_segments
from curator_text.dedup import FuzzyDeduplicationWorkflow
from curator_text.dedup.stages import CandidateDocsStage

from tests.dedup.corpus import expected_removed, write_parts


def test_each_reader_gets_its_rows_in_their_order(tmp_path) -> None:
    table = pa.table({"a": np.arange(10), "s": [f"x{i}" for i in range(10)]})
    seg = np.array([3, 1, 3, 7, 1, 1, 9, 3, 7, 0])
    assert write_segments(table, seg, str(tmp_path / "w1.arrow")) == 5
    assert write_segments(table.slice(0, 0), seg[:0], str(tmp_path / "w0.arrow")) == 0
    (tmp_path / "sub").mkdir()
    write_segments(table, np.zeros(10), str(tmp_path / "sub" / "other.arrow"))  # not listed
    files = segment_files(str(tmp_path))
    assert [f.rsplit("/", 1)[-1] for f in files] == ["w0.arrow", "w1.arrow"]
    assert read_segment(files, 3).to_pydict() == {"a": [0, 2, 7], "s": ["x0", "x2", "x7"]}
    assert read_segment(files, 5) is None
    assert read_segment(files, 1, ["s"]).column_names == ["s"]
    found = find_segments(files, 1, 8)
    assert [(s.id, s.num_rows) for s in found] == [(1, 3), (3, 3), (7, 2)]
    assert sorted(x for s in found for x in s.read().column("a").to_pylist()) == \
        [0, 1, 2, 3, 4, 5, 7, 8]
    assert segment_files(str(tmp_path / "missing")) == []


def test_a_refused_write_leaves_no_file(tmp_path) -> None:
    with pytest.raises(ValueError, match="1 segment ids for 2 rows"):
        write_segments(pa.table({"a": [1, 2]}), np.array([0]), str(tmp_path / "w.arrow"))
    assert list(tmp_path.iterdir()) == []


def _files(directory, ext: str) -> int:
    return sum(1 for p in directory.rglob(f"*{ext}") if not p.name.startswith("."))


def test_the_fuzzy_cache_has_a_file_per_writer_not_per_writer_and_reader(tmp_path, corpus,
                                                                        monkeypatch) -> None:
    """8 input files (one map task each) into 4 partitions: the band hashes are 8 files (not
    32), the candidate pairs 4 (not 16), the documents each pair partition needs 4 (not 32),
    the candidate documents 8 (not 8 x buckets), each components step at most one per
    partition, the removal index one per partition."""
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 8)
    monkeypatch.setattr(FuzzyDeduplicationWorkflow, "bytes_per_group", 1)  # a task per file
    wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                    num_partitions=4, perform_removal=True)
    wf.docs_per_bucket = 8  # several buckets per pair partition
    result = wf.run()
    assert {d for d in pq.read_table(result.duplicates_path).column("id").to_pylist()} == \
        expected_removed(root, ids)
    (tag,) = (tmp_path / "out" / "cache" / "fuzzy").glob("n24_*")
    (buckets_dir,), (edges_dir,) = tag.glob("buckets_*"), tag.glob("edges_*")
    assert _files(buckets_dir, ".arrow") == 8 and _files(edges_dir, ".arrow") == 4
    (work,) = tag.glob("verify_*")
    assert _files(work / "pairs", ".arrow") == 4 and _files(work / "need", ".arrow") == 4
    assert _files(work / "candidates", ".arrow") <= 8
    buckets = _files(work / "ids" / "_done", ".parquet")
    assert buckets > 4 and _files(work / "ids", ".arrow") <= buckets
    steps = sorted(p for p in (work / "cc").iterdir() if p.name != "r000")
    assert steps and all(_files(s, ".arrow") <= 4 for s in steps)
    assert _files(work / "cc" / "r000", ".arrow") <= buckets
    assert _files(tmp_path / "out" / "cache" / "fuzzy" / "by_file", ".arrow") == 4
    assert result.num_removed == len(expected_removed(root, ids))


def test_candidate_groups_and_parts_do_not_change_the_duplicates(tmp_path, corpus,
                                                                 monkeypatch) -> None:
    """One candidate task for every file, one task per file, and a new part file after every
    file of a task find the same pairs."""
    texts, _ = corpus
    write_parts(texts, tmp_path / "in", 5)
    found, names = [], {}
    for run, group_bytes, part_bytes in (("one", 2**40, 2**40), ("groups", 1, 2**40),
                                         ("parts", 2**40, 1)):
        monkeypatch.setattr(FuzzyDeduplicationWorkflow, "bytes_per_group", group_bytes)
        monkeypatch.setattr(CandidateDocsStage, "part_bytes", part_bytes)
        wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / run))
        dups = pq.read_table(wf.run().duplicates_path).to_pydict()
        found.append(sorted(zip(dups["id"], dups["duplicate_of"], strict=True)))
        names[run] = sorted(p.name for p in (tmp_path / run).rglob("candidates/*.arrow"))
    assert found[0] == found[1] == found[2] and found[0]
    assert names["one"] == ["g00000-000.arrow"]
    assert len(names["groups"]) > 2 and all(n.endswith("-000.arrow") for n in names["groups"])
    assert len(names["parts"]) > 2 and all(n.startswith("g00000-") for n in names["parts"])


def test_a_malformed_line_in_a_group_is_rejected_naming_its_file(tmp_path, corpus) -> None:
    from curator.tasks import FileGroupTask
    from curator_text.dedup.stages import MinHashLSHStage

    texts, _ = corpus
    write_parts(texts[:40], tmp_path / "in", 2, fmt="jsonl")
    bad = tmp_path / "in" / "part-01.jsonl"
    bad.write_text(bad.read_text() + "{not json\n")
    files = sorted(str(p) for p in (tmp_path / "in").glob("*.jsonl"))
    task = FileGroupTask(task_id="g0", dataset_name="t", data=files, metadata={
        "group_index": 0, "files": [{"file_index": 0}, {"file_index": 1}]})
    stage = MinHashLSHStage("text", str(tmp_path / "b"), 2, char_ngrams=24, num_bands=4,
                            minhashes_per_band=2, seed=1)
    stage.process(task)
    (rec,) = stage.drain_rejected()
    assert rec.source == files[1] and rec.record["line_number"] == 21
    assert find_segments(segment_files(str(tmp_path / "b")), 0, 2)  # both files hashed
