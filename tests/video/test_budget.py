"""Frames in flight are bounded by bytes: a frame-extraction worker decodes only while the
frames the stage's other workers (copies of the stage in one process) hold, plus its own, fit
in ``frame_budget``; a worker's hold ends when its frames are freed or when it asks again."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest
from curator_video import ClipFrameExtractionStage, FixedStrideSplitStage
from curator_video.budget import FrameBudget
from curator_video.frames import BATCH_BYTES


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_a_worker_waits_until_the_others_frames_are_freed() -> None:
    budget = FrameBudget(limit=1000)
    frames = np.zeros(600, np.uint8)
    budget.hold(budget.acquire(600), [frames[:300], frames[300:]])  # views: held as one
    admitted = threading.Event()
    other = _in_thread(lambda: (budget.acquire(600), admitted.set()))
    assert not admitted.wait(0.3) and budget.held == 600
    del frames  # the views went with the statement above: the frames are freed now
    assert admitted.wait(30) and budget.held == 600
    other.join(30)


def test_a_task_bigger_than_the_budget_runs_alone_and_asking_again_releases() -> None:
    budget = FrameBudget(limit=100)
    budget.acquire(10_000)            # nothing else held: admitted
    budget.acquire(50)                # this worker's previous task has left its hands
    assert budget.held == 50
    ticket = budget.acquire(60)
    budget.hold(ticket, [])           # no frames: released at once
    assert budget.held == 0


def test_copies_of_a_stage_share_one_budget() -> None:
    stage = ClipFrameExtractionStage(frame_budget=10**6)
    # thread workers run deep copies, process workers unpickled ones
    assert copy.deepcopy(stage).budget() is stage.budget()
    assert pickle.loads(pickle.dumps(stage)).budget() is stage.budget()
    assert ClipFrameExtractionStage().budget() is not stage.budget()


def test_extraction_holds_its_frames_bytes_until_they_are_freed(load_video) -> None:
    stage = ClipFrameExtractionStage(target_fps=2)
    task = stage.process(FixedStrideSplitStage(1.0, min_clip_length_s=0.5)
                         .process(load_video("moving.mp4")))
    held = sum(c.frames.nbytes for c in task.data.clips)
    assert held > 0 and stage.budget().held == held
    del task
    assert stage.budget().held == 0


def test_frames_are_read_in_batches_of_at_most_batch_bytes(load_video, monkeypatch) -> None:
    import curator_video.decode as decode
    import curator_video.frames as frames_mod

    sizes: list[int] = []
    real = decode.read_frames
    monkeypatch.setattr(decode, "read_frames",
                        lambda reader, idx, chunk: (sizes.append(chunk), real(reader, idx, chunk))[1])
    monkeypatch.setattr(frames_mod, "BATCH_BYTES", 3 * 64 * 48 * 3)  # 3 frames of 64x48
    task = FixedStrideSplitStage(3.0).process(load_video("moving.mp4"))
    out = ClipFrameExtractionStage(num_frames=8).process(task)
    assert sizes == [3] and out.data.clips[0].frames.shape[0] == 8
    assert BATCH_BYTES == 32 * 2**20


@pytest.mark.parametrize("value", [0, -5])
def test_budget_must_be_positive(value) -> None:
    with pytest.raises(ValueError, match="frame_budget"):
        ClipFrameExtractionStage(frame_budget=value)
