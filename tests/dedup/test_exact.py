"""ExactDeduplicationWorkflow on a corpus with planted exact and near duplicates."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator.dedup import ExactDeduplicationWorkflow
from curator.dedup.exact import group_first
from curator.dedup.hashing import hash_column

from tests.dedup.corpus import expected_removed, make_corpus, write_parts


def _exact_expected(texts, ids):
    first: dict[str, int] = {}
    root = [first.setdefault(t, i) for i, t in enumerate(texts)]
    return expected_removed(root, ids)


def test_finds_all_and_only_exact_duplicates(tmp_path) -> None:
    texts, _ = make_corpus()
    ids = write_parts(texts, tmp_path / "in", 3)
    result = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                        num_partitions=4).run()
    dups = pq.read_table(result.duplicates_path).to_pydict()
    assert set(dups["id"]) == _exact_expected(texts, ids)
    assert result.num_duplicates == 12 and len(dups["id"]) == 12
    by_id = dict(zip(ids, texts, strict=False))
    for dup, kept in zip(dups["id"], dups["duplicate_of"], strict=False):  # maps back to the kept record
        assert by_id[dup] == by_id[kept] and kept < dup


def test_removal_writes_input_without_duplicates_jsonl(tmp_path) -> None:
    texts, _ = make_corpus(n_orig=60, n_exact=5, n_near=3, n_short=2)
    ids = write_parts(texts, tmp_path / "in", 2, fmt="jsonl")
    bad = tmp_path / "in" / "part-01.jsonl"
    bad.write_text(bad.read_text() + "{not json\n")
    result = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                        perform_removal=True).run()
    assert result.num_removed == 5 and result.rejected == {"ExactHash": 1, "RemoveDuplicates": 1}
    kept = []
    for f in sorted((tmp_path / "out" / "deduplicated").glob("[!.]*")):  # not the manifest
        kept += [json.loads(line)["id"] for line in f.read_text().splitlines()]
    assert kept == [i for i in ids if i not in _exact_expected(texts, ids)]


def test_resume_reuses_finished_work(tmp_path, monkeypatch) -> None:
    texts, _ = make_corpus(n_orig=40, n_exact=4, n_near=0, n_short=0)
    write_parts(texts, tmp_path / "in", 2)
    wf = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"))
    first = pq.read_table(wf.run().duplicates_path).column("id").to_pylist()
    import curator.dedup.exact as exact

    def boom(*a, **k):
        raise AssertionError("hashing ran again")

    monkeypatch.setattr(exact, "hash_column", boom)
    again = pq.read_table(wf.run().duplicates_path).column("id").to_pylist()
    assert sorted(again) == sorted(first) and len(first) == 4


def test_any_column_type_and_integer_ids(tmp_path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"key": [10, 11, 12, 13], "payload": [b"a", b"b", b"a", None]}),
                   tmp_path / "in" / "x.parquet")
    result = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                        id_field="key", text_field="payload").run()
    assert pq.read_table(result.duplicates_path).to_pydict() == {"id": [12],
                                                                 "duplicate_of": [10]}


def test_hash_and_grouping_helpers() -> None:
    h, valid = hash_column(pa.chunked_array([["x", "y"], ["x", None]]))
    assert valid.tolist() == [True, True, True, False] and (h[0] == h[2]).all()
    keys = np.array([[1, 1], [2, 2], [1, 1], [1, 1]], dtype=np.uint64)
    dup, kept = group_first(keys, [np.array([1, 0, 0, 0]), np.array([0, 0, 5, 1])])
    assert sorted(zip(dup.tolist(), kept.tolist(), strict=False)) == [(0, 3), (2, 3)]


def test_config_errors_name_the_parameter(tmp_path) -> None:
    with pytest.raises(ValueError, match="num_partitions"):
        ExactDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), num_partitions=0)
    with pytest.raises(ValueError, match="input_filetype"):
        ExactDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), input_filetype="csv")


def test_shuffle_partitions_grow_with_the_input(tmp_path, monkeypatch):
    """Small inputs get one partition per file, at most twice the cores (each mapper writes a
    file per partition); beyond that the partition count follows the input's size."""
    from curator.dedup import ExactDeduplicationWorkflow

    wf = ExactDeduplicationWorkflow(str(tmp_path), str(tmp_path / "out"))
    files = [str(tmp_path / f"f{i}.jsonl") for i in range(100)]
    for f in files:
        with open(f, "w") as fh:
            fh.write('{"id": "x", "text": "' + "a" * 4000 + '"}\n')
    wf.fingerprint(files)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert wf.shuffle_partitions(files) == 4  # 400 KB of input: 2 cores, 4 partitions
    monkeypatch.setattr(os, "cpu_count", lambda: 96)
    assert wf.shuffle_partitions(files) == 64  # one per file, capped
    assert wf.shuffle_partitions(files[:10]) == 10
    monkeypatch.setattr(type(wf), "bytes_per_partition", 2000)
    total = sum(os.path.getsize(f) for f in files)
    assert wf.shuffle_partitions(files) == -(-total // 2000) > 200  # ~402 KB / 2 KB each
    assert ExactDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"),
                                      num_partitions=7).shuffle_partitions(files) == 7


