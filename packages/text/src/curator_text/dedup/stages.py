"""The stages of the fuzzy deduplication workflow (each writes atomically and skips finished work).

Documents are keyed ``file_index << 32 | row`` (their position in the sorted input), so the first
document of a group in input order has the smallest key.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from curator.dedup.io import read_table, write_parquet
from curator.dedup.workflow import done
from curator.io import expand_paths, join_path
from curator.stages.base import ProcessingStage
from curator.tasks import FileGroupTask, Task

from curator_text.dedup.components import jaccard
from curator_text.dedup.minhash import band_hashes, doc_shingle_sets, minhash_signatures

__all__ = ["MinHashLSHStage", "LSHBucketsStage", "CandidateDocsStage", "JaccardVerifyStage",
           "doc_key"]


def doc_key(file_index: int, rows: np.ndarray) -> np.ndarray:
    return (np.int64(file_index) << np.int64(32)) | rows.astype(np.int64)


def _texts(table: pa.Table, field: str) -> list[str]:
    return [t if isinstance(t, str) else "" for t in table.column(field).to_pylist()]


def _partition_files(cache_dir: str, p: int, prefix: str = "p") -> list[str]:
    try:
        return expand_paths(join_path(cache_dir, f"{prefix}{p:05d}"), [".parquet"])
    except FileNotFoundError:
        return []


class MinHashLSHStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """MinHash one input file's documents and write their LSH band hashes into hash partitions.

    Documents shorter than ``char_ngrams`` characters get no band hashes (never grouped).
    """

    name = "MinHashLSH"

    def __init__(self, text_field: str, cache_dir: str, num_partitions: int, *, char_ngrams: int,
                 num_bands: int, minhashes_per_band: int, seed: int, method: str = "oph",
                 rows_per_batch: int = 250) -> None:
        self.text_field, self.cache_dir, self.num_partitions = text_field, cache_dir, num_partitions
        self.char_ngrams, self.num_bands, self.minhashes_per_band = (char_ngrams, num_bands,
                                                                     minhashes_per_band)
        self.seed, self.method, self.rows_per_batch = seed, method, rows_per_batch

    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        marker = join_path(self.cache_dir, "_done", f"f{i:05d}.parquet")
        if done(marker):
            return task
        table = read_table(task.data[0], [self.text_field], on_bad=lambda line, n, err: self.reject(
            task, "malformed JSON line", record={"line": line, "line_number": n}, error=err))
        column = table.column(self.text_field)  # made Python strings one batch at a time
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for s in range(0, table.num_rows, self.rows_per_batch):
            texts = [t if isinstance(t, str) else ""
                     for t in column.slice(s, self.rows_per_batch).to_pylist()]
            sig, ok = minhash_signatures(texts,
                                         char_ngrams=self.char_ngrams, seed=self.seed,
                                         num_perm=self.num_bands * self.minhashes_per_band,
                                         method=self.method)
            rows = np.flatnonzero(ok)
            bh = band_hashes(sig[rows], self.num_bands, self.minhashes_per_band)
            parts.append((np.repeat(doc_key(i, rows + s), self.num_bands),
                          np.tile(np.arange(self.num_bands, dtype=np.int16), len(rows)),
                          bh.ravel()))
        keys = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.int64)
        bands = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int16)
        hashes = np.concatenate([p[2] for p in parts]) if parts else np.empty(0, np.uint64)
        part = (hashes % np.uint64(self.num_partitions)).astype(np.int64)
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(self.num_partitions + 1))
        for p in range(self.num_partitions):
            sel = order[bounds[p]:bounds[p + 1]]
            if len(sel):
                write_parquet(pa.table({"band": bands[sel], "hash": hashes[sel],
                                        "key": keys[sel]}),
                              join_path(self.cache_dir, f"p{p:05d}", f"f{i:05d}.parquet"))
        write_parquet(pa.table({"rows": [table.num_rows]}), marker)
        return task


class LSHBucketsStage(ProcessingStage[Task, Task]):
    """Turn one partition of band hashes into candidate pairs ``(first_key, other_key)``."""

    name = "LSHBuckets"

    def __init__(self, cache_dir: str, edges_dir: str) -> None:
        self.cache_dir, self.edges_dir = cache_dir, edges_dir

    def process(self, task: Task) -> Task:
        p = int(task.metadata["partition_index"])
        out = join_path(self.edges_dir, f"p{p:05d}.parquet")
        if done(out):
            return task
        files = _partition_files(self.cache_dir, p)
        if files:
            t = pa.concat_tables([pq.read_table(f) for f in files])
            band, h, key = (t.column(c).to_numpy() for c in ("band", "hash", "key"))
        else:
            band, h, key = np.empty(0, np.int16), np.empty(0, np.uint64), np.empty(0, np.int64)
        order = np.lexsort((key, h, band))
        band, h, key = band[order], h[order], key[order]
        same = np.concatenate(([False], (band[1:] == band[:-1]) & (h[1:] == h[:-1])))[:len(key)]
        start = np.maximum.accumulate(np.where(~same, np.arange(len(key)), 0))
        edges = np.stack([key[start[same]], key[same]], axis=1)
        if len(edges):
            edges = np.unique(edges, axis=0)
        write_parquet(pa.table({"a": edges[:, 0].copy(), "b": edges[:, 1].copy()}), out)
        return task


class CandidateDocsStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Read the candidate documents of one file: their id and (for Jaccard) shingle set.

    The rows to read are in ``task.metadata["rows"]`` and, aligned with them, the verification
    buckets each row is needed in are in ``task.metadata["buckets"]`` (a row may be needed in
    several). Each bucket's documents go to ``out_dir/bKKKKK/fIIIII.parquet``; a marker under
    ``out_dir/_done`` written last makes a re-run skip the file.
    """

    name = "CandidateDocs"

    def __init__(self, text_field: str, id_field: str, out_dir: str, char_ngrams: int,
                 with_shingles: bool) -> None:
        self.text_field, self.id_field, self.out_dir = text_field, id_field, out_dir
        self.char_ngrams, self.with_shingles = char_ngrams, with_shingles

    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        marker = join_path(self.out_dir, "_done", f"f{i:05d}.parquet")
        if done(marker):
            return task
        rows = np.asarray(task.metadata["rows"], dtype=np.int64)
        buckets = np.asarray(task.metadata.get("buckets", np.zeros(len(rows))), dtype=np.int64)
        urows, inv = np.unique(rows, return_inverse=True)
        table = read_table(task.data[0], [self.id_field, self.text_field]).take(urows)
        ids = table.column(self.id_field)
        sets = (doc_shingle_sets(_texts(table, self.text_field), self.char_ngrams)
                if self.with_shingles else [])
        del table
        for k in np.unique(buckets).tolist():
            sel = np.unique(inv[buckets == k])
            cols = {"key": doc_key(i, urows[sel]), "id": ids.take(pa.array(sel))}
            if self.with_shingles:
                part = [sets[j] for j in sel.tolist()]
                offsets = np.concatenate(([0], np.cumsum([len(x) for x in part]))).astype(np.int64)
                values = np.concatenate(part) if part else np.empty(0, np.uint32)
                cols["shingles"] = pa.LargeListArray.from_arrays(pa.array(offsets),
                                                                 pa.array(values))
            write_parquet(pa.table(cols), join_path(self.out_dir, f"b{k:05d}", f"f{i:05d}.parquet"))
        write_parquet(pa.table({"rows": [len(urows)]}), marker)
        return task


