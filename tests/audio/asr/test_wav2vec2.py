import json
import os

import numpy as np
import pytest
from curator import EMPTY_TASK, Pipeline, Resources
from curator.testing import check_stage_contract
from curator_audio import ASRStage, AudioBatch, ManifestReader
from curator_audio import testing as T
from curator_audio.asr.wav2vec2 import Wav2Vec2CTCModel, greedy_ctc_decode


def test_greedy_ctc_decode():
    labels = ["<b>", "|", "a", "b", "c"]
    assert greedy_ctc_decode([2, 2, 0, 2, 3, 1, 1, 4, 0, 0], labels) == "aab c"
    assert greedy_ctc_decode([0, 0, 1], labels) == ""


def test_tiny_model_files_and_load(tiny_model):
    assert sorted(os.listdir(tiny_model)) == ["config.json", "labels.json", "model.pt"]
    config = json.load(open(os.path.join(tiny_model, "config.json")))
    assert config["encoder_num_layers"] == 2 and config["aux_num_out"] == len(T.TINY_LABELS)
    model = Wav2Vec2CTCModel.load(tiny_model, "cpu")
    import torch

    # the saved weights are what the stage loads
    saved = torch.load(os.path.join(tiny_model, "model.pt"), weights_only=True)
    for k, v in model.model.state_dict().items():
        assert torch.equal(v, saved[k]), k


def test_batched_with_padding_equals_one_by_one(tiny_model):
    model = Wav2Vec2CTCModel.load(tiny_model, "cpu")
    waves = [T.speech_like(0.4, seed=1), T.noise(1.0, amp=0.3), T.speech_like(0.7, seed=2)]
    batched = model.transcribe(waves)
    single = [model.transcribe([w])[0] for w in waves]
    assert batched == single
    assert all(set(t) <= set("abcdefghijklmnopqrstuvwxyz' ") for t in batched)
    assert len(set(batched)) > 1   # random weights, but different inputs give different outputs


def test_labels_mismatch_is_a_clear_error(tmp_path):
    path = T.make_tiny_wav2vec2_model(str(tmp_path / "m"))
    json.dump(["<b>", "a"], open(os.path.join(path, "labels.json"), "w"))
    with pytest.raises(ValueError, match="aux_num_out"):
        Wav2Vec2CTCModel.load(path, "cpu")


def test_asr_stage_transcribes_and_rejects_corrupt(tiny_model, manifest):
    [task] = ManifestReader(file_paths=manifest).process(EMPTY_TASK)
    stage = ASRStage(model_dir=tiny_model, inference_batch_size=2)
    out = check_stage_contract(stage, task)[0]
    assert len(out.data) == 5 and all(isinstance(r["pred_text"], str) for r in out.data)
    assert [r["audio_filepath"] for r in out.data] == [r["audio_filepath"] for r in task.data[:5]]
    stage.setup()
    stage.process(task)
    assert len(stage.drain_rejected()) == 4
    # batching does not change the transcripts
    one = ASRStage(model_dir=tiny_model, inference_batch_size=1)
    one.setup()
    assert [r["pred_text"] for r in one.process(task).data] == [r["pred_text"] for r in out.data]
    one.drain_rejected()


def test_device_follows_resources(tiny_model, monkeypatch):
    import torch

    assert ASRStage(model_dir=tiny_model).device == "cpu"
    gpu_stage = ASRStage(model_dir=tiny_model).with_(resources=Resources(cpus=1, gpus=1))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_stage.device == "cpu"                 # asks for a GPU, none present
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert gpu_stage.device == "cuda"


def test_asr_stage_in_pipeline_with_wav2vec2(tiny_model, tmp_path):
    T.write_audio(str(tmp_path / "a.wav"), T.speech_like(0.5))
    T.write_audio(str(tmp_path / "b.flac"), T.speech_like(0.8, seed=3))
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps({"audio_filepath": n, "text": "hi"})
                                                for n in ("a.wav", "b.flac")) + "\n")
    result = Pipeline("asr", stages=[ManifestReader(file_paths=str(tmp_path / "m.jsonl")),
                                     ASRStage(model_dir=tiny_model)]).run()
    recs = [r for t in result for r in t.data]
    assert len(recs) == 2 and all("pred_text" in r for r in recs)
    assert not isinstance(recs[0].get("waveform"), np.ndarray)
    assert isinstance(result[0], AudioBatch)
