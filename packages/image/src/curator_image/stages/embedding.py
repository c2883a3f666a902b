"""ImageEmbeddingStage: CLIP image embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator_image.stages.base import ImageModelStage
from curator_image.tasks import ImageBatch

__all__ = ["ImageEmbeddingStage"]


@dataclass
class ImageEmbeddingStage(ImageModelStage):
    """Embeds each image with CLIP into an L2-normalised float32 ``embedding``.

    Parameters:
        model_dir: a local CLIP model directory in the Hugging Face format (``save_pretrained``).
        model_inference_batch_size: images per forward pass.
        num_gpus_per_worker: GPUs per worker (0: CPU); CUDA is used when one is present.
        remove_image_data: drop the decoded pixels after embedding (saves memory).
        verbose: log batch progress.
    """

    remove_image_data: bool = False
    name: str = "ImageEmbeddingStage"
    kind = "embedder"

    def inputs(self):
        return ["data"], ["image_data"]

    def outputs(self):
        return ["data"], ["embedding"]

    def load_model(self) -> Any:
        from curator_image.models.clip import ClipImageEmbedder

        embedder = ClipImageEmbedder(self.model_dir, device=self.device)
        embedder.load()
        return embedder

    def process(self, task: ImageBatch) -> ImageBatch:
        images = [img for img in task.data if img.image_data is not None]
        missing = [img for img in task.data if img.image_data is None]
        for img in missing:
            self.reject(task, "no_image_data", record={"image_id": img.image_id,
                                                       "path": img.image_path})
        embedder = self.model()
        for part in self.batches(len(images)):
            chunk = images[part]
            vectors = embedder.embed([img.image_data for img in chunk])
            for img, vec in zip(chunk, vectors, strict=True):
                img.embedding = vec
                if self.remove_image_data:
                    img.image_data = None
        return task.derive(images)  # type: ignore[return-value]
