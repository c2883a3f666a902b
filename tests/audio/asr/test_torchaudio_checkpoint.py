"""A torchaudio wav2vec2 ASR checkpoint alone (a lone ``.pth`` state dict, as torchaudio's
bundles download it): architecture from the bundle's name or the state dict's shapes, labels
from the bundle, no config.json or labels.json of ours."""

import os

import numpy as np
import pytest
import torch
import torchaudio.pipelines as pipelines
from curator_audio import ASRStage, AudioBatch
from curator_audio import testing as T
from curator_audio.asr.torchaudio_checkpoint import infer_wav2vec2_config, torchaudio_asr_bundles
from curator_audio.asr.wav2vec2 import Wav2Vec2CTCModel, greedy_ctc_decode
from torchaudio.models import wav2vec2_model

EN_LABELS = list(pipelines.WAV2VEC2_ASR_BASE_960H.get_labels())


def _tiny(layer_norm: bool, aux: int = 29, seed: int = 0):
    """A narrow model from torchaudio's factory: wav2vec2's 7-layer extractor, head dim 64."""
    torch.manual_seed(seed)
    config = {
        "extractor_mode": "layer_norm" if layer_norm else "group_norm",
        "extractor_conv_layer_config": [(16, 10, 5)] + [(16, 3, 2)] * 4 + [(16, 2, 2)] * 2,
        "extractor_conv_bias": layer_norm, "encoder_embed_dim": 128,
        "encoder_projection_dropout": 0.0, "encoder_pos_conv_kernel": 8,
        "encoder_pos_conv_groups": 4, "encoder_num_layers": 2, "encoder_num_heads": 2,
        "encoder_attention_dropout": 0.0, "encoder_ff_interm_features": 96,
        "encoder_ff_interm_dropout": 0.0, "encoder_dropout": 0.0,
        "encoder_layer_norm_first": layer_norm, "encoder_layer_drop": 0.0, "aux_num_out": aux}
    return wav2vec2_model(**config).eval(), config


def _emissions(model, wave, normalize=False):
    x = torch.from_numpy(wave)[None]
    if normalize:
        x = (x - x.mean()) / (x.std() + 1e-7)
    with torch.inference_mode():
        return model(x)[0][0]


@pytest.mark.parametrize("layer_norm", [False, True])  # base layout, large-lv60k layout
def test_lone_pth_loads_with_inferred_architecture_and_bundle_labels(tmp_path, layer_norm):
    model, config = _tiny(layer_norm)
    assert infer_wav2vec2_config(model.state_dict()) == config
    path = tmp_path / "my_finetuned_asr.pth"
    torch.save(model.state_dict(), path)
    wave = T.speech_like(0.8, seed=2)
    expected = greedy_ctc_decode(
        _emissions(model, wave, normalize=layer_norm).argmax(-1).tolist(), EN_LABELS)
    for model_dir in (str(tmp_path), str(path)):  # the directory or the file itself
        loaded = Wav2Vec2CTCModel.load(model_dir, "cpu")
        assert loaded.labels == EN_LABELS and loaded.normalize_waveform is layer_norm
        assert torch.equal(_emissions(loaded.model, wave, layer_norm),
                           _emissions(model, wave, layer_norm))
        assert loaded.transcribe([wave]) == [expected]
    assert sorted(os.listdir(tmp_path)) == ["my_finetuned_asr.pth"]  # nothing else needed


def test_raw_fairseq_rows_are_dropped_and_stage_runs_on_the_file(tmp_path):
    """The published ASR files keep fairseq's 32-row output layer; rows 1-3 go, as torchaudio
    drops them."""
    model, _ = _tiny(False, aux=32, seed=1)
    torch.save(model.state_dict(), tmp_path / "asr.pth")
    loaded = Wav2Vec2CTCModel.load(str(tmp_path / "asr.pth"), "cpu")
    keep = [0, *range(4, 32)]
    assert torch.equal(loaded.model.aux.weight, model.aux.weight[keep])
    wave = T.speech_like(0.6, seed=3)
    ids = _emissions(model, wave)[:, keep].argmax(-1).tolist()
    stage = ASRStage(model_dir=str(tmp_path / "asr.pth"))
    stage.setup()
    [out] = stage.process(AudioBatch(task_id="t", dataset_name="d", data=[
        {"audio_filepath": "a.wav", "waveform": wave, "sample_rate": 16000}])).data
    assert out["pred_text"] == greedy_ctc_decode(ids, EN_LABELS)


def test_unknown_output_size_needs_labels(tmp_path):
    model, _ = _tiny(False, aux=7)
    torch.save(model.state_dict(), tmp_path / "x.pt")
    with pytest.raises(ValueError, match="labels"):
        Wav2Vec2CTCModel.load(str(tmp_path), "cpu")
    (tmp_path / "labels.json").write_text('["-", "|", "a", "b", "c", "d", "e"]')
    assert Wav2Vec2CTCModel.load(str(tmp_path), "cpu").labels[2:] == list("abcde")
    torch.save(model.state_dict(), tmp_path / "y.pt")
    with pytest.raises(ValueError, match="several checkpoints"):
        Wav2Vec2CTCModel.load(str(tmp_path), "cpu")


def test_bundle_names_map_to_their_parameters():
    bundles = torchaudio_asr_bundles()
    b = bundles["wav2vec2_fairseq_base_ls960_asr_ls960.pth"]
    assert b is pipelines.WAV2VEC2_ASR_BASE_960H
    assert "wav2vec2_fairseq_large_lv60k_asr_ls960.pth" in bundles
    assert "wav2vec2_voxpopuli_base_10k_asr_de.pt" in bundles


@pytest.mark.slow
def test_published_base_960h_file_layout(tmp_path):
    """WAV2VEC2_ASR_BASE_960H's architecture (95M parameters, random weights) saved as the
    published file: named like it, with fairseq's 32 output rows; loaded by name with the
    bundle's parameters and labels."""
    from torchaudio.models import wav2vec2_base

    torch.manual_seed(0)
    model = wav2vec2_base(aux_num_out=32).eval()
    path = tmp_path / "wav2vec2_fairseq_base_ls960_asr_ls960.pth"
    torch.save(model.state_dict(), path)
    loaded = Wav2Vec2CTCModel.load(str(path), "cpu")
    assert loaded.labels == EN_LABELS and not loaded.normalize_waveform
    wave = np.asarray(T.speech_like(0.3, seed=1), dtype=np.float32)
    keep = [0, *range(4, 32)]
    ids = _emissions(model, wave)[:, keep].argmax(-1).tolist()
    assert loaded.transcribe([wave]) == [greedy_ctc_decode(ids, EN_LABELS)]
