"""CaptionGenerationStage with a tiny random Qwen2.5-VL saved as a hub download is laid out."""

import json
import os

import numpy as np
import pytest
from curator.stages.lifecycle import ensure_setup
from curator.testing import check_stage_contract
from curator_video import CaptionGenerationStage, ClipFrameExtractionStage, FixedStrideSplitStage
from curator_video.caption.stage import sample_evenly
from curator_video.io.writer import clip_record
from curator_video.testing import make_tiny_qwen2_5_vl


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory) -> str:
    return make_tiny_qwen2_5_vl(str(tmp_path_factory.mktemp("qwen2_5_vl")))


def extracted(load_video, name="scenes.mp4"):
    task = FixedStrideSplitStage(2.0, min_clip_length_s=0.5).process(load_video(name))
    return ClipFrameExtractionStage(num_frames=4).process(task)


def reference_captions(model_dir, frames, prompt, max_new_tokens):
    """The plain transformers recipe for one clip, written out here independently."""
    import torch
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    proc = AutoProcessor.from_pretrained(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir).eval()
    text = proc.apply_chat_template(
        [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": prompt}]}],
        tokenize=False, add_generation_prompt=True)
    assert "<|video_pad|>" in text and prompt in text
    out = []
    for f in frames:
        inputs = proc(text=[text], videos=[f], return_tensors="pt")
        with torch.inference_mode():
            ids = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        out.append(proc.batch_decode(ids[:, inputs["input_ids"].shape[1]:],
                                     skip_special_tokens=True)[0].strip())
    return out


def test_published_directory_layout(qwen_dir):
    files = set(os.listdir(qwen_dir))
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= files
    config = json.load(open(os.path.join(qwen_dir, "config.json")))
    assert config["model_type"] == "qwen2_5_vl"
    assert config["architectures"] == ["Qwen2_5_VLForConditionalGeneration"]
    assert {"vision_config", "text_config", "video_token_id"} <= set(config)


def test_stage_captions_every_clip_like_the_transformers_recipe(qwen_dir, load_video):
    task = extracted(load_video)
    frames = [c.frames for c in task.data.clips]
    stage = CaptionGenerationStage(model_dir=qwen_dir, prompt="Describe the clip.",
                                   max_new_tokens=6, batch_size=2)
    out = ensure_setup(stage).process(task)
    captions = [c.caption for c in out.data.clips]
    assert len(captions) == 2 and all(isinstance(c, str) for c in captions)
    assert captions == reference_captions(qwen_dir, frames, "Describe the clip.", 6)
    assert clip_record(out, out.data.clips[0])["caption"] == captions[0]


def test_sample_evenly():
    frames = np.arange(10)[:, None, None, None] * np.ones((1, 2, 2, 3), np.uint8)
    assert sample_evenly(frames, 4)[:, 0, 0, 0].tolist() == [0, 3, 6, 9]
    assert len(sample_evenly(frames, None)) == 10 and len(sample_evenly(frames, 20)) == 10


def test_errors(qwen_dir, load_video, tmp_path):
    with pytest.raises(ValueError, match="model_dir"):
        CaptionGenerationStage()
    with pytest.raises(ValueError, match="prompt"):
        CaptionGenerationStage(model_dir="x", prompt=" ")
    with pytest.raises(ValueError, match="num_frames"):
        CaptionGenerationStage(model_dir="x", num_frames=0)
    task = FixedStrideSplitStage(2.0).process(load_video("scenes.mp4"))   # no frames
    with pytest.raises(ValueError, match="ClipFrameExtractionStage"):
        CaptionGenerationStage(model_dir=qwen_dir).process(task)
    with pytest.raises(FileNotFoundError, match="config.json"):
        CaptionGenerationStage(model_dir=str(tmp_path)).setup()


def test_contract(qwen_dir, load_video):
    (out,) = check_stage_contract(CaptionGenerationStage(model_dir=qwen_dir, max_new_tokens=3),
                                  extracted(load_video))
    assert all(isinstance(c.caption, str) for c in out.data.clips)
