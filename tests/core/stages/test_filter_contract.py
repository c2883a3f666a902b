"""The one filter contract (curator.stages.filter) holds for every modality's real filter stage:
removed items go to the rejected sink in one shape with ``split=True``, are dropped (but still
counted by the stage's items_in/items_out) with the shared default ``split=False``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from curator import Pipeline
from curator.stages.filter import FilterStage


@dataclass
class Case:
    stage_cls: type
    kwargs: dict[str, Any]
    task: Any
    filter_name: str
    kept: set[str]        # ids of the items the filter keeps
    removed: set[str]     # ids of the items it removes
    item_id: Any          # output item -> id
    record_id: Any        # rejected record -> id


def _text(tmp_path) -> Case:
    from curator_text import DocumentBatch, ScoreFilter, WordCountFilter

    docs = [{"id": "a", "text": "one two three four"}, {"id": "b", "text": "one"},
            {"id": "c", "text": "five six seven"}, {"id": "d", "text": ""}]
    task = DocumentBatch(task_id="t", dataset_name="d", data=docs)
    flt = WordCountFilter(min_words=3)
    return Case(ScoreFilter, {"filter_obj": flt}, task, flt.name, {"a", "c"}, {"b", "d"},
                lambda row: row["id"], lambda rec: rec["id"])


def _image(tmp_path) -> Case:
    from curator_image import AestheticScorer, ImageAestheticFilterStage, ImageBatch, ImageObject
    from curator_image.testing import make_tiny_aesthetic_model

    model_dir = make_tiny_aesthetic_model(str(tmp_path / "aesthetic"), 16)
    embs = np.random.default_rng(0).normal(size=(6, 16)).astype(np.float32)
    embs /= np.linalg.norm(embs, axis=1, keepdims=True)
    scores = AestheticScorer(model_dir).score(embs)
    threshold = float(np.median(scores))
    task = ImageBatch(task_id="t", dataset_name="d", data=[
        ImageObject(image_id=str(i), embedding=e) for i, e in enumerate(embs)])
    kept = {str(i) for i in np.flatnonzero(scores >= threshold)}
    return Case(ImageAestheticFilterStage, {"model_dir": model_dir, "score_threshold": threshold},
                task, "ImageAestheticFilterStage", kept, {str(i) for i in range(6)} - kept,
                lambda img: img.image_id, lambda rec: rec["image_id"])


def _video(tmp_path) -> Case:
    from curator_video import Clip, MotionFilterStage, Video, VideoTask

    rng = np.random.default_rng(0)
    clips = []
    for i, moving in enumerate([True, False, True, False]):
        clip = Clip.from_span("v.mp4", i, i + 1)
        clip.frames = (rng.integers(0, 255, (4, 8, 8, 3), dtype=np.uint8) if moving
                       else np.zeros((4, 8, 8, 3), np.uint8))
        clips.append(clip)
    task = VideoTask(task_id="t", dataset_name="d", data=Video("v.mp4", clips=clips))
    return Case(MotionFilterStage, {"global_mean_threshold": 0.01}, task, "MotionFilterStage",
                {clips[0].uuid, clips[2].uuid}, {clips[1].uuid, clips[3].uuid},
                lambda clip: clip.uuid, lambda rec: rec["clip"])


def _audio(tmp_path) -> Case:
    from curator_audio import AudioBatch, PreserveByValueStage

    records = [{"audio_filepath": f"{i}.wav", "duration": d} for i, d in enumerate([1, 5, 2, 9])]
    task = AudioBatch(task_id="t", dataset_name="d", data=records)
    return Case(PreserveByValueStage, {"input_value_key": "duration", "target_value": 3,
                                       "operator": "lt"}, task, "PreserveByValueStage",
                {"0.wav", "2.wav"}, {"1.wav", "3.wav"},
                lambda rec: rec["audio_filepath"], lambda rec: rec["audio_filepath"])


CASES = {"text": _text, "image": _image, "video": _video, "audio": _audio}


def _items(task: Any) -> list:
    data = task.to_pyarrow() if hasattr(task, "to_pyarrow") else task.data
    if hasattr(data, "to_pylist"):
        return data.to_pylist()
    return data.clips if hasattr(data, "clips") else list(data)


def _run(case: Case, **kwargs: Any):
    stage = case.stage_cls(**case.kwargs, **kwargs)
    result = Pipeline("filter-contract", stages=[stage]).run(initial_tasks=[case.task])
    out = [case.item_id(item) for task in result for item in _items(task)]
    stats = next(s for s in result.stats.stages if s.name == stage.name)
    return stage, result, out, stats


@pytest.mark.parametrize("modality", sorted(CASES))
def test_split_sends_removed_items_to_the_sink_in_one_shape(modality, tmp_path):
    pytest.importorskip(f"curator_{modality}")
    case = CASES[modality](tmp_path)
    stage, result, out, stats = _run(case, split=True)
    assert isinstance(stage, FilterStage) and stage.kind == "filter"
    assert set(out) == case.kept
    filtered = [r for r in result.rejected.records if r.kind == "filtered"]
    assert {case.record_id(r.record) for r in filtered} == case.removed
    for r in filtered:
        assert r.stage == stage.name
        assert r.reason == f"filtered by {case.filter_name}"
        assert r.record["filter"] == case.filter_name
        assert r.record["score"] is not None and not stage_keeps(stage, r.record["score"])
    assert stats.items_in - stats.items_out == len(case.removed)  # counted in the summary
    assert result.ok


@pytest.mark.parametrize("modality", sorted(CASES))
def test_default_is_drop_without_sink_and_is_still_counted(modality, tmp_path):
    pytest.importorskip(f"curator_{modality}")
    case = CASES[modality](tmp_path)
    stage, result, out, stats = _run(case)
    assert stage.split is False  # one default everywhere (NeMo Curator's: drop)
    assert set(out) == case.kept
    assert [r for r in result.rejected.records if r.kind == "filtered"] == []
    assert (stats.items_in, stats.items_out) == (len(case.kept) + len(case.removed),
                                                  len(case.kept))


def test_video_filtered_clips_are_kept_on_the_video_and_freed(tmp_path):
    pytest.importorskip("curator_video")
    case = _video(tmp_path)
    _, result, _, _ = _run(case, split=True)
    video = next(iter(result)).data
    assert {c.uuid for c in video.filtered_clips} == case.removed
    assert all(c.frames is None and c.filtered_by == "MotionFilterStage"
               for c in video.filtered_clips)


def stage_keeps(stage: Any, score: Any) -> bool:
    """The stage's keep decision for a score (text: its DocumentFilter's)."""
    steps = getattr(stage, "_steps", None)
    if steps:
        return bool(steps[0].filter.keep_document(score))
    return bool(stage.keep(score))


BAD_PARAMETERS = {
    "text": ("curator_text", "ScoreFilter", {"filter_obj": []}),
    "image": ("curator_image", "ImageAestheticFilterStage", {"model_dir": ""}),
    "video": ("curator_video", "MotionFilterStage", {"method": "nope"}),
    "audio": ("curator_audio", "PreserveByValueStage", {"input_value_key": "x", "operator": "nope"}),
}


@pytest.mark.parametrize("modality", sorted(BAD_PARAMETERS))
def test_bad_filter_parameters_raise_config_error_naming_the_stage(modality):
    from curator.errors import ConfigError

    module, cls, kwargs = BAD_PARAMETERS[modality]
    stage_cls = getattr(pytest.importorskip(module), cls)
    with pytest.raises(ConfigError, match=cls):
        stage_cls(**kwargs)


@pytest.mark.parametrize("modality", sorted(CASES))
def test_every_filter_publishes_its_scores_and_bounds_to_the_run_report(modality, tmp_path):
    pytest.importorskip(f"curator_{modality}")
    case = CASES[modality](tmp_path)
    _, result, _, _ = _run(case)
    (hist,) = [h for h in result.report()["histograms"] if h["name"] == case.filter_name]
    assert hist["count"] == len(case.kept) + len(case.removed)
    assert hist["thresholds"]  # the filter's bound is marked on the plot
