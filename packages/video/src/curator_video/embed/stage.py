"""ClipEmbeddingStage: one embedding per clip."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator import ProcessingStage
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_video.embed.embedders import ClipEmbedder, FrameMeanClipEmbedder
from curator_video.tasks import VideoTask

__all__ = ["ClipEmbeddingStage"]


@dataclass
class ClipEmbeddingStage(ProcessingStage[VideoTask, VideoTask]):
    """Embeds every clip from its extracted frames into ``clip.embedding`` (float32,
    L2-normalised). By default the mean of the frames' CLIP embeddings (image package); pass
    ``embedder`` (a ``ClipEmbedder``) for a video-native model.

    Args:
        model_dir: local CLIP model directory (used when ``embedder`` is ``None``).
        embedder: a ``ClipEmbedder`` instance instead of the frame-mean CLIP embedder.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (set ``resources`` to ask for a GPU).
        drop_frames: free ``clip.frames`` after embedding (saves memory downstream).
    """

    model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir",)  # resolved on the driver
    embedder: Any = None
    device: str = "cpu"
    drop_frames: bool = False
    name: str = "ClipEmbeddingStage"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "embedder"
    _impl: ClipEmbedder | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.embedder is None:
            if not self.model_dir:
                raise ConfigError(f"{self.name}: give model_dir (a local CLIP model) or embedder")
            FrameMeanClipEmbedder(self.model_dir, self.device)  # cheap, no model load
        elif not isinstance(self.embedder, ClipEmbedder):
            raise TypeError(f"{self.name}: embedder must be a ClipEmbedder, got "
                            f"{type(self.embedder).__name__}")

    def inputs(self):
        return ["data"], ["clips", "frames"]

    def outputs(self):
        return ["data"], ["clips", "embedding"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        impl = self.embedder or FrameMeanClipEmbedder(self.model_dir, self.device)
        ensure_setup(impl)
        self._impl = impl

    def process(self, task: VideoTask) -> VideoTask:
        clips = task.data.clips
        if not clips:
            return task
        missing = [c.uuid for c in clips if c.frames is None or not len(c.frames)]
        if missing:
            raise ValueError(f"{self.name}: clips {missing[:3]} have no frames; run "
                             f"ClipFrameExtractionStage before this stage")
        emb = self._impl.embed_clips([c.frames for c in clips])  # type: ignore[union-attr]
        for clip, vec in zip(clips, emb, strict=True):
            clip.embedding = vec
            if self.drop_frames:
                clip.frames = None
        return task
