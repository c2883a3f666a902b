"""TransNetV2 shot-boundary detection (Souček & Lokoč, 2020, arXiv:2008.04838) in PyTorch.

The module names and parameter shapes follow the published PyTorch port, so the published state
dict (``transnetv2-pytorch-weights.pth``, as in the ``Sn4kehead/TransNetV2`` model repository
NeMo Curator downloads) loads with ``strict=True``. The sizes (``F``, ``L``, ``S``, ``D``) are
read from the state dict, so smaller checkpoints of the same layout load too.

Input: uint8 frames ``(B, T, 27, 48, 3)`` RGB; output: per-frame transition logits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from torch import nn
from torch.nn import functional

__all__ = ["TransNetV2", "WEIGHTS_NAME", "INPUT_HW", "load_transnetv2", "transition_probabilities",
           "stream_probabilities", "context_start", "predictions_to_scenes"]

WEIGHTS_NAME = "transnetv2-pytorch-weights.pth"
"""File name of the published PyTorch weights inside a model directory."""
INPUT_HW = (27, 48)
"""(height, width) of the frames TransNetV2 reads."""
_WINDOW, _STEP, _PAD = 100, 50, 25


class Conv3DConfigurable(nn.Module):
    """(2+1)D separable convolution: a 1x3x3 spatial conv then a dilated 3x1x1 temporal conv."""

    def __init__(self, in_filters: int, filters: int, dilation_rate: int, use_bias: bool = True):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Conv3d(in_filters, 2 * filters, kernel_size=(1, 3, 3), padding=(0, 1, 1),
                      bias=False),
            nn.Conv3d(2 * filters, filters, kernel_size=(3, 1, 1),
                      dilation=(dilation_rate, 1, 1), padding=(dilation_rate, 0, 0),
                      bias=use_bias),
        ])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class DilatedDCNNV2(nn.Module):
    """Four temporal dilations (1, 2, 4, 8) concatenated, batch-normalised."""

    def __init__(self, in_filters: int, filters: int, activation: bool):
        super().__init__()
        self.Conv3D_1 = Conv3DConfigurable(in_filters, filters, 1, use_bias=False)
        self.Conv3D_2 = Conv3DConfigurable(in_filters, filters, 2, use_bias=False)
        self.Conv3D_4 = Conv3DConfigurable(in_filters, filters, 4, use_bias=False)
        self.Conv3D_8 = Conv3DConfigurable(in_filters, filters, 8, use_bias=False)
        self.bn = nn.BatchNorm3d(filters * 4, eps=1e-3)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.Conv3D_1(x), self.Conv3D_2(x), self.Conv3D_4(x), self.Conv3D_8(x)],
                      dim=1)
        x = self.bn(x)
        return functional.relu(x) if self.activation else x


class StackedDDCNNV2(nn.Module):
    """``n_blocks`` dilated blocks with a residual from the first, then 1x2x2 average pooling."""

    def __init__(self, in_filters: int, n_blocks: int, filters: int):
        super().__init__()
        self.DDCNN = nn.ModuleList([
            DilatedDCNNV2(in_filters if i == 0 else filters * 4, filters,
                          activation=i != n_blocks - 1) for i in range(n_blocks)])
        self.pool = nn.AvgPool3d(kernel_size=(1, 2, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = None
        for block in self.DDCNN:
            x = block(x)
            if shortcut is None:
                shortcut = x
        return self.pool(functional.relu(x) + shortcut)


def _window_lookup(similarities: torch.Tensor, window: int) -> torch.Tensor:
    """For every frame t, its similarities to frames ``t - window//2 .. t + window//2`` (zero
    outside the sequence): ``(B, T, T)`` → ``(B, T, window)``."""
    half = (window - 1) // 2
    padded = functional.pad(similarities, [half, half])
    t = similarities.shape[1]
    idx = torch.arange(t, device=similarities.device)[:, None] + \
        torch.arange(window, device=similarities.device)[None, :]
    return torch.gather(padded, 2, idx.unsqueeze(0).expand(similarities.shape[0], -1, -1))


class FrameSimilarity(nn.Module):
    """Cosine similarities of projected, pooled CNN features within a ``lookup_window``."""

    def __init__(self, in_filters: int, similarity_dim: int = 128, lookup_window: int = 101,
                 output_dim: int = 128):
        super().__init__()
        self.projection = nn.Linear(in_filters, similarity_dim, bias=True)
        self.fc = nn.Linear(lookup_window, output_dim)
        self.lookup_window = lookup_window

    def forward(self, block_features: list[torch.Tensor]) -> torch.Tensor:
        x = torch.cat([f.mean(dim=[3, 4]) for f in block_features], dim=1).transpose(1, 2)
        x = functional.normalize(self.projection(x), p=2, dim=2)
        sims = _window_lookup(torch.bmm(x, x.transpose(1, 2)), self.lookup_window)
        return functional.relu(self.fc(sims))


class ColorHistograms(nn.Module):
    """Similarities of 512-bin RGB histograms (3 bits per channel) within a ``lookup_window``."""

    def __init__(self, lookup_window: int = 101, output_dim: int = 128):
        super().__init__()
        self.fc = nn.Linear(lookup_window, output_dim)
        self.lookup_window = lookup_window

    @staticmethod
    def histograms(frames: torch.Tensor) -> torch.Tensor:
        """L2-normalised histograms ``(B, T, 512)`` of uint8 frames ``(B, T, H, W, 3)``."""
        b, t, h, w, _ = frames.shape
        f = frames.reshape(b * t, h * w, 3).int() >> 5
        bins = (f[..., 0] << 6) + (f[..., 1] << 3) + f[..., 2]
        bins = bins + (torch.arange(b * t, device=frames.device) << 9)[:, None]
        hist = torch.bincount(bins.reshape(-1), minlength=b * t * 512).reshape(b, t, 512)
        return functional.normalize(hist.float(), p=2, dim=2)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        x = self.histograms(frames)
        return functional.relu(self.fc(_window_lookup(torch.bmm(x, x.transpose(1, 2)),
                                                      self.lookup_window)))


class TransNetV2(nn.Module):
    """TransNetV2: stacked dilated (2+1)D CNN blocks, frame-similarity and colour-histogram
    features, and two heads (single-frame ``cls_layer1``, many-hot ``cls_layer2``).

    Args:
        F: filters of the first block (doubles every block).
        L: number of stacked blocks.
        S: dilated blocks per stacked block.
        D: width of the dense layer.
    """

    def __init__(self, F: int = 16, L: int = 3, S: int = 2, D: int = 1024):
        super().__init__()
        self.SDDCNN = nn.ModuleList(
            [StackedDDCNNV2(3 if i == 0 else F * 2 ** (i - 1) * 4, S, F * 2 ** i)
             for i in range(L)])
        self.frame_sim_layer = FrameSimilarity(sum(F * 2 ** i * 4 for i in range(L)))
        self.color_hist_layer = ColorHistograms()
        h, w = INPUT_HW
        for _ in range(L):
            h, w = h // 2, w // 2
        self.fc1 = nn.Linear(F * 2 ** (L - 1) * 4 * h * w + 128 + 128, D)
        self.cls_layer1 = nn.Linear(D, 1)
        self.cls_layer2 = nn.Linear(D, 1)
        self.dropout = nn.Dropout(0.5)

    def forward(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(single_frame_logits, many_hot_logits)``, each ``(B, T, 1)``, for uint8 frames
        ``(B, T, 27, 48, 3)``."""
        if frames.dtype != torch.uint8 or tuple(frames.shape[2:]) != (*INPUT_HW, 3):
            raise ValueError(f"TransNetV2 expects uint8 frames (B, T, 27, 48, 3), got "
                             f"{frames.dtype} {tuple(frames.shape)}")
        x = frames.permute(0, 4, 1, 2, 3).float() / 255.0
        features = []
        for block in self.SDDCNN:
            x = block(x)
            features.append(x)
        x = x.permute(0, 2, 3, 4, 1).reshape(x.shape[0], x.shape[2], -1)
        x = torch.cat([self.color_hist_layer(frames), self.frame_sim_layer(features), x], 2)
        x = self.dropout(functional.relu(self.fc1(x)))
        return self.cls_layer1(x), self.cls_layer2(x)