def test_removal_workers_load_only_their_own_files_duplicates(tmp_path, monkeypatch) -> None:
    """The duplicate ids are also indexed by the input file they occur in; each removal task
    reads only its file's ids (never the whole duplicate list) and removes the same rows. The
    index is one file per reduce partition (a segment per input file), not one per partition
    and input file."""
    from curator.dedup import workflow as wf_mod

    texts, _ = make_corpus(n_orig=90, n_exact=9, n_near=0, n_short=0)
    texts = [texts[i] for i in np.random.default_rng(3).permutation(len(texts))]
    ids = write_parts(texts, tmp_path / "in", 3)
    wf = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                    num_partitions=4, perform_removal=True)
    read, whole = [], []
    real = wf_mod.by_file_ids
    monkeypatch.setattr(wf_mod, "by_file_ids", lambda d, i: read.append(i) or real(d, i))
    monkeypatch.setattr(wf_mod, "read_id_table", lambda p: whole.append(p))
    result = wf.run()
    assert sorted(read) == [0, 1, 2] and not whole  # never the whole duplicates dir
    expected = _exact_expected(texts, ids)
    by_file = tmp_path / "out" / "cache" / "exact" / "by_file"
    assert sorted(f.name for f in by_file.glob("*.arrow")) == [f"p{p:05d}.arrow" for p in range(4)]
    per_file = {k: set(real(str(by_file), k).to_pylist()) for k in range(3)}
    bounds = np.linspace(0, len(texts), 4).astype(int)  # write_parts' split into 3 files
    assert sum(bool(got) for got in per_file.values()) >= 2  # copies occur in several files
    for k, got in per_file.items():
        assert got == {i for i in expected if ids.index(i) in range(bounds[k], bounds[k + 1])}
    assert set().union(*per_file.values()) == expected and result.num_removed == len(expected)
    kept = [i for f in sorted((tmp_path / "out" / "deduplicated").glob("[!.]*"))
            for i in pq.read_table(f).column("id").to_pylist()]
    assert kept == [i for i in ids if i not in expected]


def test_dedup_files_dictionary_encode_only_string_columns(tmp_path) -> None:
    """Hash, id and shingle columns are nearly all distinct: a dictionary there only slows
    writing and reading; string columns keep theirs. The data reads back unchanged."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from curator.dedup.io import write_parquet

    table = pa.table({"hash": pa.array([7, 7, 9], pa.uint64()), "lang": ["en", "en", "de"],
                      "shingles": pa.array([[1, 2], [2], []], pa.list_(pa.uint32()))})
    path = str(tmp_path / "x.parquet")
    write_parquet(table, path)
    meta = pq.ParquetFile(path).metadata.row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).encodings
                 for i in range(meta.num_columns)}
    assert "RLE_DICTIONARY" not in encodings["hash"]
    assert "RLE_DICTIONARY" not in encodings["shingles.list.element"]
    assert "RLE_DICTIONARY" in encodings["lang"]
    assert pq.read_table(path).equals(table)
