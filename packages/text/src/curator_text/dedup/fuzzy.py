"""FuzzyDeduplicationWorkflow: near-duplicate documents by MinHash + LSH, on CPU.

Phases (each a pipeline on the workflow's executor; every output is written atomically under
``cache_path`` and reused by a re-run, so a crashed run resumes):

1. ``MinHashLSHStage`` per input file: MinHash signatures over character n-grams, split into
   ``num_bands`` bands of ``minhashes_per_band`` values; each band's hash goes to a hash partition.
2. ``LSHBucketsStage`` per partition: documents sharing a band hash become candidate pairs.
3. ``CandidateDocsStage`` per input file: ids (and shingle sets) of the candidate documents.
4. Pairs whose true Jaccard similarity of shingle sets is below ``jaccard_threshold`` are dropped
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
from curator.dedup.workflow import DeduplicationWorkflow
from curator.io import expand_paths, join_path

from curator_text.dedup.components import connected_components, jaccard
from curator_text.dedup.stages import CandidateDocsStage, LSHBucketsStage, MinHashLSHStage

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
        num_partitions: hash partitions of the band-hash shuffle (default: input files, ≤ 64).
        minhash_method: ``"oph"`` (one-permutation hashing, fast) or ``"permutations"``.
    """

    name = "fuzzy_dedup"

    def __init__(self, input_path: str | Sequence[str], output_path: str, *,
                 text_field: str = "text", char_ngrams: int = 24, num_bands: int = 20,
                 minhashes_per_band: int = 13, seed: int = 42, use_jaccard: bool = True,
                 jaccard_threshold: float = 0.8, num_partitions: int | None = None,
                 minhash_method: str = "oph", **kwargs: Any) -> None:
        super().__init__(input_path, output_path, **kwargs)
        for pname, value in (("char_ngrams", char_ngrams), ("num_bands", num_bands),
                             ("minhashes_per_band", minhashes_per_band)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"FuzzyDeduplicationWorkflow: {pname} must be an int >= 1, got "
                                 f"{value!r}")
        if not 0.0 <= jaccard_threshold <= 1.0:
            raise ValueError(f"FuzzyDeduplicationWorkflow: jaccard_threshold must be in [0, 1], "
                             f"got {jaccard_threshold!r}")
        if minhash_method not in ("oph", "permutations"):
            raise ValueError(f"FuzzyDeduplicationWorkflow: minhash_method must be 'oph' or "
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
        parts = self.num_partitions or max(1, min(64, len(files)))
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
        docs = self._candidates(files, np.unique(np.concatenate([a, b])))
        if self.use_jaccard and len(a):
            ok = self._verify(a, b, docs)
            a, b = a[ok], b[ok]
        nodes, roots = connected_components(a, b)
        dup = nodes != roots
        ids = self._ids(docs, nodes)
        table = pa.table({"id": ids.take(np.flatnonzero(dup)),
                          "duplicate_of": ids.take(np.searchsorted(nodes, roots[dup]))})
        self.write_duplicates(table, "fuzzy.parquet")
        return int(dup.sum())

    def _candidates(self, files: list[str], keys: np.ndarray) -> pa.Table | None:
        out_dir = self._cache("candidates")
        tasks = []
        file_of, row_of = keys >> 32, keys & 0xFFFFFFFF
        for task in self.file_tasks(files):
            rows = row_of[file_of == task.metadata["file_index"]]
            if len(rows):
                task.metadata["rows"] = rows.tolist()
                tasks.append(task)
        self.run_stage(CandidateDocsStage(self.text_field, self.id_field, out_dir,
                                          self.char_ngrams, self.use_jaccard), tasks)
        if not tasks:
            return None
        names = [join_path(out_dir, f"f{t.metadata['file_index']:05d}.parquet") for t in tasks]
        return pa.concat_tables([pq.read_table(n) for n in names], promote_options="default")

    def _verify(self, a: np.ndarray, b: np.ndarray, docs: pa.Table) -> np.ndarray:
        key = docs.column("key").to_numpy()
        order = np.argsort(key)
        col = docs.column("shingles").combine_chunks()
        offsets = col.offsets.to_numpy()
        values = col.values.to_numpy()
        sets = [values[offsets[j]:offsets[j + 1]] for j in range(len(key))]
        ia = order[np.searchsorted(key, a, sorter=order)]
        ib = order[np.searchsorted(key, b, sorter=order)]
        return np.fromiter((jaccard(sets[x], sets[y]) >= self.jaccard_threshold
                            for x, y in zip(ia.tolist(), ib.tolist(), strict=False)), dtype=bool, count=len(a))

    @staticmethod
    def _ids(docs: pa.Table | None, nodes: np.ndarray) -> pa.Array:
        if docs is None or len(nodes) == 0:
            return pa.array([], pa.string())
        key = docs.column("key").to_numpy()
        order = np.argsort(key)
        return docs.column("id").take(order[np.searchsorted(key, nodes, sorter=order)])