def _sizes(state: dict[str, torch.Tensor]) -> dict[str, int]:
    """``F``, ``L``, ``S``, ``D`` of a TransNetV2 state dict."""
    blocks = {k.split(".")[1] for k in state if k.startswith("SDDCNN.")}
    per_block = {k.split(".")[3] for k in state if k.startswith("SDDCNN.0.DDCNN.")}
    return {"F": int(state["SDDCNN.0.DDCNN.0.Conv3D_1.layers.1.weight"].shape[0]),
            "L": len(blocks), "S": len(per_block), "D": int(state["fc1.weight"].shape[0])}


def load_transnetv2(path: str, device: str = "cpu") -> TransNetV2:
    """Load TransNetV2 in eval mode from ``path``: a directory holding
    ``transnetv2-pytorch-weights.pth`` or the ``.pth`` file itself (a plain state dict)."""
    file = os.path.join(path, WEIGHTS_NAME) if os.path.isdir(path) else path
    if not os.path.isfile(file):
        raise FileNotFoundError(f"TransNetV2: no weights at {file!r}; download "
                                f"{WEIGHTS_NAME} (e.g. from the Sn4kehead/TransNetV2 model "
                                f"repository) and pass its directory as model_dir")
    state = torch.load(file, map_location="cpu", weights_only=True)
    try:
        model = TransNetV2(**_sizes(state))
        model.load_state_dict(state, strict=True)
    except (KeyError, RuntimeError) as exc:
        raise ValueError(f"TransNetV2: {file!r} is not a TransNetV2 PyTorch state dict "
                         f"({exc})") from exc
    return model.eval().to(device)


