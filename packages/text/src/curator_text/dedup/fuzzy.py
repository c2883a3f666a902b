"""FuzzyDeduplicationWorkflow: near-duplicate documents by MinHash + LSH, on CPU.

Phases (each a pipeline on the workflow's executor; every output is written atomically under
``cache_path`` and reused by a re-run, so a crashed run resumes). The driver only schedules: the
candidate pairs, the graph and the duplicate ids stay in files under the cache, read and written
by the workers one partition at a time; the driver sums a few counts per task. Every shuffle is
sort-based: a task writes one segmented file (:mod:`curator.dedup.segments`) with a segment
per reader, so the cache holds one file per task, never one per task and reader.

1. ``MinHashLSHStage`` per group of input files (about ``bytes_per_group`` of input): MinHash
   signatures over character n-grams, split into ``num_bands`` bands of ``minhashes_per_band``
   values; each band's hash goes to a hash partition.
2. ``LSHBucketsStage`` per partition: documents sharing a band hash become candidate pairs,
   hash-partitioned by their first document into pair partitions.
3. ``PairBucketsStage`` per pair partition drops repeated pairs and splits the partition into
   verification buckets of about ``docs_per_bucket`` documents; ``CandidateDocsStage`` per
   group of input files writes each bucket's candidate documents (ids and texts,
   zstd-compressed).
4. ``JaccardVerifyStage`` per bucket computes the true Jaccard similarity of the bucket's pairs
   from their shingle sets (made there, one bucket at a time), so memory is bounded by a bucket,
   not the corpus. Pairs below ``jaccard_threshold`` are dropped (``use_jaccard=True``); the
   others are the edges of the duplicate graph.
5. Connected components of that graph, on the workers: rounds of large-star / small-star steps
   over hash partitions of the documents (:func:`~curator_text.dedup.components.run_components`)
   until every group is a star around its first document in input order (the kept one). Then
   ``DuplicateLabelsStage`` and ``DuplicateIdsStage`` join the documents' ids, write the
   per-input-file removal index and publish the group sizes; the per-partition lists are copied
   (streamed) into ``output_path/duplicates/fuzzy.parquet`` (``id``, ``duplicate_of``).
6. With ``perform_removal``, the input minus the duplicates is written to
   ``output_path/deduplicated`` (matched by id, so any partitioning of the same input works).

On disk, under ``cache_path/fuzzy`` (kept after the run for a resume; delete it when done): the
band hashes (``buckets_*``, one file per group of input files, ~190 bytes per document), the
candidate pairs (``edges_*``, one file per partition), the verification work (``verify_*``:
pairs and needed rows per pair partition, the candidate documents' texts per file group, then
the ids and the components' steps), and the removal index (``by_file``, one file per
partition). Bytes and files grow linearly with the input; figures at 1M and 10M documents are
in ``benchmarks/scale.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from curator.dedup.workflow import ID_BASE_KEY, DeduplicationWorkflow
from curator.errors import ConfigError
from curator.io import atomic_write, get_fs, join_path
from curator.tasks import FileGroupTask, Task

from curator_text.dedup.components import run_components, step_dir
from curator_text.dedup.stages import (
    CandidateDocsStage,
    DuplicateIdsStage,
    DuplicateLabelsStage,
    JaccardVerifyStage,
    LSHBucketsStage,
    MinHashLSHStage,
    PairBucketsStage,
    bucket_id,
    bucket_name,
    parquet_files,
)

__all__ = ["FuzzyDeduplicationWorkflow"]


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
        num_partitions: hash partitions of the band-hash shuffle, of the candidate pairs and
            of the connected components (default: one per input file, at most twice the
            cores and 64, or one per 256 MiB of input when that is more).
        minhash_method: ``"oph"`` (one-permutation hashing, fast), ``"permutations"`` or
            ``"datatrove"`` (datatrove's SHA-1 word shingles and permutations, 64-bit values).
        word_ngrams: shingles of this many words of the simplified text instead of characters
            (datatrove's shingles; ``char_ngrams`` is then unused).
        preset: ``"fineweb"``: datatrove's FineWeb settings (``word_ngrams=5``, 14 bands x 8
            hashes, ``use_jaccard=False``, ``minhash_method="datatrove"``, ``seed=1``; see
            ``curator_text.dedup.words.FINEWEB_MINHASH``), replacing those parameters.
        NeMo Curator's ``lsh_num_output_partitions`` sets ``num_partitions``; its GPU settings
        (``use_64_bit_hash``, ``bands_per_iteration``, ``lsh_rmm_pool_size``,
        ``lsh_spill_memory_limit``) are accepted and have no effect here. NeMo always numbers
        the documents (``_curator_dedup_id``): pass ``assign_id=True`` for that.
    """

    name = "fuzzy_dedup"
    id_generator_prefix = "fuzzy"
    cache_subdir = "fuzzy"
    writes_by_file = True
    duplicates_glob = "fuzzy.parquet"
    #: candidate documents per Jaccard verification bucket (bounds one task's memory); each
    #: pair partition is split into as many buckets as it needs
    docs_per_bucket = 8_192
    #: input bytes (as stored) per map task (MinHash, candidate documents): its output is one
    #: file, read in part by every hash partition or verification bucket
    bytes_per_group = 64 * 2**20

    def __init__(self, input_path: str | Sequence[str], output_path: str, *,
                 text_field: str = "text", char_ngrams: int = 24, num_bands: int = 20,
                 minhashes_per_band: int = 13, seed: int = 42, use_jaccard: bool = True,
                 jaccard_threshold: float = 0.8, num_partitions: int | None = None,
                 minhash_method: str = "oph", use_64_bit_hash: bool = False,
                 bands_per_iteration: int | None = None,
                 lsh_num_output_partitions: int | None = None, lsh_rmm_pool_size: Any = None,
                 lsh_spill_memory_limit: Any = None, word_ngrams: int | None = None,
                 preset: str | None = None, **kwargs: Any) -> None:
        if preset is not None:
            from curator_text.dedup.words import FINEWEB_MINHASH

            if preset != "fineweb":
                raise ConfigError(f"FuzzyDeduplicationWorkflow: unknown preset {preset!r} "
                                  "(known: 'fineweb')")
            word_ngrams, num_bands = FINEWEB_MINHASH["word_ngrams"], FINEWEB_MINHASH["num_bands"]
            minhashes_per_band = FINEWEB_MINHASH["minhashes_per_band"]
            use_jaccard = FINEWEB_MINHASH["use_jaccard"]
            minhash_method, seed = FINEWEB_MINHASH["minhash_method"], FINEWEB_MINHASH["seed"]
        # NeMo's GPU settings (use_64_bit_hash, bands_per_iteration, lsh_rmm_pool_size,
        # lsh_spill_memory_limit) are accepted and need nothing here; its
        # lsh_num_output_partitions is num_partitions
        if num_partitions is None and lsh_num_output_partitions is not None:
            num_partitions = int(lsh_num_output_partitions)
        super().__init__(input_path, output_path, **kwargs)
        for pname, value in (("char_ngrams", char_ngrams), ("num_bands", num_bands),
                             ("minhashes_per_band", minhashes_per_band)):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"FuzzyDeduplicationWorkflow: {pname} must be an int >= 1, got "
                                  f"{value!r}")
        if not 0.0 <= jaccard_threshold <= 1.0:
            raise ConfigError(f"FuzzyDeduplicationWorkflow: jaccard_threshold must be in [0, 1], "
                              f"got {jaccard_threshold!r}")
        if minhash_method not in ("oph", "permutations", "datatrove"):
            raise ConfigError(f"FuzzyDeduplicationWorkflow: minhash_method must be 'oph', "
                              f"'permutations' or 'datatrove', got {minhash_method!r}")
        if minhash_method == "datatrove" and not word_ngrams:
            raise ConfigError("FuzzyDeduplicationWorkflow: minhash_method='datatrove' needs "
                              "word_ngrams (or preset='fineweb')")
        self.text_field, self.char_ngrams = text_field, char_ngrams
        self.num_bands, self.minhashes_per_band, self.seed = num_bands, minhashes_per_band, seed
        self.use_jaccard, self.jaccard_threshold = use_jaccard, jaccard_threshold
        self.num_partitions, self.minhash_method = num_partitions, minhash_method
        self.word_ngrams = word_ngrams

    def _cache(self, *parts: str) -> str:
        unit = f"w{self.word_ngrams}" if self.word_ngrams else f"n{self.char_ngrams}"
        tag = (f"{unit}_b{self.num_bands}x{self.minhashes_per_band}_s{self.seed}_"
               f"{self.minhash_method}")
        return join_path(self.cache_path, "fuzzy", tag, *parts)

    def identify(self, files: list[str]) -> int:
        parts = self.shuffle_partitions(files)
        groups = self.file_group_tasks(files)
        # the map tasks' files are named by group: their layout is part of the directory name
        layout = f"{parts}_g{len(groups)}x{self.bytes_per_group >> 20}m"
        buckets = self._cache(f"buckets_{layout}")
        self.run_stage(MinHashLSHStage(self.text_field, buckets, parts,
                                       char_ngrams=self.char_ngrams, num_bands=self.num_bands,
                                       minhashes_per_band=self.minhashes_per_band,
                                       seed=self.seed, method=self.minhash_method,
                                       word_ngrams=self.word_ngrams),
                       groups)
        edges_dir = self._cache(f"edges_{layout}")
        self.run_stage(LSHBucketsStage(buckets, edges_dir, parts), self.partition_tasks(parts))
        work = self._verify(groups, parts, edges_dir, layout)
        final = run_components(self.run_stage, self.partition_tasks, join_path(work, "cc"), parts)
        labels = join_path(work, "labels")
        self.run_stage(DuplicateLabelsStage(final, join_path(work, "ids"), labels,
                                            self.by_file_dir, parts), self.partition_tasks(parts))
        out_dir = join_path(work, "duplicates")
        out = self.run_stage(DuplicateIdsStage(labels, join_path(work, "ids"), out_dir),
                             self.partition_tasks(parts))
        self._write_duplicates(out_dir)
        return sum(int(t.metadata["duplicates"]) for t in out)

    def _verify(self, groups: list[FileGroupTask], parts: int, edges_dir: str,
                layout: str) -> str:
        """Verify the candidate pairs; returns the work directory whose ``cc/r000`` holds the
        kept pairs (the components' first step) and ``ids`` their documents' ids.

        :class:`PairBucketsStage` drops repeated pairs per pair partition and splits each into
        buckets of about :attr:`docs_per_bucket` documents; :class:`CandidateDocsStage` writes
        each bucket's documents (ids and texts) from each group of input files (``groups``), and
        :class:`JaccardVerifyStage` verifies one bucket at a time, so no process holds more
        than a bucket's shingle sets.
        """
        threshold = self.jaccard_threshold if self.use_jaccard else None
        tag = f"{layout}_d{self.docs_per_bucket}_{'j' if self.use_jaccard else 'ids'}"
        work = self._cache(f"verify_{tag}" + (f"_t{threshold:g}" if self.use_jaccard else ""))
        pairs_dir, need_dir = join_path(work, "pairs"), join_path(work, "need")
        docs_dir = join_path(work, "candidates")
        starts = [int(g.metadata["files"][0]["file_index"]) for g in groups]
        out = self.run_stage(PairBucketsStage(edges_dir, pairs_dir, need_dir,
                                              self.docs_per_bucket, starts),
                             self.partition_tasks(parts))
        self.run_stage(CandidateDocsStage(self.text_field, self.id_field, need_dir, docs_dir,
                                          self.use_jaccard), groups)
        verify = [Task(task_id=f"verify_{bucket_name(b)}", dataset_name=self.name, data=b,
                       metadata={"bucket": b})
                  for t in out for s in range(int(t.metadata["buckets"]))
                  for b in [bucket_id(int(t.metadata["partition_index"]), s)]]
        self.run_stage(JaccardVerifyStage(pairs_dir, docs_dir, join_path(work, "ids"),
                                          step_dir(join_path(work, "cc"), 0), parts, threshold,
                                          char_ngrams=self.char_ngrams,
                                          word_ngrams=self.word_ngrams),
                       verify)
        return work

    def file_group_tasks(self, files: list[str]) -> list[FileGroupTask]:
        """One task per run of consecutive input files of about :attr:`bytes_per_group` bytes
        (one file at least): the map tasks of the shuffles (MinHash, candidate documents), each
        writing one file, so the reads of the shuffles (groups x partitions, groups x buckets)
        stay few as the input grows."""
        tasks = self.file_tasks(files)
        sizes = self._file_sizes or [self.bytes_per_group // 16] * len(files)  # not listed
        groups: list[list[FileGroupTask]] = []
        held = self.bytes_per_group
        for t, size in zip(tasks, sizes, strict=True):
            if held >= self.bytes_per_group:
                groups.append([])
                held = 0
            groups[-1].append(t)
            held += size
        return [FileGroupTask(task_id=f"group_{g:05d}", dataset_name=self.name,
                              data=[t.data[0] for t in group],
                              metadata={"group_index": g, "files": [
                                  {k: v for k, v in t.metadata.items()
                                   if k in ("file_index", ID_BASE_KEY)} for t in group]})
                for g, group in enumerate(groups)]

    def _write_duplicates(self, out_dir: str) -> None:
        """Copy the per-partition duplicate lists into ``duplicates/fuzzy.parquet``, one record
        batch at a time (the driver never holds more than a batch)."""
        schema = None
        with atomic_write(join_path(self.duplicates_path, "fuzzy.parquet")) as out:
            writer = None
            for f in parquet_files(out_dir):
                fs, path = get_fs(f)
                with fs.open(path, "rb") as fh:
                    part = pq.ParquetFile(fh)
                    if not part.metadata.num_rows:
                        continue
                    if writer is None:
                        schema = part.schema_arrow
                        writer = pq.ParquetWriter(out, schema)
                    for batch in part.iter_batches(batch_size=65_536):
                        writer.write_batch(batch if batch.schema == schema
                                           else batch.cast(schema))
            if writer is None:  # no duplicates
                writer = pq.ParquetWriter(out, pa.schema([("id", pa.string()),
                                                          ("duplicate_of", pa.string())]))
            writer.close()
