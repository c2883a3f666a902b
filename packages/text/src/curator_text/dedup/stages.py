"""The stages of the fuzzy deduplication workflow (each writes atomically and skips finished work).

Documents are keyed ``file_index << 32 | row`` (their position in the sorted input), so the first
document of a group in input order has the smallest key. Every stage works on one input file, one
hash partition or one verification bucket; what it passes on goes through files under the cache,
never through the driver (which only sums the few counts each task returns in its metadata).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from curator.dedup.io import read_table, write_parquet
from curator.dedup.workflow import done, group_size_counts, id_columns, task_ids, write_by_file
from curator.io import expand_paths, join_path
from curator.run.stats import DEDUP_GROUP_SIZES
from curator.stages.base import ProcessingStage
from curator.tasks import FileGroupTask, Task

from curator_text.dedup.components import (
    hash_partition,
    jaccard,
    read_edges,
    scatter_edges,
    split_by,
    unique_pairs,
)
from curator_text.dedup.minhash import band_hashes, doc_shingle_sets, minhash_signatures

__all__ = ["MinHashLSHStage", "LSHBucketsStage", "PairBucketsStage", "CandidateDocsStage",
           "JaccardVerifyStage", "DuplicateLabelsStage", "DuplicateIdsStage", "doc_key",
           "bucket_id", "bucket_name", "parquet_files", "bucket_pairs"]


def doc_key(file_index: int, rows: np.ndarray) -> np.ndarray:
    return (np.int64(file_index) << np.int64(32)) | rows.astype(np.int64)


def _texts(table: pa.Table, field: str) -> list[str]:
    return [t if isinstance(t, str) else "" for t in table.column(field).to_pylist()]


#: bits of a verification bucket id that number the sub-bucket within its pair partition
_SUB_BITS = 20


def bucket_id(partition: int, sub: int) -> int:
    """The id of sub-bucket ``sub`` of pair partition ``partition``."""
    return partition << _SUB_BITS | sub


def bucket_name(bucket: int) -> str:
    """The file name of verification bucket ``bucket`` (pair partition ``q``, sub-bucket ``s``:
    ``bucket = q << 20 | s``)."""
    return f"b{bucket >> _SUB_BITS:05d}-{bucket & ((1 << _SUB_BITS) - 1):05d}"


def parquet_files(directory: str) -> list[str]:
    """The Parquet files under ``directory`` (sorted; none when it does not exist)."""
    try:
        return expand_paths(directory, [".parquet"])
    except FileNotFoundError:
        return []


def _partition_files(cache_dir: str, p: int, prefix: str = "p") -> list[str]:
    return parquet_files(join_path(cache_dir, f"{prefix}{p:05d}"))


def _read_all(files: list[str], columns: list[str] | None = None) -> pa.Table | None:
    tables = [pq.read_table(f, columns=columns) for f in files]
    return pa.concat_tables(tables, promote_options="default") if tables else None


def _node_ids(ids_dir: str, q: int, keys: np.ndarray) -> pa.Array:
    """The ids of document ``keys`` (all in node partition ``q``), from ``ids_dir/qQQQQQ``."""
    t = _read_all(_partition_files(ids_dir, q, "q"))
    if t is None:
        if len(keys):
            raise RuntimeError(f"fuzzy dedup: no document ids in {ids_dir}/q{q:05d} for "
                               f"{len(keys)} grouped document(s); the cache is incomplete, "
                               f"delete it and re-run")
        return pa.array([], pa.string())
    known = t.column("key").to_numpy()
    order = np.argsort(known, kind="stable")
    at = order[np.minimum(np.searchsorted(known, keys, sorter=order), len(known) - 1)]
    if len(keys) and not (known[at] == keys).all():
        raise RuntimeError(f"fuzzy dedup: a grouped document has no id in {ids_dir}/q{q:05d}; "
                           f"the cache is incomplete, delete it and re-run")
    return t.column("id").take(pa.array(at)).combine_chunks()


class MinHashLSHStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """MinHash one input file's documents and write their LSH band hashes into hash partitions.

    Documents shorter than ``char_ngrams`` characters get no band hashes (never grouped).
    """

    name = "MinHashLSH"

    def __init__(self, text_field: str, cache_dir: str, num_partitions: int, *, char_ngrams: int,
                 num_bands: int, minhashes_per_band: int, seed: int, method: str = "oph",
                 rows_per_batch: int = 250, word_ngrams: int | None = None) -> None:
        self.text_field, self.cache_dir, self.num_partitions = text_field, cache_dir, num_partitions
        self.word_ngrams = word_ngrams
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
                                         method=self.method, word_ngrams=self.word_ngrams)
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


def _read_band_hashes(files: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``band``, ``hash`` and ``key`` columns of ``files`` as NumPy arrays, filled file by
    file (no concatenated Arrow table beside them)."""
    total = sum(pq.read_metadata(f).num_rows for f in files)
    band, h = np.empty(total, np.int16), np.empty(total, np.uint64)
    key = np.empty(total, np.int64)
    at = 0
    for f in files:
        t = pq.read_table(f, columns=["band", "hash", "key"])
        n = t.num_rows
        for out, c in ((band, "band"), (h, "hash"), (key, "key")):
            out[at:at + n] = t.column(c).to_numpy()
        at += n
    return band, h, key


