"""wav2vec2 from Hugging Face Wav2Vec2ForCTC directories (tiny random weights in the hub file
layout of facebook/wav2vec2-base-960h and -large-960h-lv60)."""

import os

import pytest
import torch
from curator import EMPTY_TASK
from curator_audio import ASRStage, ManifestReader
from curator_audio import testing as T
from curator_audio.asr.hf_wav2vec2 import HFWav2Vec2CTCModel, is_hf_directory
from curator_audio.asr.wav2vec2 import Wav2Vec2CTCModel, greedy_ctc_decode


def test_hub_layout_is_detected_and_loaded(tiny_hf_wav2vec2, tiny_model):
    assert {"config.json", "model.safetensors", "vocab.json", "preprocessor_config.json",
            "tokenizer_config.json"} <= set(os.listdir(tiny_hf_wav2vec2))
    assert is_hf_directory(tiny_hf_wav2vec2) and not is_hf_directory(tiny_model)
    # model_type "wav2vec2" takes either layout
    assert isinstance(Wav2Vec2CTCModel.load(tiny_hf_wav2vec2, "cpu"), HFWav2Vec2CTCModel)
    assert isinstance(Wav2Vec2CTCModel.load(tiny_model, "cpu"), Wav2Vec2CTCModel)


@pytest.mark.parametrize("lv60", [True, False])
def test_greedy_ctc_transcripts_match_the_logits(tmp_path, lv60):
    path = T.make_tiny_hf_wav2vec2_model(str(tmp_path / "m"), seed=3, lv60=lv60)
    model = HFWav2Vec2CTCModel.load(path, "cpu")
    wave = T.speech_like(0.6, seed=8)
    # oracle: normalise as preprocessor_config says, argmax, collapse, drop blanks (<pad>)
    x = torch.from_numpy((wave - wave.mean()) / (wave.std() + 1e-7)).float()[None]
    with torch.inference_mode():
        ids = model.model(x).logits.argmax(-1)[0].tolist()
    labels = ["<b>" if t == "<pad>" else t for t in T.HF_W2V2_VOCAB]
    specials = {"<s>", "</s>", "<unk>"}
    expected = greedy_ctc_decode([i for i in ids], labels, blank_id=0, word_delimiter="|")
    for s in specials:
        expected = expected.replace(s, "")
    assert model.transcribe([wave]) == [" ".join(expected.split())]
    assert model.transcribe([wave])[0].strip()   # random weights still emit letters


def test_batched_equals_one_by_one_with_attention_mask(tiny_hf_wav2vec2):
    model = HFWav2Vec2CTCModel.load(tiny_hf_wav2vec2, "cpu")
    waves = [T.speech_like(0.4, seed=1), T.noise(1.0, amp=0.3), T.speech_like(0.7, seed=2)]
    batched = model.transcribe(waves)
    assert batched == [model.transcribe([w])[0] for w in waves]
    assert len(set(batched)) > 1


def test_asr_stage_with_hf_directory_rejects_corrupt(tiny_hf_wav2vec2, manifest):
    [task] = ManifestReader(file_paths=manifest).process(EMPTY_TASK)
    stage = ASRStage(model_dir=tiny_hf_wav2vec2, model_type="wav2vec2_hf")
    stage.setup()
    out = stage.process(task)
    assert len(out.data) == 5
    assert all(set(r["pred_text"]) <= set(T.HF_W2V2_VOCAB[5:]) | {" "} for r in out.data)
    assert len(stage.drain_rejected()) == 4
