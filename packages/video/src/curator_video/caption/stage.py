"""CaptionGenerationStage: caption every clip with a Qwen2.5-VL model through transformers."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video.tasks import VideoTask

__all__ = ["CaptionGenerationStage", "DEFAULT_CAPTION_PROMPT", "sample_evenly"]

DEFAULT_CAPTION_PROMPT = "Elaborate on the visual and narrative elements of the video in detail."


def sample_evenly(frames: np.ndarray, n: int | None) -> np.ndarray:
    """At most ``n`` evenly spaced frames of ``frames`` (all of them when ``n`` is ``None``)."""
    if n is None or len(frames) <= n:
        return frames
    return frames[np.linspace(0, len(frames) - 1, n).round().astype(int)]


@dataclass
class CaptionGenerationStage(ProcessingStage[VideoTask, VideoTask]):
    """Captions every clip from its extracted frames (``ClipFrameExtractionStage``) with a
    Qwen2.5-VL model (``Qwen2_5_VLForConditionalGeneration`` and its ``AutoProcessor``) loaded
    from a local Hugging Face directory: the frames go in as one video, the prompt as the user
    turn of the processor's chat template; greedy decoding. The text goes to ``clip.caption``
    (and the ``caption`` field of the written clip record).

    Args:
        model_dir: local Qwen2.5-VL directory (``config.json``, safetensors weights, tokenizer,
            processor config and chat template, as downloaded from the hub).
        prompt: the instruction given with every clip.
        num_frames: frames per clip handed to the model (evenly sampled from the extracted
            ones; ``None``: all).
        max_new_tokens: longest caption, in tokens.
        batch_size: clips per ``generate`` call.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (set ``resources`` to ask for a GPU).
    """

    model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir",)  # resolved on the driver
    prompt: str = DEFAULT_CAPTION_PROMPT
    num_frames: int | None = 8
    max_new_tokens: int = 256
    batch_size: int = 4
    device: str = "cpu"
    name: str = "CaptionGenerationStage"
    modality: ClassVar[str] = "video"
    _model: Any = field(default=None, init=False, repr=False)
    _processor: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.model_dir:
            raise ConfigError(f"{self.name}: give model_dir, a local Qwen2.5-VL model directory")
        if not self.prompt.strip():
            raise ConfigError(f"{self.name}: prompt must not be empty")
        for param in ("num_frames", "max_new_tokens", "batch_size"):
            value = getattr(self, param)
            if value is not None and value < 1:
                raise ConfigError(f"{self.name}: {param} must be >= 1, got {value}")

    def inputs(self):
        return ["data"], ["clips", "frames"]

    def outputs(self):
        return ["data"], ["clips", "caption"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        import torch
        from curator_image.models.clip import resolve_device
        from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

        if not os.path.isfile(os.path.join(self.model_dir, "config.json")):
            raise FileNotFoundError(f"{self.name}: no config.json in {self.model_dir!r}; download "
                                    f"a Qwen2.5-VL model (e.g. Qwen/Qwen2.5-VL-7B-Instruct) and "
                                    f"pass its local directory as model_dir")
        device = resolve_device(self.device)
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        self._processor = AutoProcessor.from_pretrained(self.model_dir, local_files_only=True)
        self._processor.tokenizer.padding_side = "left"
        self._model = Qwen2_5_VLForConditionalGeneration.from_pretrained(
            self.model_dir, local_files_only=True, dtype=dtype).to(device).eval()

    def caption(self, clips_frames: list[np.ndarray]) -> list[str]:
        """Captions of clips given as ``(N, H, W, 3)`` uint8 frame arrays (one per clip)."""
        import torch

        messages = [{"role": "user", "content": [{"type": "video"},
                                                 {"type": "text", "text": self.prompt}]}]
        text = self._processor.apply_chat_template(messages, tokenize=False,
                                                   add_generation_prompt=True)
        out: list[str] = []
        for i in range(0, len(clips_frames), self.batch_size):
            videos = [sample_evenly(f, self.num_frames) for f in
                      clips_frames[i:i + self.batch_size]]
            inputs = self._processor(text=[text] * len(videos), videos=videos, padding=True,
                                     return_tensors="pt").to(self._model.device)
            with torch.inference_mode():
                ids = self._model.generate(**inputs, max_new_tokens=self.max_new_tokens,
                                           do_sample=False)
            out += [s.strip() for s in self._processor.batch_decode(
                ids[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)]
        return out

    def process(self, task: VideoTask) -> VideoTask:
        clips = task.data.clips
        missing = [c.uuid for c in clips if c.frames is None or not len(c.frames)]
        if missing:
            raise ValueError(f"{self.name}: clips {missing[:3]} have no frames; run "
                             f"ClipFrameExtractionStage before this stage")
        for clip, text in zip(clips, self.caption([c.frames for c in clips]), strict=True):
            clip.caption = text
        return task
