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
def test_language_and_task_reach_the_decoder(tmp_path_factory, language, task, prompt):
    # without timestamp tokens: random weights would emit them after <|notimestamps|> (a trained
    # model does not) and generate() then goes on with further segments, unlike the oracle
    tiny_whisper = T.make_tiny_whisper_model(str(tmp_path_factory.mktemp("w") / "w"),
                                             timestamp_tokens=False)
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


def _ts(model, seconds):
    return model.model.generation_config.no_timestamps_token_id + 1 + round(seconds / 0.02)


def test_timestamp_tokens_become_segments(tiny_whisper):
    """Whisper's segment grammar on known token ids: <|t0|> text <|t1|><|t1|> text <|t2|>."""
    model = WhisperModel.load(tiny_whisper, "cpu")
    tok = model.processor.tokenizer
    hi, yo = tok.encode("hi there", add_special_tokens=False), tok.encode("yo", add_special_tokens=False)
    assert tok.convert_ids_to_tokens([_ts(model, 0.0), _ts(model, 30.0)]) == ["<|0.00|>",
                                                                              "<|30.00|>"]
    ids = [_ts(model, 0.0), *hi, _ts(model, 1.0), _ts(model, 1.0), *yo, _ts(model, 2.5)]
    assert model._segments(ids, 30.0, 3.0) == [
        {"start": 30.0, "end": 31.0, "text": "hi there"},
        {"start": 31.0, "end": 32.5, "text": "yo"}]
    # open at the end: runs to the chunk's end; past the audio: clamped; specials skipped
    en = tok.convert_tokens_to_ids("<|en|>")
    assert model._segments([_ts(model, 0.4), en, *hi, _ts(model, 9.0), *yo], 0.0, 2.0) == [
        {"start": 0.4, "end": 2.0, "text": "hi there"}, {"start": 2.0, "end": 2.0, "text": "yo"}]
    # a timestamp going back does not make segments overlap; text-less pairs are dropped
    assert model._segments([_ts(model, 1.0), *hi, _ts(model, 1.5), _ts(model, 0.2), *yo,
                            _ts(model, 0.6), _ts(model, 0.8), _ts(model, 0.9)], 0.0, 2.0) == [
        {"start": 1.0, "end": 1.5, "text": "hi there"}, {"start": 1.5, "end": 1.5, "text": "yo"}]


def test_asr_stage_returns_whisper_timestamps(tiny_whisper):
    """Random weights give arbitrary text, so the structure is asserted: ordered segments
    within the audio, chunk offsets applied, their text is the transcript's text."""
    waves = [T.speech_like(1.5, seed=1), T.noise(0.7, amp=0.3), T.speech_like(2.5, seed=3)]
    records = [{"audio_filepath": f"w{i}.wav", "waveform": w, "sample_rate": 16000}
               for i, w in enumerate(waves)]
    stage = ASRStage(model_dir=tiny_whisper, model_type="whisper", return_timestamps=True,
                     model_kwargs={"language": "en", "max_new_tokens": 24,
                                   "chunk_length_s": 1.0})
    assert stage.outputs() == (["data"], ["pred_text", "pred_timestamps"])
    batch = AudioBatch(task_id="t", dataset_name="d", data=records)
    out = check_stage_contract(stage, batch)[0].data
    stage.setup()
    assert [(r["pred_text"], r["pred_timestamps"]) for r in stage.process(batch).data] == [
        (r["pred_text"], r["pred_timestamps"]) for r in out]
    assert sum(len(r["pred_timestamps"]) for r in out) > 3
    for r, wave in zip(out, waves, strict=True):
        segs, duration = r["pred_timestamps"], len(wave) / 16000
        assert all(set(s) == {"start", "end", "text"} and s["text"] for s in segs)
        times = [t for s in segs for t in (s["start"], s["end"])]
        assert times == sorted(times) and all(0 <= t <= duration for t in times)
        assert "".join("".join(s["text"].split()) for s in segs) == "".join(
            r["pred_text"].split())
    # three 1 s chunks: the segments of each chunk alone, shifted by its start
    pieces = stage._model.transcribe_with_timestamps([waves[2][:16000], waves[2][16000:32000],
                                                      waves[2][32000:]])
    shifted = [{**s, "start": s["start"] + k, "end": s["end"] + k}
               for k, (_, segs) in enumerate(pieces) for s in segs]
    assert out[2]["pred_timestamps"] == [
        {**s, "start": pytest.approx(s["start"]), "end": pytest.approx(s["end"])}
        for s in shifted]
    assert max(s["start"] for s in shifted) > 2.0
    with pytest.raises(ValueError, match="timestamps"):
        ASRStage(model_dir=tiny_whisper, model_type="wav2vec2_hf", return_timestamps=True)
