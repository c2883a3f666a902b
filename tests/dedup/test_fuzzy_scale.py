"""Fuzzy dedup on the scale benchmark's input (zstd JSONL) and with bounded per-task memory."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from curator_text.dedup import FuzzyDeduplicationWorkflow

from tests.dedup.corpus import expected_removed, write_parts


def _pairs(result) -> list[tuple[str, str]]:
    dups = pq.read_table(result.duplicates_path).to_pydict()
    return sorted(zip(dups["id"], dups["duplicate_of"], strict=True))


def test_zstd_jsonl_input_finds_the_same_duplicates(tmp_path, corpus) -> None:
    """A directory of ``.jsonl.zst`` files (read with Arrow's codec, no ``zstandard`` package)
    gives the same duplicates as the same documents uncompressed."""
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "plain", 3, fmt="jsonl")
    (tmp_path / "zst").mkdir()
    for src in sorted((tmp_path / "plain").glob("*.jsonl")):
        with pa.CompressedOutputStream(str(tmp_path / "zst" / (src.name + ".zst")), "zstd") as fh:
            fh.write(src.read_bytes())
    plain = FuzzyDeduplicationWorkflow(str(tmp_path / "plain"), str(tmp_path / "o1")).run()
    zst = FuzzyDeduplicationWorkflow(str(tmp_path / "zst"), str(tmp_path / "o2")).run()
    assert {d for d, _ in _pairs(zst)} == expected_removed(root, ids)
    assert _pairs(zst) == _pairs(plain)


def _band_files(directory, rng, files: int, docs: int, bands: int, distinct: int) -> None:
    """Band-hash files as MinHashLSHStage writes them (all in partition 0), with many shared
    hashes."""
    from curator.dedup.segments import write_segments

    for f in range(files):
        keys = (np.int64(f) << np.int64(32)) | np.arange(docs, dtype=np.int64)
        write_segments(pa.table({"band": np.tile(np.arange(bands, dtype=np.int16), docs),
                                 "hash": rng.integers(0, distinct, docs * bands).astype(np.uint64),
                                 "key": np.repeat(keys, bands)}),
                       np.zeros(docs * bands, np.int64), str(directory / f"f{f:05d}.arrow"))


def _reference_pairs(directory) -> set[tuple[int, int]]:
    """The pairs as the stage computed them before (one sort over band, hash and key)."""
    t = pa.concat_tables([pa.ipc.open_file(str(f)).read_all()
                          for f in sorted(directory.glob("*.arrow"))])
    band, h, key = (t.column(c).to_numpy() for c in ("band", "hash", "key"))
    order = np.lexsort((key, h, band))
    band, h, key = band[order], h[order], key[order]
    same = np.concatenate(([False], (band[1:] == band[:-1]) & (h[1:] == h[:-1])))
    start = np.maximum.accumulate(np.where(~same, np.arange(len(key)), 0))
    return set(zip(key[start[same]].tolist(), key[same].tolist(), strict=True))


def _stage_pairs(stage, edges) -> set[tuple[int, int]]:
    from curator.tasks import Task

    out = stage.process(Task(task_id="p0", dataset_name="t", data=0,
                             metadata={"partition_index": 0}))
    files = sorted(edges.glob("*.arrow"))
    if not files:
        return set()
    t = pa.concat_tables([pa.ipc.open_file(str(f)).read_all() for f in files])
    pairs = list(zip(t.column("a").to_pylist(), t.column("b").to_pylist(), strict=True))
    assert out.metadata["pairs"] == len(pairs) == len(set(pairs))  # repeats dropped
    return set(pairs)


def test_lsh_buckets_band_by_band_gives_the_pairs_of_one_sort(tmp_path) -> None:
    from curator_text.dedup.stages import LSHBucketsStage

    _band_files(tmp_path / "buckets", np.random.default_rng(0), files=3, docs=400, bands=5,
                distinct=300)
    stage = LSHBucketsStage(str(tmp_path / "buckets"), str(tmp_path / "edges"), 3)
    found = _stage_pairs(stage, tmp_path / "edges")
    assert len(found) > 1000
    assert found == _reference_pairs(tmp_path / "buckets")


def test_lsh_buckets_memory_is_a_small_multiple_of_the_partitions_rows(tmp_path) -> None:
    """NumPy memory of one partition's bucketing stays under 30 bytes a band-hash row (the
    rows themselves are 18); one sort over all rows needed about 70 (measured by tracemalloc,
    which counts NumPy's allocations, so no timing or process sampling is involved)."""
    import tracemalloc

    from curator_text.dedup.stages import LSHBucketsStage

    files, docs, bands = 4, 25_000, 20
    _band_files(tmp_path / "buckets", np.random.default_rng(1), files=files, docs=docs,
                bands=bands, distinct=10**7)  # most hashes distinct, as in real data
    stage = LSHBucketsStage(str(tmp_path / "buckets"), str(tmp_path / "edges"), 1)
    tracemalloc.start()
    try:
        _stage_pairs(stage, tmp_path / "edges")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30 * files * docs * bands, peak / (files * docs * bands)
