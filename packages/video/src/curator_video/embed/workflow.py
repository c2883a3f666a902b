"""ClipSemanticDeduplicationWorkflow: semantic dedup across every clip a run wrote."""

from __future__ import annotations

from typing import Any, ClassVar

from curator.dedup.semantic_workflow import SemanticDeduplicationWorkflow
from curator.errors import ConfigError
from curator.io import join_path

from curator_video.io.writer import EMBEDDINGS_PARQUET

__all__ = ["ClipSemanticDeduplicationWorkflow"]


class ClipSemanticDeduplicationWorkflow(SemanticDeduplicationWorkflow):
    """Core's :class:`~curator.dedup.SemanticDeduplicationWorkflow` over the clip embeddings a
    video run wrote (``ClipWriterStage`` with ``write_embeddings``:
    ``{clips_path}/embeddings_parquet/*.parquet``, columns ``id`` = clip uuid and
    ``embedding``): k-means over all clips of the run, then within each cluster one clip of
    every group with cosine similarity ``>= 1 - eps`` is kept. The duplicate clip uuids go to
    ``output_path/duplicates`` (column ``id``); with ``perform_removal`` the kept clips' rows go
    to ``output_path/deduplicated``. Resumable and executor-agnostic like the core workflow.

    Args:
        clips_path: the ``output_path`` of the run's ``ClipWriterStage``.
        output_path: where ``duplicates/`` (and ``deduplicated/``) go.
        input_path: embedding files to read instead of ``{clips_path}/embeddings_parquet``.
        **kwargs: the core workflow's parameters (``eps``, ``n_clusters``, ``keep``, ``seed``,
            ``kmeans_sample``, ``cache_path``, ``perform_removal``, ``executor``).
    """

    name = "clip_semantic_dedup"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "deduplicator"

    def __init__(self, clips_path: str = "", output_path: str = "", *,
                 input_path: str | None = None, embedding_field: str = "embedding",
                 id_field: str = "id", **kwargs: Any) -> None:
        if not (clips_path or input_path):
            raise ConfigError(f"{type(self).__name__}: give clips_path (the ClipWriterStage "
                              f"output_path) or input_path (embedding Parquet files)")
        super().__init__(input_path or join_path(clips_path, EMBEDDINGS_PARQUET), output_path,
                         embedding_field=embedding_field, id_field=id_field,
                         input_filetype="parquet", **kwargs)
