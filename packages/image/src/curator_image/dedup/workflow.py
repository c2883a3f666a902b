"""ImageSemanticDeduplicationWorkflow: embed -> write -> find duplicates -> remove -> write."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curator import Pipeline, ProcessingStage
from curator.errors import ConfigError
from curator.params import typed_init

__all__ = ["ImageSemanticDeduplicationWorkflow", "ImageDedupResult"]


@dataclass
class ImageDedupResult:
    """What the workflow did: images seen, ids removed (with reasons), files written and the
    duplicate groups found by size (``group_sizes``: size -> groups)."""

    n_images: int
    removed: dict[str, str]
    duplicates_path: str
    output_files: list[str] = field(default_factory=list)
    rejected_counts: dict[str, int] = field(default_factory=dict)
    group_sizes: dict[int, int] = field(default_factory=dict)


@typed_init  # constructor parameters convert and check as a spec's values do
@dataclass
class ImageSemanticDeduplicationWorkflow:
    """Removes exact (content hash) and semantic (CLIP embedding) duplicate images.

    Pass 1 runs ``stages`` (a reader, ``ImageEmbeddingStage`` and any filters) and writes the
    images with their embeddings to ``{work_dir}/staging`` (tar + Parquet). The duplicates are
    then found over those Parquet files with core's modality-agnostic
    ``curator.dedup.semantic.find_semantic_duplicates`` (k-means, cosine similarity within
    clusters, one image kept per group closer than ``eps``), and written to
    ``{work_dir}/duplicates.parquet``. Pass 2 reads the staged shards, removes the duplicates
    and writes the result to ``output_dir``. Image ids (WebDataset keys) must be unique.

    Parameters:
        stages: the stages producing ImageBatch tasks with embeddings.
        output_dir: where the deduplicated shards go.
        work_dir: staging and duplicate lists.
        eps, n_clusters, seed, keep: as in ``find_semantic_duplicates``.
        exact, semantic: which kinds of duplicates to remove.
        mode: the save mode of ``output_dir`` (``"ignore"``, the default, writes into it
            replacing same-named files; see :mod:`curator.output_dir`).

    The workflow manages ``{work_dir}/staging`` itself: each run first deletes what an
    earlier run staged there, so running it twice in a row works. ``output_dir`` and
    ``work_dir`` must lie outside the readers' input paths (refused before anything runs).
    """

    stages: list[ProcessingStage] = field(default_factory=list)
    output_dir: str = ""
    work_dir: str = ""
    eps: float = 0.01
    n_clusters: int = 100
    seed: int = 42
    keep: str = "first"
    exact: bool = True
    semantic: bool = True
    task_batch_size: int = 100
    mode: str = "ignore"

    def __post_init__(self) -> None:
        name = type(self).__name__
        from curator.output_dir import check_mode

        check_mode(self.mode, name)
        if not self.stages:
            raise ConfigError(f"{name}: stages is required (reader + ImageEmbeddingStage ...)")
        for param in ("output_dir", "work_dir"):
            if not getattr(self, param):
                raise ConfigError(f"{name}: {param} is required")
        from curator.dedup.semantic import check_params

        try:
            check_params(name, self.eps, self.n_clusters, self.keep)
        except ValueError as exn:
            raise ConfigError(str(exn)) from exn

    def run(self, executor: Any = None, rejected_dir: str | None = None) -> ImageDedupResult:
        from curator.io import join_path
        from curator.output_dir import check_inputs_apart, input_paths_of

        from curator_image.dedup.duplicates import find_image_duplicates, write_duplicates
        from curator_image.dedup.removal import ImageDuplicateRemovalStage
        from curator_image.io.reader import ImageReaderStage
        from curator_image.io.writer import ImageWriterStage

        name = type(self).__name__
        check_inputs_apart([(f"{name}.output_dir", self.output_dir),
                            (f"{name}.work_dir", self.work_dir)], input_paths_of(self.stages))
        staging = join_path(self.work_dir, "staging")
        rej = (lambda sub: join_path(rejected_dir, sub)) if rejected_dir else (lambda sub: None)
        # the staging directory is the workflow's own: every run replaces what the last staged,
        # and pass 2 needs every staged file, so no partial (resumed) staging is kept
        stager = ImageWriterStage(output_dir=staging, write_embeddings=True, mode="overwrite")
        stager.resume_in_output_dir = False
        first = Pipeline("image_dedup_embed", stages=[*self.stages, stager])
        res1 = first.run(executor=executor, rejected_dir=rej("embed"), raise_on_failure=False)
        parquet = [f for t in res1 for f in t.data if f.endswith(".parquet")]
        dup_path = join_path(self.work_dir, "duplicates.parquet")
        if parquet:
            report = find_image_duplicates(parquet, eps=self.eps, n_clusters=self.n_clusters,
                                           seed=self.seed, keep=self.keep, exact=self.exact,
                                           semantic=self.semantic)
        else:
            from curator_image.dedup.duplicates import DuplicateReport

            report = DuplicateReport(ids=[], reasons=[], n_images=0)
        write_duplicates(report, dup_path)
        counts = dict(res1.rejected.counts)
        files: list[str] = []
        if parquet:
            second = Pipeline("image_dedup_remove", stages=[
                ImageReaderStage(file_paths=[f for t in res1 for f in t.data
                                             if f.endswith(".tar")],
                                 task_batch_size=self.task_batch_size),
                ImageDuplicateRemovalStage(duplicates_path=dup_path),
                ImageWriterStage(output_dir=self.output_dir, mode=self.mode)])
            res2 = second.run(executor=executor, rejected_dir=rej("remove"),
                              raise_on_failure=False)
            files = [f for t in res2 for f in t.data]
            for k, v in res2.rejected.counts.items():
                counts[k] = counts.get(k, 0) + v
        return ImageDedupResult(n_images=report.n_images,
                                removed=dict(zip(report.ids, report.reasons, strict=True)),
                                duplicates_path=dup_path, output_files=sorted(files),
                                rejected_counts=counts, group_sizes=report.group_sizes)