class JaccardVerifyStage(ProcessingStage[Task, Task]):
    """Verify one bucket of candidate pairs: attach both documents' ids and (with shingles) the
    exact Jaccard similarity of their shingle sets (NaN without shingles).

    Reads ``pairs_dir/bKKKKK.parquet`` (columns ``a``, ``b``) and the bucket's candidate documents
    ``docs_dir/bKKKKK/*.parquet``; writes ``out_dir/bKKKKK.parquet`` (``a``, ``b``, ``id_a``,
    ``id_b``, ``similarity``). Only one bucket's shingle sets are in memory at a time.
    """

    name = "JaccardVerify"

    def __init__(self, pairs_dir: str, docs_dir: str, out_dir: str) -> None:
        self.pairs_dir, self.docs_dir, self.out_dir = pairs_dir, docs_dir, out_dir

    def process(self, task: Task) -> Task:
        k = int(task.metadata["partition_index"])
        out = join_path(self.out_dir, f"b{k:05d}.parquet")
        if done(out):
            return task
        pairs = pq.read_table(join_path(self.pairs_dir, f"b{k:05d}.parquet"))
        a, b = pairs.column("a").to_numpy(), pairs.column("b").to_numpy()
        docs = pa.concat_tables([pq.read_table(f) for f in _partition_files(self.docs_dir, k, "b")],
                                promote_options="default")
        key = docs.column("key").to_numpy()
        order = np.argsort(key)
        ia = order[np.searchsorted(key, a, sorter=order)]
        ib = order[np.searchsorted(key, b, sorter=order)]
        ids = docs.column("id")
        sim = np.full(len(a), np.nan)
        if "shingles" in docs.column_names:
            col = docs.column("shingles").combine_chunks()
            offsets, values = col.offsets.to_numpy(), col.values.to_numpy()
            for n, (x, y) in enumerate(zip(ia.tolist(), ib.tolist(), strict=True)):
                sim[n] = jaccard(values[offsets[x]:offsets[x + 1]],
                                 values[offsets[y]:offsets[y + 1]])
        write_parquet(pa.table({"a": a, "b": b, "id_a": ids.take(pa.array(ia)),
                                "id_b": ids.take(pa.array(ib)), "similarity": sim}), out)
        return task
