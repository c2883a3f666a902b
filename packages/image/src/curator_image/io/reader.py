"""ImageReaderStage: WebDataset tar shards -> ImageBatch tasks."""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import CompositeStage, EmptyTask, FileGroupTask, ProcessingStage, Resources, stable_id
from curator.errors import ConfigError
from curator.stages.file_partitioning import FilePartitioningStage

from curator_image.io.decode import (
    DEFAULT_MAX_PIXELS,
    IMAGE_EXTENSIONS,
    ImageTooLarge,
    decode_image,
)
from curator_image.tasks import ImageBatch, ImageObject

__all__ = ["ImageReaderStage", "WebDatasetShardPartitionStage", "WebDatasetReaderStage"]


@dataclass
class WebDatasetShardPartitionStage(FilePartitioningStage):
    """Lists WebDataset ``.tar`` shards (local or fsspec URLs) into one task per
    ``files_per_partition`` shards, in sorted order, with ids derived from the shard paths. A
    shard bigger than the block size (16 MiB) is split between samples into byte ranges
    (metadata ``byte_range``), one task each, so memory does not grow with the shard."""

    files_per_partition: int | None = 1
    default_block_size: ClassVar[int | None] = 16 * 2**20  # compressed images: ~10x decoded
    file_extensions: list[str] | None = field(default_factory=lambda: [".tar"])
    name: str = "WebDatasetShardPartitionStage"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))
    modality = "image"

    def task_id_for(self, group: list[str]) -> str:
        return f"{_stem(group[0])}_{stable_id(*group, length=8)}"

    def splittable(self, path: str) -> bool:
        return path.lower().endswith(".tar")

    def blocks(self, path: str, size: int, block_size: int) -> list[dict]:
        from curator_image.io.tar_iter import sample_blocks

        return [{"byte_range": r} for r in sample_blocks(path, size, block_size)]

    def dataset_name_for(self, group: list[str]) -> str:
        return _stem(group[0])


def _stem(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".tar")


