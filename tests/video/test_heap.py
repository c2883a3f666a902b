"""The video decoding stages keep big buffers mapped and trim the heap after each task (see
``tests/core/test_heap.py`` for the helpers themselves)."""

from __future__ import annotations

from curator.stages.lifecycle import ensure_setup
from curator_video import ClipFrameExtractionStage, ClipTranscodingStage, FixedStrideSplitStage

from ..core.test_heap import MAPPED, libc  # noqa: F401 - the fixture


def test_frame_extraction_and_transcoding_call_them(libc, load_video) -> None:  # noqa: F811
    task = FixedStrideSplitStage(3.0).process(load_video("moving.mp4"))
    ClipFrameExtractionStage(num_frames=2).process(task)
    assert libc.calls == [MAPPED, ("malloc_trim", 0)]
    ensure_setup(ClipTranscodingStage(target_res=(32, 24))).process(task)
    assert libc.calls[-1] == ("malloc_trim", 0) and len(libc.calls) == 3
