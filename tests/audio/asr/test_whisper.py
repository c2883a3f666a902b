"""Whisper from a Hugging Face WhisperForConditionalGeneration directory (tiny random weights,
the file names, config keys and generation config of OpenAI's checkpoints)."""

import os

import numpy as np
import pytest
import torch
from curator import EMPTY_TASK
from curator.testing import check_stage_contract
from curator_audio import ASRStage, AudioBatch, ManifestReader
from curator_audio import testing as T
from curator_audio.asr import get_asr_model
from curator_audio.asr.whisper import WhisperModel


def _greedy_oracle(model_dir, wave, prompt_tokens, steps):
    """Greedy decoding with plain forward passes from an explicit decoder prompt: what Whisper
    must produce for ``language``/``task`` when the options reach the model."""
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    proc = WhisperProcessor.from_pretrained(model_dir)
    model = WhisperForConditionalGeneration.from_pretrained(model_dir).eval()
    tok = proc.tokenizer
    ids = tok.convert_tokens_to_ids(prompt_tokens)
    feats = proc.feature_extractor([wave], sampling_rate=16000, return_tensors="pt").input_features
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    out = []
    with torch.inference_mode():
        enc = model.model.encoder(feats).last_hidden_state
        for _ in range(steps):
            logits = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([ids + out])).logits
            nxt = int(logits[0, -1].argmax())
            if nxt == eot:
                break
            out.append(nxt)
    return tok.decode(out, skip_special_tokens=True).strip()


def test_layout_is_the_hub_layout(tiny_whisper):
    assert {"config.json", "generation_config.json", "model.safetensors", "vocab.json",
            "merges.txt", "preprocessor_config.json", "tokenizer_config.json"} <= set(
        os.listdir(tiny_whisper))
    assert get_asr_model("whisper") is WhisperModel


@pytest.mark.parametrize("language,task,prompt", [
    ("de", "translate", ["<|startoftranscript|>", "<|de|>", "<|translate|>", "<|notimestamps|>"]),
    ("en", "transcribe", ["<|startoftranscript|>", "<|en|>", "<|transcribe|>",
                          "<|notimestamps|>"]),
])
def test_language_and_task_reach_the_decoder(tiny_whisper, language, task, prompt):
    wave = T.speech_like(0.6, seed=4)
    model = WhisperModel.load(tiny_whisper, "cpu", language=language, task=task,
                              max_new_tokens=12)
    assert model.transcribe([wave]) == [_greedy_oracle(tiny_whisper, wave, prompt, 12)]


def test_options_change_the_output_and_batching_does_not(tiny_whisper):
    waves = [T.speech_like(0.4, seed=1), T.noise(1.0, amp=0.3), T.speech_like(0.7, seed=2)]
    de = WhisperModel.load(tiny_whisper, "cpu", language="de", task="translate", max_new_tokens=8)
    fr = WhisperModel.load(tiny_whisper, "cpu", language="fr", max_new_tokens=8)
    batched = de.transcribe(waves)
    assert batched == [de.transcribe([w])[0] for w in waves]
    assert batched != fr.transcribe(waves)
    assert len(set(batched)) > 1


def test_long_form_is_chunked_and_joined(tiny_whisper):
    model = WhisperModel.load(tiny_whisper, "cpu", language="en", chunk_length_s=1.0,
                              max_new_tokens=6)
    a, b, c = T.speech_like(1.0, seed=5), T.noise(1.0, amp=0.2, seed=6), T.speech_like(0.5, seed=7)
    assert [len(x) for x in model.chunks(np.concatenate([a, b, c]))] == [16000, 16000, 8000]
    parts = [t for t in model.transcribe([a, b, c]) if t]
    assert model.transcribe([np.concatenate([a, b, c])]) == [" ".join(parts)]


def test_bad_options_are_clear_errors(tiny_whisper):
    with pytest.raises(ValueError, match="task"):
        WhisperModel.load(tiny_whisper, "cpu", task="summarise")
    with pytest.raises(ValueError, match="chunk_length_s"):
        WhisperModel.load(tiny_whisper, "cpu", chunk_length_s=45)
    with pytest.raises(ValueError, match="model_kwargs"):
        ASRStage(model_dir=tiny_whisper, model_type="whisper", model_kwargs="en")


def test_asr_stage_with_whisper_directory(tiny_whisper, manifest):
    [task] = ManifestReader(file_paths=manifest).process(EMPTY_TASK)
    stage = ASRStage(model_dir=tiny_whisper, model_type="whisper", inference_batch_size=4,
                     model_kwargs={"language": "en", "task": "transcribe", "max_new_tokens": 6})
    out = check_stage_contract(stage, task)[0]
    assert len(out.data) == 5 and all(isinstance(r["pred_text"], str) for r in out.data)
    stage.setup()
    stage.process(task)
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"] * 4
    model = WhisperModel.load(tiny_whisper, "cpu", language="en", max_new_tokens=6)
    one = AudioBatch(task_id="x", dataset_name="d", data=[out.data[0]])
    from curator_audio.decode import record_waveform

    assert out.data[0]["pred_text"] == model.transcribe(
        [record_waveform(one.data[0], target_sr=16000)[0]])[0]


def test_remote_model_dir_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="local directory"):
        WhisperModel.load("s3://bucket/whisper", "cpu")
