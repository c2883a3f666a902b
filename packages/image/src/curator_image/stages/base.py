"""ModelStage: bookkeeping shared by the image stages that run a model in batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from curator import ProcessingStage, Resources
from curator.errors import ConfigError

from curator_image.tasks import ImageBatch

__all__ = ["ImageModelStage"]


@dataclass
class ImageModelStage(ProcessingStage[ImageBatch, ImageBatch]):
    """Base of stages that run a model from ``model_dir`` over images in batches.

    Leaf classes set ``model_dir``, ``model_inference_batch_size``, ``num_gpus_per_worker`` and
    implement :meth:`load_model` and ``process``. The model runs on CUDA when the stage has GPU
    resources and a GPU is present, on CPU otherwise.
    """

    model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir",)  # resolved on the driver
    model_inference_batch_size: int = 32
    num_gpus_per_worker: float = 0.0
    verbose: bool = False
    modality = "image"

    def __post_init__(self) -> None:
        if not self.model_dir:
            raise ConfigError(f"{self.name}: model_dir is required (a local model directory)")
        if not isinstance(self.model_inference_batch_size, int) or \
                self.model_inference_batch_size < 1:
            raise ConfigError(f"{self.name}: model_inference_batch_size must be an int >= 1, "
                              f"got {self.model_inference_batch_size!r}")
        if self.num_gpus_per_worker:
            self.resources = Resources(cpus=1.0, gpus=self.num_gpus_per_worker)

    @property
    def device(self) -> str:
        """``"auto"`` (CUDA if present) for GPU stages, ``"cpu"`` otherwise."""
        return "auto" if self.resources.requires_gpu else "cpu"

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self._model = self.load_model()

    def load_model(self) -> Any:
        raise NotImplementedError

    def model(self) -> Any:
        """The loaded model (loads it when ``setup`` has not run, e.g. in direct calls)."""
        if getattr(self, "_model", None) is None:
            self._model = self.load_model()
        return self._model

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_model", None)
        return state

    def batches(self, n: int) -> list[slice]:
        step = self.model_inference_batch_size
        return [slice(i, min(i + step, n)) for i in range(0, n, step)]