def bucket_pairs(h: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs of one band: for every hash shared by several documents,
    ``(smallest key, other key)`` for each other document with it (repeats included)."""
    order = np.lexsort((key, h))
    h, key = h[order], key[order]
    same = np.concatenate(([False], h[1:] == h[:-1]))[:len(key)]
    start = np.maximum.accumulate(np.where(~same, np.arange(len(key)), 0))
    return key[start[same]], key[same]


class LSHBucketsStage(ProcessingStage[Task, Task]):
    """Turn one partition of band hashes into candidate pairs ``(first_key, other_key)``, written
    hash-partitioned by the first key into ``num_partitions`` pair partitions
    (``edges_dir/qQQQQQ/pPPPPP.parquet``), so every copy of a pair lands in the same one.
    The partition's rows are held once as NumPy arrays (18 bytes a row: ~100 MB for the
    ~280k documents a default partition gets) and sorted one band at a time.
    Sets ``task.metadata["pairs"]``."""

    name = "LSHBuckets"

    def __init__(self, cache_dir: str, edges_dir: str, num_partitions: int = 1) -> None:
        self.cache_dir, self.edges_dir, self.num_partitions = cache_dir, edges_dir, num_partitions

    def process(self, task: Task) -> Task:
        p = int(task.metadata["partition_index"])
        marker = join_path(self.edges_dir, "_done", f"p{p:05d}.parquet")
        if not done(marker):
            band, h, key = _read_band_hashes(_partition_files(self.cache_dir, p))
            # band by band (documents pair only within a band): the sort's temporaries are for
            # one band's rows, so a task holds little more than the partition's 18 bytes a row
            found = [bucket_pairs(h[rows], key[rows])
                     for rows in (np.flatnonzero(band == v) for v in np.unique(band))]
            del band, h, key
            a, b = unique_pairs(np.concatenate([x for x, _ in found] or [np.empty(0, np.int64)]),
                                np.concatenate([y for _, y in found] or [np.empty(0, np.int64)]))
            del found
            for q, rows in split_by(hash_partition(a, self.num_partitions), self.num_partitions):
                write_parquet(pa.table({"a": a[rows], "b": b[rows]}),
                              join_path(self.edges_dir, f"q{q:05d}", f"p{p:05d}.parquet"))
            write_parquet(pa.table({"pairs": [len(a)]}), marker)
        task.metadata["pairs"] = pq.read_table(marker).column("pairs")[0].as_py()
        return task


class PairBucketsStage(ProcessingStage[Task, Task]):
    """Drop the repeated candidate pairs of one pair partition and split it into verification
    buckets of about ``docs_per_bucket`` documents (by a second hash of the first document).

    Writes each bucket's pairs to ``pairs_dir/{bucket_name}.parquet`` and, per input file, the
    rows needed by each bucket to ``need_dir/fIIIII/qQQQQQ.parquet`` (columns ``row``,
    ``bucket``). Sets ``task.metadata["buckets"]`` (their number) and ``["pairs"]``.
    """

    name = "PairBuckets"

    def __init__(self, edges_dir: str, pairs_dir: str, need_dir: str,
                 docs_per_bucket: int) -> None:
        self.edges_dir, self.pairs_dir, self.need_dir = edges_dir, pairs_dir, need_dir
        self.docs_per_bucket = docs_per_bucket

    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        marker = join_path(self.pairs_dir, "_done", f"q{q:05d}.parquet")
        if not done(marker):
            t = _read_all(_partition_files(self.edges_dir, q, "q"))
            a, b = ((t.column("a").to_numpy(), t.column("b").to_numpy()) if t is not None
                    else (np.empty(0, np.int64), np.empty(0, np.int64)))
            a, b = unique_pairs(a, b)
            keys = np.concatenate([a, b])
            ndocs = len(np.unique(keys))
            n = min(-(-ndocs // self.docs_per_bucket), 1 << _SUB_BITS)
            bucket = (np.int64(q) << np.int64(_SUB_BITS)) | hash_partition(a, n, seed=1)
            for s, rows in split_by(bucket - (q << _SUB_BITS), n):
                write_parquet(pa.table({"a": a[rows], "b": b[rows]}),
                              join_path(self.pairs_dir, f"{bucket_name(bucket_id(q, s))}.parquet"))
            need_key, need_bucket = unique_pairs(keys, np.concatenate([bucket, bucket]))
            for i, rows in split_by_value(need_key >> 32):
                write_parquet(pa.table({"row": need_key[rows] & 0xFFFFFFFF,
                                        "bucket": need_bucket[rows]}),
                              join_path(self.need_dir, f"f{i:05d}", f"q{q:05d}.parquet"))
            write_parquet(pa.table({"buckets": [n], "pairs": [len(a)]}), marker)
        counts = pq.read_table(marker).to_pylist()[0]
        task.metadata["buckets"], task.metadata["pairs"] = counts["buckets"], counts["pairs"]
        return task


class CandidateDocsStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Read the candidate documents of one file: their id and (for Jaccard) shingle set.

    The rows to read, and the verification buckets each is needed in (a row may be needed in
    several), are in ``need_dir/fIIIII/*.parquet`` (written by :class:`PairBucketsStage`). Each
    bucket's documents go to ``out_dir/{bucket_name}/fIIIII.parquet``; a marker under
    ``out_dir/_done`` written last makes a re-run skip the file.
    """

    name = "CandidateDocs"

    def __init__(self, text_field: str, id_field: str, need_dir: str, out_dir: str,
                 char_ngrams: int, with_shingles: bool, word_ngrams: int | None = None) -> None:
        self.text_field, self.id_field, self.need_dir = text_field, id_field, need_dir
        self.word_ngrams = word_ngrams
        self.out_dir, self.char_ngrams, self.with_shingles = out_dir, char_ngrams, with_shingles

    def process(self, task: FileGroupTask) -> FileGroupTask:
        i = int(task.metadata["file_index"])
        marker = join_path(self.out_dir, "_done", f"f{i:05d}.parquet")
        if done(marker):
            return task
        need = _read_all(_partition_files(self.need_dir, i, "f"))
        if need is None:
            write_parquet(pa.table({"rows": [0]}), marker)
            return task
        rows = need.column("row").to_numpy().astype(np.int64)
        buckets = need.column("bucket").to_numpy()
        del need
        urows, inv = np.unique(rows, return_inverse=True)
        table = read_table(task.data[0], [*id_columns(task, self.id_field),
                                          self.text_field]).take(urows)
        ids = task_ids(task, table, self.id_field, urows)
        sets = (doc_shingle_sets(_texts(table, self.text_field), self.char_ngrams,
                                 self.word_ngrams) if self.with_shingles else [])
        del table
        for k, sel_rows in split_by_value(buckets):
            sel = np.unique(inv[sel_rows])
            cols = {"key": doc_key(i, urows[sel]), "id": ids.take(pa.array(sel))}
            if self.with_shingles:
                part = [sets[j] for j in sel.tolist()]
                offsets = np.concatenate(([0], np.cumsum([len(x) for x in part]))).astype(np.int64)
                values = np.concatenate(part) if part else np.empty(0, np.uint32)
                cols["shingles"] = pa.LargeListArray.from_arrays(pa.array(offsets),
                                                                 pa.array(values))
            write_parquet(pa.table(cols), join_path(self.out_dir, bucket_name(k),
                                                    f"f{i:05d}.parquet"))
        write_parquet(pa.table({"rows": [len(urows)]}), marker)
        return task


