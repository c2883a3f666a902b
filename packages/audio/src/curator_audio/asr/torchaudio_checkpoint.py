"""A torchaudio wav2vec2 ASR checkpoint on its own: a ``.pth``/``.pt`` state dict, no config.

This is what a user has after ``torchaudio.pipelines.WAV2VEC2_ASR_BASE_960H`` downloaded its
weights (``~/.cache/torch/hub/checkpoints/wav2vec2_fairseq_base_ls960_asr_ls960.pth``) or after
``torch.save(bundle.get_model().state_dict(), path)``. The architecture and labels come from:

- the torchaudio ASR bundle whose file name it has (``WAV2VEC2_ASR_*``, ``HUBERT_ASR_*``,
  ``VOXPOPULI_ASR_*``): the bundle's parameters, labels and input normalisation, and the
  fairseq dictionary rows torchaudio drops from the output layer (``_remove_aux_axis``) when the
  file still has them;
- otherwise the state dict's shapes (layers, widths, kernels, norms, biases); the number of
  attention heads is not in the weights and is taken as ``embed_dim // 64`` (true of every
  published wav2vec2/HuBERT size); the pre-norm layout and waveform normalisation go with the
  layer-norm feature extractor, as in all of torchaudio's bundles. The labels are a
  ``labels.json`` beside the file or, for 29 outputs, torchaudio's English character set
  (32 outputs: the raw fairseq English layout, rows 1-3 dropped as torchaudio does).
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import Any

from curator.errors import ConfigError

__all__ = ["CHECKPOINT_SUFFIXES", "find_lone_checkpoint", "infer_wav2vec2_config",
           "load_torchaudio_checkpoint", "torchaudio_asr_bundles"]

CHECKPOINT_SUFFIXES = (".pth", ".pt")
_STRIDES = {10: 5, 3: 2, 2: 2}  # wav2vec2's feature extractor: kernel -> stride
_FAIRSEQ_EXTRA_ROWS = (1, 2, 3)  # <pad>, </s>, <unk> of fairseq's dictionary


def torchaudio_asr_bundles() -> dict[str, Any]:
    """torchaudio's wav2vec2-family ASR bundles by weight file name."""
    import torchaudio.pipelines as pipelines
    from torchaudio.pipelines._wav2vec2.impl import Wav2Vec2ASRBundle

    return {os.path.basename(b._path): b for b in vars(pipelines).values()
            if type(b) is Wav2Vec2ASRBundle and b._model_type == "Wav2Vec2"}


def find_lone_checkpoint(model_dir: str) -> str | None:
    """The checkpoint to load when ``model_dir`` is a ``.pth``/``.pt`` file, or a directory
    without ``config.json`` holding exactly one such file; else None."""
    from curator.io import get_fs, join_path

    fs, path = get_fs(model_dir)
    if model_dir.endswith(CHECKPOINT_SUFFIXES) and fs.isfile(path):
        return model_dir
    if not fs.isdir(path):
        return None
    names = [os.path.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)]
    if "config.json" in names:
        return None
    found = [n for n in names if n.endswith(CHECKPOINT_SUFFIXES)]
    if len(found) > 1:
        raise ConfigError(f"wav2vec2: {model_dir} holds several checkpoints {sorted(found)} and "
                          f"no config.json; point model_dir at one of them")
    return join_path(model_dir, found[0]) if found else None


def _layer_count(state: dict[str, Any], prefix: str) -> int:
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.")
    return 1 + max((int(m.group(1)) for k in state if (m := pattern.match(k))), default=-1)


