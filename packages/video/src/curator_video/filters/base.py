"""ClipFilterStage: core's filter contract over the clips of a video."""

from __future__ import annotations

from typing import Any, ClassVar

from curator.stages.filter import FilterStage

from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipFilterStage"]


class ClipFilterStage(FilterStage[VideoTask]):
    """Base of clip filters (:class:`curator.stages.filter.FilterStage`): leaf classes score the
    clips (:meth:`score_items`, storing the score in ``clip.scores``) and decide (:meth:`keep`).
    Removed clips move to ``video.filtered_clips`` (their frames freed); the stage's
    ``items_in``/``items_out`` count them, and with ``split=True`` each also goes to the rejected
    sink (kind ``"filtered"``) with the filter's name and score."""

    modality: ClassVar[str] = "video"

    def items(self, task: VideoTask) -> list[Clip]:
        return task.data.clips

    def with_kept(self, task: VideoTask, mask: list[bool]) -> VideoTask:
        task.data.filter_clips(mask, self.name)
        return task

    def item_record(self, item: Clip) -> dict[str, Any]:
        return {"clip": item.uuid, "source_video": item.source_video, "span": list(item.span)}

    def frames_of(self, clip: Clip, allow_empty: bool = True) -> Any:
        """The clip's extracted frames; a clear error when no frame extraction ran upstream."""
        if clip.frames is None or (not allow_empty and not len(clip.frames)):
            raise ValueError(f"{self.name}: clip {clip.uuid} has no frames; run "
                             f"ClipFrameExtractionStage before this stage")
        return clip.frames
