"""ImageEmbeddingStage: CLIP image embeddings."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from curator_image.stages.base import ImageModelStage
from curator_image.tasks import ImageBatch

__all__ = ["ImageEmbeddingStage"]


@dataclass
class ImageEmbeddingStage(ImageModelStage):
    """Embeds each image with CLIP into an L2-normalised float32 ``embedding``.

    Preprocessing (resize, crop, normalise) of the next batch runs on a helper thread while the
    current batch is in the model, so the GPU does not wait on the CPU work.

    Parameters:
        model_dir: a local Hugging Face ``CLIPModel`` directory (e.g. a download of
            ``openai/clip-vit-large-patch14``, or NeMo Curator's model root holding it), or an
            OpenCLIP ViT checkpoint (``open_clip_pytorch_model.bin`` or a directory with it).
        quick_gelu: OpenCLIP checkpoints only: the tower uses QuickGELU (OpenAI weights).
        model_inference_batch_size: images per forward pass.
        num_gpus_per_worker: GPUs per worker (0: CPU); CUDA is used when one is present.
        remove_image_data: drop the decoded pixels after embedding (saves memory).
        verbose: log batch progress.
    """

    remove_image_data: bool = False
    quick_gelu: bool = False
    name: str = "ImageEmbeddingStage"
    kind = "embedder"

    def inputs(self):
        return ["data"], ["image_data"]

    def outputs(self):
        return ["data"], ["embedding"]

    def load_model(self) -> Any:
        from curator_image.models.clip import ClipImageEmbedder

        embedder = ClipImageEmbedder(self.model_dir, device=self.device,
                                     quick_gelu=self.quick_gelu)
        embedder.load()
        return embedder

    def process(self, task: ImageBatch) -> ImageBatch:
        images = [img for img in task.data if img.image_data is not None]
        missing = [img for img in task.data if img.image_data is None]
        for img in missing:
            self.reject(task, "no_image_data", record={"image_id": img.image_id,
                                                       "path": img.image_path})
        embedder = self.model()
        parts = self.batches(len(images))

        def prepare(part: slice) -> Future:
            return pool.submit(embedder.preprocess, [img.image_data for img in images[part]])

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="clip-preprocess") as pool:
            pending = prepare(parts[0]) if parts else None
            for k, part in enumerate(parts):
                pixels = pending.result()
                if k + 1 < len(parts):  # prepare the next batch while this one runs
                    pending = prepare(parts[k + 1])
                chunk = images[part]
                for img, vec in zip(chunk, embedder.embed_pixels(pixels), strict=True):
                    img.embedding = vec
                    if self.remove_image_data:
                        img.image_data = None
        return task.derive(images)  # type: ignore[return-value]