def infer_wav2vec2_config(state: dict[str, Any]) -> dict[str, Any]:
    """``torchaudio.models.wav2vec2_model`` arguments that fit ``state``'s keys and shapes."""
    convs = []
    for i in range(_layer_count(state, "feature_extractor.conv_layers.")):
        out_ch, _, kernel = state[f"feature_extractor.conv_layers.{i}.conv.weight"].shape
        if kernel not in _STRIDES:
            raise ConfigError(f"wav2vec2: feature extractor layer {i} has kernel {kernel}, not "
                              f"a wav2vec2 layout (kernels 10, 3, 2); add a config.json with "
                              f"the wav2vec2_model arguments")
        convs.append((int(out_ch), int(kernel), _STRIDES[kernel]))
    if not convs or "aux.weight" not in state:
        raise ConfigError("wav2vec2: the checkpoint is not a wav2vec2 CTC model (no "
                          "feature_extractor.conv_layers.* or aux.* weights)")
    layer_norm = "feature_extractor.conv_layers.1.layer_norm.weight" in state
    embed = int(state["encoder.feature_projection.projection.weight"].shape[0])
    pos_prefix = "encoder.transformer.pos_conv_embed.conv."
    pos = next(state[pos_prefix + k] for k in ("weight_v", "parametrizations.weight.original1",
                                               "weight") if pos_prefix + k in state)
    return {
        "extractor_mode": "layer_norm" if layer_norm else "group_norm",
        "extractor_conv_layer_config": convs,
        "extractor_conv_bias": "feature_extractor.conv_layers.0.conv.bias" in state,
        "encoder_embed_dim": embed, "encoder_projection_dropout": 0.0,
        "encoder_pos_conv_kernel": int(pos.shape[2]),
        "encoder_pos_conv_groups": embed // int(pos.shape[1]),
        "encoder_num_layers": _layer_count(state, "encoder.transformer.layers."),
        "encoder_num_heads": max(1, embed // 64), "encoder_attention_dropout": 0.0,
        "encoder_ff_interm_features": int(
            state["encoder.transformer.layers.0.feed_forward.intermediate_dense.weight"].shape[0]),
        "encoder_ff_interm_dropout": 0.0, "encoder_dropout": 0.0,
        "encoder_layer_norm_first": layer_norm, "encoder_layer_drop": 0.0,
        "aux_num_out": int(state["aux.weight"].shape[0]),
    }


def _drop_rows(state: dict[str, Any], rows: tuple[int, ...]) -> None:
    for key in ("aux.weight", "aux.bias"):
        mat = state[key]
        state[key] = mat[[i for i in range(mat.shape[0]) if i not in rows]]


def load_torchaudio_checkpoint(path: str) -> tuple[Any, list[str], dict[str, Any]]:
    """``(model, labels, options)`` from a lone checkpoint; ``options`` holds
    ``normalize_waveform`` and ``sample_rate`` (see the module docstring for the rules)."""
    import fsspec
    import torch
    from curator.io import join_path
    from torchaudio.models import wav2vec2_model

    with fsspec.open(path, "rb") as fh:
        state = torch.load(io.BytesIO(fh.read()), map_location="cpu", weights_only=True)
    state = state.get("state_dict", state)
    if state and all(k.startswith("model.") for k in state):  # a bundle's wrapped model
        state = {k[len("model."):]: v for k, v in state.items()}
    name = os.path.basename(path)
    bundle = torchaudio_asr_bundles().get(name)
    rows = int(state["aux.weight"].shape[0]) if "aux.weight" in state else 0
    if bundle is not None:
        params, labels = dict(bundle._params), list(bundle.get_labels())
        normalize = bool(bundle._normalize_waveform)
        extra = tuple(bundle._remove_aux_axis or ())
        if rows == len(labels) + len(extra):
            _drop_rows(state, extra)
    else:
        params = infer_wav2vec2_config(state)
        normalize = params["extractor_mode"] == "layer_norm"
        beside = join_path(os.path.dirname(path) or ".", "labels.json")
        fs = fsspec.open(beside).fs
        if fs.exists(beside):
            with fsspec.open(beside, "rt") as fh:
                labels = list(json.load(fh))
        else:
            import torchaudio.pipelines as pipelines

            labels = list(pipelines.WAV2VEC2_ASR_BASE_960H.get_labels())
            if rows == len(labels) + len(_FAIRSEQ_EXTRA_ROWS):
                _drop_rows(state, _FAIRSEQ_EXTRA_ROWS)
            elif rows != len(labels):
                raise ConfigError(
                    f"wav2vec2: {path} has {rows} outputs and is not a torchaudio bundle file; "
                    f"put its labels (a JSON list, {rows} tokens) in {beside}")
        params["aux_num_out"] = int(state["aux.weight"].shape[0])
    if int(state["aux.weight"].shape[0]) != len(labels):
        raise ConfigError(f"wav2vec2: {path} has {int(state['aux.weight'].shape[0])} outputs "
                          f"but {len(labels)} labels")
    model = wav2vec2_model(**params)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ConfigError(f"wav2vec2: {path} does not fit the architecture "
                          f"{'of bundle ' + name if bundle else 'inferred from its shapes'}: "
                          f"{exc}") from exc
    rate = int(bundle.sample_rate) if bundle is not None else 16000
    return model, labels, {"normalize_waveform": normalize, "sample_rate": rate}
