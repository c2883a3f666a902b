"""FuzzyDeduplicationWorkflow: near-duplicate documents by MinHash + LSH, on CPU.

Phases (each a pipeline on the workflow's executor; every output is written atomically under
``cache_path`` and reused by a re-run, so a crashed run resumes):

1. ``MinHashLSHStage`` per input file: MinHash signatures over character n-grams, split into
   ``num_bands`` bands of ``minhashes_per_band`` values; each band's hash goes to a hash partition.
2. ``LSHBucketsStage`` per partition: documents sharing a band hash become candidate pairs.
3. The candidate pairs are hash-partitioned (by their first document) into buckets of about
   ``docs_per_bucket`` documents, written under the cache; ``CandidateDocsStage`` per input file
   writes each bucket's candidate documents (ids and shingle sets).
4. ``JaccardVerifyStage`` per bucket computes the true Jaccard similarity of the bucket's pairs,
   so memory is bounded by a bucket, not the corpus. Pairs below ``jaccard_threshold`` are dropped
   (``use_jaccard=True``); connected components of the remaining pairs are the duplicate groups.
   The first document of each group in input order is kept, the others' ids are written to
   ``output_path/duplicates/fuzzy.parquet``.
5. With ``perform_removal``, the input minus the duplicates is written to
   ``output_path/deduplicated`` (matched by id, so any partitioning of the same input works).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from curator.dedup.io import write_parquet
from curator.dedup.workflow import (
    DeduplicationWorkflow,
    done,
    group_size_counts,
    write_by_file,
)
from curator.errors import ConfigError
from curator.io import expand_paths, join_path

from curator_text.dedup.components import connected_components
from curator_text.dedup.stages import (
    CandidateDocsStage,
    JaccardVerifyStage,
    LSHBucketsStage,
    MinHashLSHStage,
)

__all__ = ["FuzzyDeduplicationWorkflow"]


def _read_dir(path: str) -> pa.Table | None:
    try:
        files = expand_paths(path, [".parquet"])
    except FileNotFoundError:
        return None
    tables = [pq.read_table(f) for f in files]
    return pa.concat_tables(tables, promote_options="default") if tables else None


class FuzzyDeduplicationWorkflow(DeduplicationWorkflow):
    """Find (and optionally remove) near-duplicate documents with MinHash LSH.

    Parameters (besides those of :class:`~curator.dedup.DeduplicationWorkflow`: input_path,
    output_path, cache_path, id_field, perform_removal, input_filetype, executor):
        text_field: the text column.
        char_ngrams: shingle length in characters (documents shorter than this are never grouped).
        num_bands, minhashes_per_band: LSH bands × rows; a pair of Jaccard similarity ``s`` is a
            candidate with probability ``1 - (1 - s**r)**b``.
        seed: seed of the hash functions.
        use_jaccard: verify candidate pairs with the exact Jaccard similarity of their shingles.
        jaccard_threshold: minimum similarity of a verified pair.
        num_partitions: hash partitions of the band-hash shuffle (default: one per input file
            up to 64, or one per 256 MiB of input when that is more).
        minhash_method: ``"oph"`` (one-permutation hashing, fast) or ``"permutations"``.
    """

    name = "fuzzy_dedup"
    cache_subdir = "fuzzy"
    writes_by_file = True
    duplicates_glob = "fuzzy.parquet"
    #: candidate documents per Jaccard verification bucket (bounds one task's memory)
    docs_per_bucket = 16_384

    def __init__(self, input_path: str | Sequence[str], output_path: str, *,
                 text_field: str = "text", char_ngrams: int = 24, num_bands: int = 20,
                 minhashes_per_band: int = 13, seed: int = 42, use_jaccard: bool = True,
                 jaccard_threshold: float = 0.8, num_partitions: int | None = None,
                 minhash_method: str = "oph", **kwargs: Any) -> None:
        super().__init__(input_path, output_path, **kwargs)
        for pname, value in (("char_ngrams", char_ngrams), ("num_bands", num_bands),
                             ("minhashes_per_band", minhashes_per_band)):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"FuzzyDeduplicationWorkflow: {pname} must be an int >= 1, got "
                                  f"{value!r}")
        if not 0.0 <= jaccard_threshold <= 1.0:
            raise ConfigError(f"FuzzyDeduplicationWorkflow: jaccard_threshold must be in [0, 1], "
                              f"got {jaccard_threshold!r}")
        if minhash_method not in ("oph", "permutations"):
            raise ConfigError(f"FuzzyDeduplicationWorkflow: minhash_method must be 'oph' or "
                              f"'permutations', got {minhash_method!r}")
        self.text_field, self.char_ngrams = text_field, char_ngrams
        self.num_bands, self.minhashes_per_band, self.seed = num_bands, minhashes_per_band, seed
        self.use_jaccard, self.jaccard_threshold = use_jaccard, jaccard_threshold
        self.num_partitions, self.minhash_method = num_partitions, minhash_method

    def _cache(self, *parts: str) -> str:
        tag = (f"n{self.char_ngrams}_b{self.num_bands}x{self.minhashes_per_band}_s{self.seed}_"
               f"{self.minhash_method}")
        return join_path(self.cache_path, "fuzzy", tag, *parts)

    def identify(self, files: list[str]) -> int:
        parts = self.shuffle_partitions(files)
        buckets = self._cache(f"buckets_{parts}")
        edges_dir = self._cache(f"edges_{parts}")
        self.run_stage(MinHashLSHStage(self.text_field, buckets, parts,
                                       char_ngrams=self.char_ngrams, num_bands=self.num_bands,
                                       minhashes_per_band=self.minhashes_per_band,
                                       seed=self.seed, method=self.minhash_method),
                       self.file_tasks(files))
        self.run_stage(LSHBucketsStage(buckets, edges_dir), self.partition_tasks(parts))
        edges = _read_dir(edges_dir)
        a = edges.column("a").to_numpy() if edges is not None else np.empty(0, np.int64)
        b = edges.column("b").to_numpy() if edges is not None else np.empty(0, np.int64)
        if len(a):
            pairs = np.unique(np.stack([a, b], axis=1), axis=0)
            a, b = pairs[:, 0], pairs[:, 1]
        del edges
        a, b, ids = self._verified(files, parts, a, b)
        nodes, roots = connected_components(a, b)
        dup = nodes != roots
        self.note_group_sizes(group_size_counts(roots[dup]))
        table = pa.table({"id": ids.take(np.flatnonzero(dup)),
                          "duplicate_of": ids.take(np.searchsorted(nodes, roots[dup]))})
        write_by_file(self.by_file_dir, table.column("id"), nodes[dup] >> 32, "fuzzy")
        self.write_duplicates(table, "fuzzy.parquet")
        return int(dup.sum())

    def _verified(self, files: list[str], parts: int, a: np.ndarray, b: np.ndarray,
                  ) -> tuple[np.ndarray, np.ndarray, pa.Array]:
        """The verified pairs ``(a, b)`` and the ids of their sorted unique nodes.

        The candidate pairs are hash-partitioned by their first document into buckets of about
        :attr:`docs_per_bucket` documents; each bucket's pairs and documents (with shingle sets)
        are written under the cache, and :class:`JaccardVerifyStage` verifies one bucket at a
        time, so no process holds more than a bucket's shingle sets.
        """
        if len(a) == 0:
            return a, b, pa.array([], pa.string())
        ndocs = len(np.unique(np.concatenate([a, b])))
        k = max(1, -(-ndocs // self.docs_per_bucket))
        tag = f"{parts}_k{k}_{'j' if self.use_jaccard else 'ids'}"
        pairs_dir, docs_dir = self._cache(f"pairs_{tag}"), self._cache(f"candidates_{tag}")
        out_dir = self._cache(f"verified_{tag}")
        with np.errstate(over="ignore"):
            mixed = a.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        bucket = ((mixed >> np.uint64(32)) % np.uint64(k)).astype(np.int64)
        used = np.unique(bucket)
        for j in used.tolist():
            path = join_path(pairs_dir, f"b{j:05d}.parquet")
            if not done(path):
                sel = bucket == j
                write_parquet(pa.table({"a": a[sel], "b": b[sel]}), path)
        # every (document, bucket) a document is needed in, grouped by input file
        keys = np.concatenate([a, b])
        need = np.unique(np.stack([keys, np.concatenate([bucket, bucket])], axis=1), axis=0)
        file_of, row_of = need[:, 0] >> 32, need[:, 0] & 0xFFFFFFFF
        tasks = []
        for task in self.file_tasks(files):
            sel = file_of == task.metadata["file_index"]
            if sel.any():
                task.metadata["rows"] = row_of[sel].tolist()
                task.metadata["buckets"] = need[sel, 1].tolist()
                tasks.append(task)
        del need, file_of, row_of, keys
        self.run_stage(CandidateDocsStage(self.text_field, self.id_field, docs_dir,
                                          self.char_ngrams, self.use_jaccard), tasks)
        del tasks
        wanted = set(used.tolist())
        verify = [t for t in self.partition_tasks(k) if t.metadata["partition_index"] in wanted]
        self.run_stage(JaccardVerifyStage(pairs_dir, docs_dir, out_dir), verify)
        res = _read_dir(out_dir)
        a, b = res.column("a").to_numpy(), res.column("b").to_numpy()
        if self.use_jaccard:
            ok = np.nan_to_num(res.column("similarity").to_numpy(), nan=-1.0)
            ok = ok >= self.jaccard_threshold
            a, b = a[ok], b[ok]
            res = res.filter(pa.array(ok))
        nodes, first = np.unique(np.concatenate([a, b]), return_index=True)
        ids = pa.chunked_array(res.column("id_a").chunks + res.column("id_b").chunks)
        return a, b, ids.take(pa.array(first)).combine_chunks() if len(nodes) else pa.array(
            [], pa.string())