def split_by_value(values: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(value, rows)`` for each distinct value of ``values``."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    starts = np.flatnonzero(np.concatenate(([True], v[1:] != v[:-1]))) if len(v) else []
    ends = list(starts[1:]) + [len(v)] if len(v) else []
    return [(int(v[s]), order[s:e]) for s, e in zip(starts, ends, strict=True)]


class JaccardVerifyStage(ProcessingStage[Task, Task]):
    """Verify one bucket of candidate pairs (``task.metadata["bucket"]``) and pass the kept ones
    to the connected components.

    Reads ``pairs_dir/{bucket_name}.parquet`` and the bucket's candidate documents
    ``docs_dir/{bucket_name}/*.parquet``. With shingles, a pair is kept when the exact Jaccard
    similarity of the two shingle sets is at least ``threshold``; without (``threshold=None``)
    every candidate pair is kept. The kept pairs go to the first components step directory
    ``cc_dir`` (see :func:`~curator_text.dedup.components.scatter_edges`) and their documents'
    ids to ``ids_dir/qQQQQQ/{bucket_name}.parquet`` by node partition. Only one bucket's shingle
    sets are in memory at a time. Sets ``task.metadata["kept"]``.
    """

    name = "JaccardVerify"

    def __init__(self, pairs_dir: str, docs_dir: str, ids_dir: str, cc_dir: str,
                 num_partitions: int, threshold: float | None) -> None:
        self.pairs_dir, self.docs_dir, self.ids_dir, self.cc_dir = (pairs_dir, docs_dir, ids_dir,
                                                                    cc_dir)
        self.num_partitions, self.threshold = num_partitions, threshold

    def process(self, task: Task) -> Task:
        name = bucket_name(int(task.metadata["bucket"]))
        marker = join_path(self.ids_dir, "_done", f"{name}.parquet")
        pairs_file = join_path(self.pairs_dir, f"{name}.parquet")
        if not done(marker) and not done(pairs_file):  # a sub-bucket no pair hashed to
            write_parquet(pa.table({"kept": [0]}), marker)
        if not done(marker):
            pairs = pq.read_table(pairs_file)
            a, b = pairs.column("a").to_numpy(), pairs.column("b").to_numpy()
            docs = _read_all(parquet_files(join_path(self.docs_dir, name)))
            key = docs.column("key").to_numpy()
            order = np.argsort(key)
            ia = order[np.searchsorted(key, a, sorter=order)]
            ib = order[np.searchsorted(key, b, sorter=order)]
            keep = np.ones(len(a), bool)
            if self.threshold is not None and "shingles" in docs.column_names:
                # chunk by chunk, without combining them: that would copy every shingle set
                chunks = docs.column("shingles").chunks
                starts = np.cumsum([0] + [len(c) for c in chunks])
                offsets = [c.offsets.to_numpy() for c in chunks]
                values = [c.values.to_numpy() for c in chunks]
                ca = np.searchsorted(starts, ia, side="right") - 1
                cb = np.searchsorted(starts, ib, side="right") - 1
                pairs = zip(ca.tolist(), (ia - starts[ca]).tolist(), cb.tolist(),
                            (ib - starts[cb]).tolist(), strict=True)
                for n, (c, x, d, y) in enumerate(pairs):
                    keep[n] = jaccard(values[c][offsets[c][x]:offsets[c][x + 1]],
                                      values[d][offsets[d][y]:offsets[d][y + 1]]
                                      ) >= self.threshold
            a, b, ia, ib = a[keep], b[keep], ia[keep], ib[keep]
            nodes, first = np.unique(np.concatenate([a, b]), return_index=True)
            ids = docs.column("id").take(pa.array(np.concatenate([ia, ib])[first]))
            for q, rows in split_by(hash_partition(nodes, self.num_partitions),
                                    self.num_partitions):
                write_parquet(pa.table({"key": nodes[rows], "id": ids.take(pa.array(rows))}),
                              join_path(self.ids_dir, f"q{q:05d}", f"{name}.parquet"))
            scatter_edges(a, b, self.cc_dir, name, self.num_partitions)
            write_parquet(pa.table({"kept": [int(keep.sum())]}), marker)
        task.metadata["kept"] = pq.read_table(marker).column("kept")[0].as_py()
        return task


class DuplicateLabelsStage(ProcessingStage[Task, Task]):
    """Attach ids to the duplicates of one node partition: reads the final components edges
    ``(root, node)`` whose node is in the partition, writes the nodes' ids into the per-file
    removal index (``by_file_dir``) and ``(root, node, id)`` to
    ``out_dir/qRRRRR/pQQQQQ.parquet`` by the root's partition."""

    name = "DuplicateLabels"

    def __init__(self, final_dir: str, ids_dir: str, out_dir: str, by_file_dir: str,
                 num_partitions: int) -> None:
        self.final_dir, self.ids_dir, self.out_dir = final_dir, ids_dir, out_dir
        self.by_file_dir, self.num_partitions = by_file_dir, num_partitions

    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        marker = join_path(self.out_dir, "_done", f"q{q:05d}.parquet")
        if done(marker):
            return task
        root, node = read_edges(self.final_dir, q, "hi")
        ids = _node_ids(self.ids_dir, q, node)
        if len(node):
            write_by_file(self.by_file_dir, ids, node >> 32, f"fuzzy_q{q:05d}")
        for r, rows in split_by(hash_partition(root, self.num_partitions), self.num_partitions):
            write_parquet(pa.table({"root": root[rows], "node": node[rows],
                                    "id": ids.take(pa.array(rows))}),
                          join_path(self.out_dir, f"q{r:05d}", f"p{q:05d}.parquet"))
        write_parquet(pa.table({"duplicates": [len(node)]}), marker)
        return task


class DuplicateIdsStage(ProcessingStage[Task, Task]):
    """Write the duplicates of one root partition as ``(id, duplicate_of)`` to
    ``out_dir/qQQQQQ.parquet`` (sorted by document key) and publish their group sizes. Sets
    ``task.metadata["duplicates"]``."""

    name = "DuplicateIds"

    def __init__(self, labels_dir: str, ids_dir: str, out_dir: str) -> None:
        self.labels_dir, self.ids_dir, self.out_dir = labels_dir, ids_dir, out_dir

    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        out = join_path(self.out_dir, f"q{q:05d}.parquet")
        if not done(out):
            t = _read_all(_partition_files(self.labels_dir, q, "q"))
            if t is None:
                table = pa.table({"id": pa.array([], pa.string()),
                                  "duplicate_of": pa.array([], pa.string())})
            else:
                t = t.take(pa.array(np.argsort(t.column("node").to_numpy(), kind="stable")))
                root = t.column("root").to_numpy()
                table = pa.table({"id": t.column("id").combine_chunks(),
                                  "duplicate_of": _node_ids(self.ids_dir, q, root)})
            write_parquet(table, out)
        kept = pq.read_table(out, columns=["duplicate_of"]).column("duplicate_of")
        task.metadata["duplicates"] = len(kept)
        self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept.to_numpy()))
        return task
