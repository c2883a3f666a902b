import numpy as np
import pytest
from curator.stages.lifecycle import ensure_setup
from curator.testing import check_stage_contract
from curator_video import ClipAestheticFilterStage, ClipFrameExtractionStage, FixedStrideSplitStage


def extracted(load_video):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("scenes.mp4"))
    return ClipFrameExtractionStage(target_fps=4).process(task)


def test_scores_with_image_models_and_filters_by_threshold(load_video, tiny_models):
    from curator_image.models.aesthetic import AestheticScorer
    from curator_image.models.clip import ClipImageEmbedder

    clip_dir, aes_dir = tiny_models
    scored = ensure_setup(ClipAestheticFilterStage(model_dir=clip_dir, aesthetic_model_dir=aes_dir,
                                                   reduction="mean", num_frames=None,
                                                   score_only=True)).process(extracted(load_video))
    scores = [c.scores["aesthetic"] for c in scored.data.clips]
    first = scored.data.clips[0]
    expected = AestheticScorer(aes_dir).score(ClipImageEmbedder(clip_dir).embed(list(first.frames)))
    assert scores[0] == pytest.approx(float(expected.mean()), abs=1e-5)
    assert len(set(np.round(scores, 6))) > 1           # different scenes, different scores

    threshold = float(np.median(scores))
    task = ensure_setup(ClipAestheticFilterStage(model_dir=clip_dir, aesthetic_model_dir=aes_dir,
                                                 reduction="mean", num_frames=None,
                                                 score_threshold=threshold)
                        ).process(extracted(load_video))
    assert all(c.scores["aesthetic"] >= threshold for c in task.data.clips)
    assert all(c.scores["aesthetic"] < threshold for c in task.data.filtered_clips)
    assert len(task.data.clips) + len(task.data.filtered_clips) == len(scores)


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match="ClipAestheticFilterStage: model_dir"):
        ClipAestheticFilterStage()
    with pytest.raises(ValueError, match="reduction"):
        ClipAestheticFilterStage(model_dir="a", aesthetic_model_dir="b", reduction="median")


def test_contract(load_video, tiny_models):
    check_stage_contract(ClipAestheticFilterStage(*tiny_models, score_threshold=-1e9),
                         extracted(load_video))
