"""The stages of the fuzzy deduplication workflow (each writes atomically and skips finished work).

Documents are keyed ``file_index << 32 | row`` (their position in the sorted input), so the first
document of a group in input order has the smallest key. Every stage works on one input file, a
group of input files, one hash partition or one verification bucket; what it passes on goes
through files under the cache, never through the driver (which only sums the few counts each
task returns in its metadata). A task writes one segmented file
(:mod:`curator.dedup.segments`) with a segment per reader, so the files on disk grow linearly
with the input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from curator.dedup.io import read_table, write_parquet
from curator.dedup.memory import releases_memory
from curator.dedup.segments import find_segments, read_segment, segment_files, write_segments
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
    unique_pairs,
)
from curator_text.dedup.minhash import band_hashes, minhash_signatures, shingle_set_table

__all__ = ["MinHashLSHStage", "LSHBucketsStage", "PairBucketsStage", "CandidateDocsStage",
           "JaccardVerifyStage", "DuplicateLabelsStage", "DuplicateIdsStage", "doc_key",
           "bucket_id", "bucket_name", "parquet_files", "bucket_pairs", "group_files",
           "group_of"]


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


def _node_ids(ids_dir: str, q: int, keys: np.ndarray) -> pa.Array:
    """The ids of document ``keys`` (all in node partition ``q``): segment ``q`` of the
    segmented files in ``ids_dir``."""
    t = read_segment(segment_files(ids_dir), q)
    if t is None:
        if len(keys):
            raise RuntimeError(f"fuzzy dedup: no document ids in {ids_dir} (partition {q}) for "
                               f"{len(keys)} grouped document(s); the cache is incomplete, "
                               f"delete it and re-run")
        return pa.array([], pa.string())
    known = t.column("key").to_numpy()
    order = np.argsort(known, kind="stable")
    at = order[np.minimum(np.searchsorted(known, keys, sorter=order), len(known) - 1)]
    if len(keys) and not (known[at] == keys).all():
        raise RuntimeError(f"fuzzy dedup: a grouped document has no id in {ids_dir} (partition "
                           f"{q}); the cache is incomplete, delete it and re-run")
    return t.column("id").take(pa.array(at)).combine_chunks()


def group_files(task: FileGroupTask) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
    """A file-group task's index and ``(path, file metadata)`` of each of its input files
    (the workflow's group tasks: ``metadata["group_index"]`` and ``["files"]``); a one-file
    task (``metadata["file_index"]``) is a group of one, numbered by its file."""
    files = task.metadata.get("files")
    if files is None:
        return int(task.metadata["file_index"]), [(task.data[0], dict(task.metadata))]
    return int(task.metadata["group_index"]), list(zip(task.data, files, strict=True))


def group_of(group_starts: list[int] | None, file_index: np.ndarray) -> np.ndarray:
    """The group of each input file index, groups being runs of consecutive files that start at
    ``group_starts`` (``None``: one group per file)."""
    if group_starts is None:
        return np.asarray(file_index, dtype=np.int64)
    return np.searchsorted(np.asarray(group_starts, np.int64), file_index, side="right") - 1


class MinHashLSHStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """MinHash the documents of a group of input files (:func:`group_files`) and write their
    LSH band hashes, segmented by hash partition, to ``cache_dir/gGGGGG.arrow`` (one file per
    group: a hash partition reads one segment per group, not one per file).

    Documents shorter than ``char_ngrams`` characters get no band hashes (never grouped).
    ``rows_per_batch`` documents are hashed together (their temporary arrays, ~0.2 MB a
    document, are what a task holds besides its band hashes).
    """

    name = "MinHashLSH"

    def __init__(self, text_field: str, cache_dir: str, num_partitions: int, *, char_ngrams: int,
                 num_bands: int, minhashes_per_band: int, seed: int, method: str = "oph",
                 rows_per_batch: int = 128, word_ngrams: int | None = None) -> None:
        self.text_field, self.cache_dir, self.num_partitions = text_field, cache_dir, num_partitions
        self.word_ngrams = word_ngrams
        self.char_ngrams, self.num_bands, self.minhashes_per_band = (char_ngrams, num_bands,
                                                                     minhashes_per_band)
        self.seed, self.method, self.rows_per_batch = seed, method, rows_per_batch

    @releases_memory
    def process(self, task: FileGroupTask) -> FileGroupTask:
        g, files = group_files(task)
        out = join_path(self.cache_dir, f"g{g:05d}.arrow")
        if done(out):
            return task
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for path, meta in files:
            parts += self._file(task, path, int(meta["file_index"]))
        keys = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.int64)
        bands = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int16)
        hashes = np.concatenate([p[2] for p in parts]) if parts else np.empty(0, np.uint64)
        write_segments(pa.table({"band": bands, "hash": hashes, "key": keys}),
                       (hashes % np.uint64(self.num_partitions)).astype(np.int64), out)
        return task

    def _file(self, task: FileGroupTask, path: str,
              i: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(keys, bands, hashes)`` of input file ``i``, batch by batch."""
        table = read_table(path, [self.text_field], on_bad=lambda line, n, err: self.reject(
            task, "malformed JSON line", record={"line": line, "line_number": n}, error=err,
            source=path))
        column = table.column(self.text_field)  # made Python strings one batch at a time
        parts = []
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
        return parts


def _read_band_hashes(files: list[str], p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``band``, ``hash`` and ``key`` columns of segment ``p`` of ``files`` as NumPy
    arrays, filled file by file (no concatenated Arrow table beside them)."""
    found = find_segments(files, p)
    total = sum(s.num_rows for s in found)
    band, h = np.empty(total, np.int16), np.empty(total, np.uint64)
    key = np.empty(total, np.int64)
    at = 0
    for seg in found:
        t = seg.read(["band", "hash", "key"])
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
    to ``edges_dir/pPPPPP.arrow`` segmented by the pair partition of the first key (one of
    ``num_partitions``), so every copy of a pair lands in the same one. The partition's rows
    are held once as NumPy arrays (18 bytes a row: ~100 MB for the ~5M rows a default
    partition gets) and sorted one band at a time. Sets ``task.metadata["pairs"]``."""

    name = "LSHBuckets"

    def __init__(self, cache_dir: str, edges_dir: str, num_partitions: int = 1) -> None:
        self.cache_dir, self.edges_dir, self.num_partitions = cache_dir, edges_dir, num_partitions

    @releases_memory
    def process(self, task: Task) -> Task:
        p = int(task.metadata["partition_index"])
        marker = join_path(self.edges_dir, "_done", f"p{p:05d}.parquet")
        if not done(marker):
            band, h, key = _read_band_hashes(segment_files(self.cache_dir), p)
            # band by band (documents pair only within a band): the sort's temporaries are for
            # one band's rows, so a task holds little more than the partition's 18 bytes a row
            found = [bucket_pairs(h[rows], key[rows])
                     for rows in (np.flatnonzero(band == v) for v in np.unique(band))]
            del band, h, key
            a, b = unique_pairs(np.concatenate([x for x, _ in found] or [np.empty(0, np.int64)]),
                                np.concatenate([y for _, y in found] or [np.empty(0, np.int64)]))
            del found
            write_segments(pa.table({"a": a, "b": b}), hash_partition(a, self.num_partitions),
                           join_path(self.edges_dir, f"p{p:05d}.arrow"))
            write_parquet(pa.table({"pairs": [len(a)]}), marker)
        task.metadata["pairs"] = read_table(marker).column("pairs")[0].as_py()
        return task


class PairBucketsStage(ProcessingStage[Task, Task]):
    """Drop the repeated candidate pairs of one pair partition and split it into verification
    buckets of about ``docs_per_bucket`` documents (by a second hash of the first document).

    Writes the pairs to ``pairs_dir/qQQQQQ.arrow`` segmented by sub-bucket and the documents
    each bucket needs to ``need_dir/qQQQQQ.arrow`` segmented by the group of input files that
    holds them (:func:`group_of` with ``group_starts``; columns ``key``, ``bucket``). Sets
    ``task.metadata["buckets"]`` (their number) and ``["pairs"]``.
    """

    name = "PairBuckets"

    def __init__(self, edges_dir: str, pairs_dir: str, need_dir: str, docs_per_bucket: int,
                 group_starts: list[int] | None = None) -> None:
        self.edges_dir, self.pairs_dir, self.need_dir = edges_dir, pairs_dir, need_dir
        self.docs_per_bucket, self.group_starts = docs_per_bucket, group_starts

    @releases_memory
    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        marker = join_path(self.pairs_dir, "_done", f"q{q:05d}.parquet")
        if not done(marker):
            t = read_segment(segment_files(self.edges_dir), q)
            a, b = ((t.column("a").to_numpy(), t.column("b").to_numpy()) if t is not None
                    else (np.empty(0, np.int64), np.empty(0, np.int64)))
            del t
            a, b = unique_pairs(a, b)
            keys = np.concatenate([a, b])
            ndocs = len(np.unique(keys))
            n = min(-(-ndocs // self.docs_per_bucket), 1 << _SUB_BITS)
            sub = hash_partition(a, n, seed=1)
            write_segments(pa.table({"a": a, "b": b}), sub,
                           join_path(self.pairs_dir, f"q{q:05d}.arrow"))
            bucket = (np.int64(q) << np.int64(_SUB_BITS)) | sub
            need_key, need_bucket = unique_pairs(keys, np.concatenate([bucket, bucket]))
            write_segments(pa.table({"key": need_key, "bucket": need_bucket}),
                           group_of(self.group_starts, need_key >> 32),
                           join_path(self.need_dir, f"q{q:05d}.arrow"))
            write_parquet(pa.table({"buckets": [n], "pairs": [len(a)]}), marker)
        counts = read_table(marker).to_pylist()[0]
        task.metadata["buckets"], task.metadata["pairs"] = counts["buckets"], counts["pairs"]
        return task


class CandidateDocsStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Gather the candidate documents of a group of input files (:func:`group_files`): their
    key, id and (for Jaccard) text, one row per verification bucket that needs the document.

    The documents to read and their buckets are the group's segment of the files in
    ``need_dir`` (written by :class:`PairBucketsStage` with the same groups). The rows go to
    ``out_dir/gGGGGG-KKK.arrow`` segmented by bucket, a new part each time :attr:`part_bytes`
    are held (so memory is bounded whatever the group's size); a marker under ``out_dir/_done``
    written last makes a re-run skip the group.
    """

    name = "CandidateDocs"
    #: rows held (Arrow bytes) before they are written as a part
    part_bytes = 64 * 2**20

    def __init__(self, text_field: str, id_field: str, need_dir: str, out_dir: str,
                 with_text: bool) -> None:
        self.text_field, self.id_field, self.need_dir = text_field, id_field, need_dir
        self.out_dir, self.with_text = out_dir, with_text

    @releases_memory
    def process(self, task: FileGroupTask) -> FileGroupTask:
        g, files = group_files(task)
        marker = join_path(self.out_dir, "_done", f"g{g:05d}.parquet")
        if done(marker):
            return task
        need = read_segment(segment_files(self.need_dir), g)
        keys = need.column("key").to_numpy() if need is not None else np.empty(0, np.int64)
        all_buckets = (need.column("bucket").to_numpy() if need is not None
                       else np.empty(0, np.int64))
        del need
        held: list[tuple[pa.Table, np.ndarray]] = []
        nbytes, parts, rows_out = 0, 0, 0
        for path, meta in files:
            one = _file_task(path, meta)
            i = int(meta["file_index"])
            mine = (keys >> 32) == i
            if not mine.any():
                continue
            rows = keys[mine] & 0xFFFFFFFF
            buckets = all_buckets[mine]
            urows, inv = np.unique(rows, return_inverse=True)
            cols = [*id_columns(one, self.id_field)]
            if self.with_text or not cols:
                cols.append(self.text_field)
            table = read_table(path, cols).take(urows)
            take = pa.array(inv)
            out = {"key": doc_key(i, rows), "id": task_ids(one, table, self.id_field,
                                                           urows).take(take)}
            if self.with_text:
                out["text"] = table.column(self.text_field).take(take)
            del table
            held.append((pa.table(out), buckets))
            rows_out += len(rows)
            nbytes += held[-1][0].nbytes
            if nbytes >= self.part_bytes:
                self._write(held, g, parts)
                held, nbytes, parts = [], 0, parts + 1
        if held or not parts:
            self._write(held, g, parts)
        write_parquet(pa.table({"rows": [rows_out]}), marker)
        return task

    def _write(self, held: list[tuple[pa.Table, np.ndarray]], g: int, part: int) -> None:
        path = join_path(self.out_dir, f"g{g:05d}-{part:03d}.arrow")
        if not held:
            write_segments(pa.table({"key": pa.array([], pa.int64())}), np.empty(0), path)
            return
        table = pa.concat_tables([t for t, _ in held], promote_options="default")
        write_segments(table, np.concatenate([b for _, b in held]), path)


def _file_task(path: str, meta: dict[str, Any]) -> FileGroupTask:
    """The one-file task of ``path`` (its index and id base), for :func:`task_ids`."""
    return FileGroupTask(task_id=f"file_{int(meta['file_index']):05d}", dataset_name="fuzzy",
                         data=[path], metadata=dict(meta))


class JaccardVerifyStage(ProcessingStage[Task, Task]):
    """Verify one bucket of candidate pairs (``task.metadata["bucket"]``) and pass the kept ones
    to the connected components.

    Reads the bucket's pairs (its segment of ``pairs_dir/qQQQQQ.arrow``) and candidate
    documents (its segment of the files in ``docs_dir``). With a ``threshold``, a pair is kept
    when the exact Jaccard similarity of the two documents' shingle sets (computed here, one
    bucket at a time) is at least ``threshold``; without (``None``) every candidate pair is
    kept. The kept pairs go to the first components step directory ``cc_dir`` (see
    :func:`~curator_text.dedup.components.scatter_edges`) and their documents' ids to
    ``ids_dir/{bucket_name}.arrow`` segmented by node partition. Sets
    ``task.metadata["kept"]``.
    """

    name = "JaccardVerify"

    def __init__(self, pairs_dir: str, docs_dir: str, ids_dir: str, cc_dir: str,
                 num_partitions: int, threshold: float | None, *, char_ngrams: int = 24,
                 word_ngrams: int | None = None) -> None:
        self.pairs_dir, self.docs_dir, self.ids_dir, self.cc_dir = (pairs_dir, docs_dir, ids_dir,
                                                                    cc_dir)
        self.num_partitions, self.threshold = num_partitions, threshold
        self.char_ngrams, self.word_ngrams = char_ngrams, word_ngrams

    @releases_memory
    def process(self, task: Task) -> Task:
        bucket = int(task.metadata["bucket"])
        name = bucket_name(bucket)
        marker = join_path(self.ids_dir, "_done", f"{name}.parquet")
        if not done(marker):
            pairs = read_segment([join_path(self.pairs_dir, f"q{bucket >> _SUB_BITS:05d}.arrow")],
                                 bucket & ((1 << _SUB_BITS) - 1))
            if pairs is None:  # a sub-bucket no pair hashed to
                write_parquet(pa.table({"kept": [0]}), marker)
            else:
                self._verify(pairs, name, bucket, marker)
        task.metadata["kept"] = read_table(marker).column("kept")[0].as_py()
        return task

    def _verify(self, pairs: pa.Table, name: str, bucket: int, marker: str) -> None:
        a, b = pairs.column("a").to_numpy(), pairs.column("b").to_numpy()
        docs = read_segment(segment_files(self.docs_dir), bucket)
        if docs is None:
            raise RuntimeError(f"fuzzy dedup: no candidate documents for bucket {name} in "
                               f"{self.docs_dir}; the cache is incomplete, delete it and re-run")
        key = docs.column("key").to_numpy()
        order = np.argsort(key)
        ia = order[np.searchsorted(key, a, sorter=order)]
        ib = order[np.searchsorted(key, b, sorter=order)]
        keep = np.ones(len(a), bool)
        if self.threshold is not None and "text" in docs.column_names:
            # made 512 texts at a time (only those are Python strings at once) and kept in
            # those chunks: no concatenated copy of every set beside them
            sets = [shingle_set_table(_texts(docs.slice(s, 512), "text"), self.char_ngrams,
                                      self.word_ngrams) for s in range(0, docs.num_rows, 512)]
            docs = docs.drop_columns(["text"])
            values = [v for v, _ in sets]
            at = [o.tolist() for _, o in sets]
            del sets
            for n, (x, y) in enumerate(zip(ia.tolist(), ib.tolist(), strict=True)):
                cx, x = divmod(x, 512)
                cy, y = divmod(y, 512)
                keep[n] = jaccard(values[cx][at[cx][x]:at[cx][x + 1]],
                                  values[cy][at[cy][y]:at[cy][y + 1]]) >= self.threshold
            del values, at
        a, b, ia, ib = a[keep], b[keep], ia[keep], ib[keep]
        nodes, first = np.unique(np.concatenate([a, b]), return_index=True)
        ids = docs.column("id").take(pa.array(np.concatenate([ia, ib])[first]))
        write_segments(pa.table({"key": nodes, "id": ids}),
                       hash_partition(nodes, self.num_partitions),
                       join_path(self.ids_dir, f"{name}.arrow"))
        scatter_edges(a, b, self.cc_dir, name, self.num_partitions)
        write_parquet(pa.table({"kept": [int(keep.sum())]}), marker)

class DuplicateLabelsStage(ProcessingStage[Task, Task]):
    """Attach ids to the duplicates of one node partition: reads the final components edges
    ``(root, node)`` whose node is in the partition, writes the nodes' ids into the per-file
    removal index (``by_file_dir``) and ``(root, node, id)`` to ``out_dir/qQQQQQ.arrow``
    segmented by the root's partition."""

    name = "DuplicateLabels"

    def __init__(self, final_dir: str, ids_dir: str, out_dir: str, by_file_dir: str,
                 num_partitions: int) -> None:
        self.final_dir, self.ids_dir, self.out_dir = final_dir, ids_dir, out_dir
        self.by_file_dir, self.num_partitions = by_file_dir, num_partitions

    @releases_memory
    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        marker = join_path(self.out_dir, "_done", f"q{q:05d}.parquet")
        if done(marker):
            return task
        root, node = read_edges(self.final_dir, q, "hi")
        ids = _node_ids(self.ids_dir, q, node)
        write_by_file(self.by_file_dir, ids, node >> 32, f"fuzzy_q{q:05d}")
        write_segments(pa.table({"root": root, "node": node, "id": ids}),
                       hash_partition(root, self.num_partitions),
                       join_path(self.out_dir, f"q{q:05d}.arrow"))
        write_parquet(pa.table({"duplicates": [len(node)]}), marker)
        return task


class DuplicateIdsStage(ProcessingStage[Task, Task]):
    """Write the duplicates of one root partition as ``(id, duplicate_of)`` to
    ``out_dir/qQQQQQ.parquet`` (sorted by document key) and publish their group sizes. Sets
    ``task.metadata["duplicates"]``."""

    name = "DuplicateIds"

    def __init__(self, labels_dir: str, ids_dir: str, out_dir: str) -> None:
        self.labels_dir, self.ids_dir, self.out_dir = labels_dir, ids_dir, out_dir

    @releases_memory
    def process(self, task: Task) -> Task:
        q = int(task.metadata["partition_index"])
        out = join_path(self.out_dir, f"q{q:05d}.parquet")
        if not done(out):
            t = read_segment(segment_files(self.labels_dir), q)
            if t is None:
                table = pa.table({"id": pa.array([], pa.string()),
                                  "duplicate_of": pa.array([], pa.string())})
            else:
                t = t.take(pa.array(np.argsort(t.column("node").to_numpy(), kind="stable")))
                root = t.column("root").to_numpy()
                table = pa.table({"id": t.column("id").combine_chunks(),
                                  "duplicate_of": _node_ids(self.ids_dir, q, root)})
            write_parquet(table, out)
        kept = read_table(out, ["duplicate_of"]).column("duplicate_of")
        task.metadata["duplicates"] = len(kept)
        self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept.to_numpy()))
        return task