def context_start(block: int) -> int:
    """The first frame :func:`stream_probabilities` needs to predict the frames from
    ``block * 50`` on (25 frames of context before them; frame 0 for block 0)."""
    return max(0, block * _STEP - _PAD)


@torch.inference_mode()
def stream_probabilities(model: TransNetV2, frames: Iterable[np.ndarray], block: int = 0,
                         device: str | torch.device = "cpu", batch_windows: int = 8
                         ) -> Iterator[tuple[int, np.ndarray]]:
    """Per-frame shot-transition probabilities (sigmoid of ``cls_layer1``), 50 frames at a
    time as ``(first frame index, probabilities)``, for a video whose uint8 frames
    ``(27, 48, 3)`` ``frames`` yields from frame :func:`context_start` ``(block)`` to its end.

    Frame ``i`` is predicted by the window of 100 frames ``50 * (i // 50) - 25`` up to
    ``+ 100``, frames before the first standing for the first frame and frames after the last
    for the last (as the published inference pads a whole video with 25 copies of its first
    frame and enough copies of its last); only the middle 50 predictions of each window are
    kept. Each frame's probability therefore depends on its window alone: starting at any
    ``block`` gives the same values as the whole video, and the caller may stop reading at
    any point, holding about ``50 * batch_windows + 75`` frames. ``batch_windows`` windows
    go through the network together (a caller that stops early may ask for fewer)."""
    base = context_start(block)  # index of buf[0]
    buf: list[np.ndarray] = []
    pending: list[int] = []  # window indices ready to run
    j = block

    def run(windows: list[int], last: int | None) -> Iterator[tuple[int, np.ndarray]]:
        batch = np.stack([_window_frames(buf, base, w, last) for w in windows])
        logits, _ = model(torch.from_numpy(batch).to(device))
        probs = torch.sigmoid(logits[:, _PAD:_PAD + _STEP, 0]).float().cpu().numpy()
        for w, p in zip(windows, probs, strict=True):
            yield w * _STEP, p

    for frame in frames:
        buf.append(frame)
        while base + len(buf) >= j * _STEP + _WINDOW - _PAD:  # window j is complete
            pending.append(j)
            j += 1
            if len(pending) == batch_windows:
                yield from run(pending, None)
                pending = []
                drop = max(0, context_start(j) - base)  # frames no later window reads
                del buf[:drop]
                base += drop
    if not buf:
        return
    n = base + len(buf)
    while j * _STEP < n:
        pending.append(j)
        j += 1
    for i in range(0, len(pending), batch_windows):
        for start, p in run(pending[i:i + batch_windows], n - 1):
            yield start, p[: n - start]


def _window_frames(buf: list[np.ndarray], base: int, window: int, last: int | None
                   ) -> np.ndarray:
    """The 100 frames of ``window`` (frames ``50 * window - 25`` on) from ``buf`` (frame
    ``base`` first), clamped to the first frame and, with ``last`` known, to the last."""
    lo = window * _STEP - _PAD
    idx = np.arange(lo, lo + _WINDOW)
    idx = np.maximum(idx, 0)
    if last is not None:
        idx = np.minimum(idx, last)
    return np.stack([buf[i - base] for i in idx])


def transition_probabilities(model: TransNetV2, frames: np.ndarray,
                             device: str | torch.device = "cpu", batch_windows: int = 8
                             ) -> np.ndarray:
    """Per-frame shot-transition probability for uint8 frames ``(N, 27, 48, 3)`` held whole
    (see :func:`stream_probabilities`)."""
    if len(frames) == 0:
        return np.zeros(0, np.float32)
    parts = [p for _, p in stream_probabilities(model, iter(frames), 0, device, batch_windows)]
    return np.concatenate(parts)[: len(frames)]


def predictions_to_scenes(transitions: np.ndarray, entire_video_if_none: bool = True
                          ) -> np.ndarray:
    """``(start, end)`` frame pairs of the shots between transition frames (``transitions`` is
    0/1 per frame; transition frames belong to no shot). The last shot ends at the last frame
    index; with no transition, the whole video ``(0, N)`` when ``entire_video_if_none``."""
    scenes: list[tuple[int, int]] = []
    prev, start, last = 0, 0, 0
    for i, t in enumerate(transitions):
        if prev == 1 and t == 0:
            start = i
        if prev == 0 and t == 1 and i != 0:
            scenes.append((start, i))
        prev, last = t, t
    if scenes and last == 0:
        scenes.append((start, len(transitions) - 1))
    if not scenes and entire_video_if_none:
        scenes.append((0, len(transitions)))
    return np.array(scenes, dtype=np.int64).reshape(-1, 2)