@dataclass
class WebDatasetReaderStage(ProcessingStage[FileGroupTask, ImageBatch]):
    """Reads the shards of a FileGroupTask into ImageBatch tasks of ``task_batch_size`` images.

    Images decode on ``num_threads`` threads; corrupt, truncated, unsafe-path and oversized
    members go to the rejected sink with their key and error, and the rest of the shard is read.
    """

    task_batch_size: int = 100
    num_threads: int = 8
    resize: int | tuple[int, int] | list[int] | None = None
    max_image_pixels: int = DEFAULT_MAX_PIXELS
    keep_raw: bool = True
    name: str = "WebDatasetReaderStage"
    modality = "image"
    kind = "reader"

    def __post_init__(self) -> None:
        for param in ("task_batch_size", "num_threads", "max_image_pixels"):
            value = getattr(self, param)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{self.name}: {param} must be an int >= 1, got {value!r}")
        if isinstance(self.resize, int):
            self.resize = (self.resize, self.resize)
        elif self.resize is not None:
            if len(self.resize) != 2 or min(self.resize) < 1:
                raise ConfigError(f"{self.name}: resize must be an int or (width, height)")
            self.resize = (int(self.resize[0]), int(self.resize[1]))

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], ["image_id", "image_path", "image_data", "caption", "metadata"]

    def process(self, task: FileGroupTask) -> list[ImageBatch]:
        from curator_image.io.tar_iter import TarProblem, iter_tar_samples

        if isinstance(task, EmptyTask):
            raise ConfigError(
                f"{self.name}: no shards to read: the reader is the pipeline's first stage and "
                f"was given no file_paths. Pass ImageReaderStage(file_paths=<dir, glob or list "
                f"of .tar>), or put FilePartitioningStage(file_paths=..., file_extensions="
                f"['.tar']) before it (NeMo Curator's image tutorial does)")
        from curator.heap import keep_big_blocks_mapped, trim_heap

        keep_big_blocks_mapped()
        samples: list[tuple[str, Any]] = []
        for path in task.data:
            for item in iter_tar_samples(path, task.metadata.get("byte_range")):
                if isinstance(item, TarProblem):
                    self.reject(task, item.reason, record={"key": item.key, "path": path},
                                error=item.error, source=path)
                else:
                    samples.append((path, item))
        with ThreadPoolExecutor(max(1, min(self.num_threads, len(samples) or 1))) as pool:
            decoded = list(pool.map(lambda s: self._decode(task, *s), samples))
        trim_heap()  # the decoding threads' arenas keep what they freed until trimmed
        images = [img for img in decoded if img is not None]
        size = self.task_batch_size
        return [task.derive(images[i:i + size], suffix=i // size, cls=ImageBatch)
                for i in range(0, len(images), size)]

    def _decode(self, task: FileGroupTask, path: str, sample: Any) -> ImageObject | None:
        ext = next((e for e in IMAGE_EXTENSIONS if e in sample.files), None)
        rec = {"key": sample.key, "path": path}
        if ext is None:
            self.reject(task, "no_image", record=rec, source=path,
                        error=f"sample has no image member (found {sorted(sample.files)})")
            return None
        raw = sample.files[ext]
        try:
            array = decode_image(raw, max_pixels=self.max_image_pixels, resize=self.resize)
        except Exception as exn:
            big = isinstance(exn, ImageTooLarge) or "DecompressionBomb" in type(exn).__name__
            reason = "oversized_image" if big else "corrupt_image"
            self.reject(task, reason, record=rec, error=exn, source=path)
            return None
        meta: dict[str, Any] = {}
        if "json" in sample.files:
            try:
                meta = json.loads(sample.files["json"])
            except ValueError:
                meta = {"_raw_json": sample.files["json"].decode("utf-8", "replace")}
        caption = sample.files["txt"].decode("utf-8", "replace") if "txt" in sample.files else None
        embedding = None
        if "npy" in sample.files:
            try:
                embedding = np.load(io.BytesIO(sample.files["npy"]), allow_pickle=False)
            except Exception as exn:
                self.reject(task, "corrupt_embedding", record=rec, error=exn, source=path)
                return None
        image_id = meta.get("image_id") if isinstance(meta.get("image_id"), str) else sample.key
        return ImageObject(image_id=image_id, image_path=path, image_data=array,
                           caption=caption, metadata=meta, embedding=embedding,
                           aesthetic_score=meta.get("aesthetic_score"),
                           nsfw_score=meta.get("nsfw_score"),
                           raw=raw if self.keep_raw else None, image_ext=ext)


@dataclass
class ImageReaderStage(CompositeStage[EmptyTask, ImageBatch]):
    """Reads images from WebDataset ``.tar`` shards (local paths or fsspec URLs).

    Parameters:
        file_paths: a directory, glob or list of ``.tar`` shards; ``None`` (NeMo Curator's
            reader) reads the FileGroupTasks an upstream stage (``FilePartitioningStage``)
            produces; as the first stage without ``file_paths`` the run stops with an error
            saying so (there is nothing to read).
        task_batch_size: images per output ImageBatch.
        num_threads: decoding threads per worker.
        num_gpus_per_worker: accepted for NeMo Curator compatibility (decoding runs on CPU).
        resize: optional ``(width, height)`` or square size to resize every image to.
        max_image_pixels: images with more pixels are rejected (decompression bombs).
        files_per_partition: shards per source task.
        verbose: accepted for NeMo Curator compatibility (the run summary counts what was read
            and rejected).
    """

    file_paths: str | list[str] | None = None
    task_batch_size: int = 100
    num_threads: int = 8
    num_gpus_per_worker: float = 0.0
    resize: int | tuple[int, int] | list[int] | None = None
    max_image_pixels: int = DEFAULT_MAX_PIXELS
    files_per_partition: int = 1
    verbose: bool = False
    name: str = "ImageReaderStage"
    modality = "image"
    kind = "reader"

    def __post_init__(self) -> None:
        self.decompose()  # validates parameters before any data is read

    def decompose(self) -> list[ProcessingStage]:
        reader = WebDatasetReaderStage(task_batch_size=self.task_batch_size,
                                       num_threads=self.num_threads, resize=self.resize,
                                       max_image_pixels=self.max_image_pixels,
                                       name=f"{self.name}.read")
        if self.file_paths is None:
            return [reader]
        return [WebDatasetShardPartitionStage(file_paths=self.file_paths,
                                              files_per_partition=self.files_per_partition,
                                              name=f"{self.name}.partition"), reader]

