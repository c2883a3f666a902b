"""ClipSemanticDedupStage: drop clips whose embeddings nearly repeat another clip's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.tasks import VideoTask

__all__ = ["ClipSemanticDedupStage"]


@dataclass
class ClipSemanticDedupStage(ProcessingStage[VideoTask, VideoTask]):
    """In-pipeline semantic dedup of the clips of one batch of videos (for the whole run use
    ``ClipSemanticDeduplicationWorkflow`` over the written embeddings), with core's
    ``curator.dedup.find_semantic_duplicates``: among
    the clips of the ``batch_size`` videos handed over at once (set ``batch_size`` above the
    number of videos, with one worker, to dedup the whole run), a clip whose embedding has
    cosine similarity ``>= 1 - eps`` to a kept clip is filtered out
    (``clip.filtered_by = name``). Clips without embedding are kept.

    Args:
        eps: similarity tolerance (0 removes only identical directions).
        n_clusters: k-means clusters of the dedup.
        keep: which clip of a duplicate group survives (``"first"``: first clip of the first video by path).
        seed: k-means seed.
    """

    eps: float = 0.01
    n_clusters: int = 100
    keep: str = "first"
    seed: int = 42
    batch_size: int = 1024
    name: str = "ClipSemanticDedupStage"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "deduplicator"

    def num_workers(self) -> int:
        return 1  # the dedup needs every clip of the run in one worker

    def __post_init__(self) -> None:
        coerce_numbers(self, "eps")
        from curator.dedup import KEEP_STRATEGIES
        if not 0 <= self.eps < 2:
            raise ConfigError(f"{self.name}: eps must be in [0, 2), got {self.eps}")
        if self.keep not in KEEP_STRATEGIES:
            raise ConfigError(f"{self.name}: keep must be one of {KEEP_STRATEGIES}, got "
                              f"{self.keep!r}")

    def inputs(self):
        return ["data"], ["clips", "embedding"]

    def outputs(self):
        return ["data"], ["clips"]

    def process(self, task: VideoTask) -> VideoTask:
        return self.process_batch([task])[0]

    def process_batch(self, tasks: list[VideoTask]) -> list[VideoTask]:
        from curator.dedup import find_semantic_duplicates
        from curator.dedup.kmeans import normalize
        from curator.dedup.semantic import nearest_kept
        from curator.dedup.workflow import group_size_counts
        from curator.run.stats import DEDUP_GROUP_SIZES

        order = sorted(range(len(tasks)),  # deterministic: by source path
                       key=lambda i: (tasks[i].data.input_path, tasks[i].task_id))
        owners = [(i, j) for i in order for j, c in enumerate(tasks[i].data.clips)
                  if c.embedding is not None]
        if len(owners) > 1:
            emb = np.stack([tasks[i].data.clips[j].embedding for i, j in owners])
            remove = find_semantic_duplicates(emb, eps=self.eps, n_clusters=self.n_clusters,
                                              seed=self.seed, keep=self.keep)
            if remove.any():
                kept_of = nearest_kept(normalize(emb), remove)
                self.publish_counts(DEDUP_GROUP_SIZES, group_size_counts(kept_of))
            dropped = {owners[k] for k in np.flatnonzero(remove)}
            for i, task in enumerate(tasks):
                keep = [(i, j) not in dropped for j in range(len(task.data.clips))]
                task.data.filter_clips(keep, self.name)
        return tasks
