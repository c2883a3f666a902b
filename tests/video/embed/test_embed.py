import numpy as np
import pytest
from curator import Pipeline
from curator.stages.lifecycle import ensure_setup
from curator.testing import check_stage_contract
from curator_video import (
    ClipEmbedder,
    ClipEmbeddingStage,
    ClipFrameExtractionStage,
    ClipSemanticDedupStage,
    FixedStrideSplitStage,
    VideoReaderStage,
)
from curator_video.embed.embedders import FrameMeanClipEmbedder, mean_pool


def extracted(load_video, name="scenes.mp4"):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video(name))
    return ClipFrameExtractionStage(num_frames=3).process(task)


def test_mean_pool_normalises_group_means():
    x = np.array([[1, 0], [0, 1], [3, 4]], np.float32)
    out = mean_pool(x, [2, 1])
    np.testing.assert_allclose(out, [[2 ** -0.5, 2 ** -0.5], [0.6, 0.8]], rtol=1e-6)


def test_clip_embedding_is_normalised_mean_of_clip_frame_embeddings(load_video, tiny_models):
    from curator_image.models.clip import ClipImageEmbedder

    task = ensure_setup(ClipEmbeddingStage(model_dir=tiny_models[0])).process(
        extracted(load_video))
    frames = ClipImageEmbedder(tiny_models[0])
    for clip in task.data.clips:
        assert clip.embedding.shape == (16,) and clip.embedding.dtype == np.float32
        expected = frames.embed(list(clip.frames)).mean(axis=0)
        np.testing.assert_allclose(clip.embedding, expected / np.linalg.norm(expected), atol=1e-5)
    # clips of different scenes get different embeddings
    assert not np.allclose(task.data.clips[0].embedding, task.data.clips[-1].embedding)


class ColourEmbedder(ClipEmbedder):
    """A video-native stand-in: the mean colour of all frames."""

    def embed_clips(self, frames):
        return np.stack([f.reshape(-1, 3).mean(axis=0) for f in frames]).astype(np.float32)


def test_pluggable_embedder_and_drop_frames(load_video):
    task = ensure_setup(ClipEmbeddingStage(embedder=ColourEmbedder(), drop_frames=True)).process(
        extracted(load_video))
    assert all(c.embedding.shape == (3,) and c.frames is None for c in task.data.clips)


class PixelEmbedder(ClipEmbedder):
    """Subsampled raw pixels: distinct for different content, equal for equal content."""

    def embed_clips(self, frames):
        return np.stack([f[:, ::8, ::8].ravel() for f in frames]).astype(np.float32)


def test_semantic_dedup_across_videos_keeps_first_of_each_duplicate_group(video_dir, tmp_path):
    import shutil
    shutil.copy(f"{video_dir}/moving.mp4", tmp_path / "a.mp4")
    shutil.copy(f"{video_dir}/moving.mp4", tmp_path / "b.mp4")      # an exact duplicate video
    shutil.copy(f"{video_dir}/static.mp4", tmp_path / "c.mp4")      # 3 identical clips
    stages = [VideoReaderStage(str(tmp_path)), FixedStrideSplitStage(1.0),
              ClipFrameExtractionStage(num_frames=3),
              ClipEmbeddingStage(embedder=PixelEmbedder()),
              ClipSemanticDedupStage(eps=1e-3, n_clusters=2)]
    result = Pipeline("dedup", stages=stages).run()
    videos = {t.data.input_path.rsplit("/", 1)[-1]: t.data for t in result}
    assert [len(videos[n].clips) for n in ("a.mp4", "b.mp4", "c.mp4")] == [3, 0, 1]
    assert {c.filtered_by for v in videos.values() for c in v.filtered_clips} == {
        "ClipSemanticDedupStage"}
    assert [c.span for c in videos["c.mp4"].clips] == [(0.0, 1.0)]   # keep="first"
    stats = {s.name: s for s in result.stats.stages}["ClipSemanticDedupStage"]
    assert stats.counters["dedup_group_sizes"] == {"2": 3, "3": 1}  # a/b pairs, c's three


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match="ClipEmbeddingStage: give model_dir"):
        ClipEmbeddingStage()
    with pytest.raises(TypeError, match="ClipEmbedder"):
        ClipEmbeddingStage(embedder=object())
    with pytest.raises(ValueError, match="ClipSemanticDedupStage: eps"):
        ClipSemanticDedupStage(eps=3)
    with pytest.raises(FileNotFoundError, match="config.json"):
        FrameMeanClipEmbedder(str(tmp_path)).setup()


def test_contract(load_video, tiny_models):
    (out,) = check_stage_contract(ClipEmbeddingStage(model_dir=tiny_models[0]),
                                  extracted(load_video))
    assert all(c.embedding is not None for c in out.data.clips)
    check_stage_contract(ClipSemanticDedupStage(), out)
