"""SQUIM objective (STOI, PESQ, SI-SDR estimates) loaded from a local state_dict file, as a user
with torchaudio's published squim_objective_dns2020.pth would load it."""

import numpy as np
import pytest
import torch
from curator.testing import check_stage_contract
from curator_audio import AudioBatch, TorchSquimQualityFilterStage, TorchSquimQualityMetricsStage
from curator_audio import testing as T
from curator_audio.stages.squim import load_squim_objective


def test_published_base_architecture_state_dict_round_trips(tmp_path):
    from torchaudio.models import squim_objective_base

    path = T.make_squim_objective_weights(str(tmp_path / "squim_objective_dns2020.pth"), seed=1)
    saved = torch.load(path, weights_only=True)
    assert set(saved) == set(squim_objective_base().state_dict())   # the published key layout
    model = load_squim_objective(path)
    for k, v in model.state_dict().items():
        assert torch.equal(v, saved[k]), k
    with pytest.raises(ValueError, match="not a SQUIM objective state_dict"):
        load_squim_objective(path, model_config=T.TINY_SQUIM_CONFIG)


def _task(audio_dir):
    return AudioBatch(task_id="s", dataset_name="d", data=[
        {"audio_filepath": "speech", "waveform": T.speech_like(0.5, seed=1), "sample_rate": 16000},
        {"audio_filepath": "noise", "waveform": T.noise(0.5, amp=0.3), "sample_rate": 16000},
        {"audio_filepath": "speech8k", "waveform": T.speech_like(0.3, sr=8000, seed=2),
         "sample_rate": 8000},
        {"audio_filepath": str(audio_dir / "bad" / "truncated.flac")},
        {"audio_filepath": "blip", "waveform": np.zeros(100, np.float32), "sample_rate": 16000}])


def test_metrics_stage_scores_match_the_model_and_rejects_bad(tiny_squim, audio_dir):
    stage = TorchSquimQualityMetricsStage(model_path=tiny_squim, model_config=T.TINY_SQUIM_CONFIG)
    out = check_stage_contract(stage, _task(audio_dir))[0]
    stage.setup()
    out = stage.process(_task(audio_dir))
    assert [r["audio_filepath"] for r in out.data] == ["speech", "noise", "speech8k"]
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"] * 2
    model = load_squim_objective(tiny_squim, model_config=T.TINY_SQUIM_CONFIG)
    with torch.inference_mode():
        stoi, pesq, sisdr = model(torch.from_numpy(T.noise(0.5, amp=0.3))[None])
    noise = out.data[1]
    assert (noise["stoi_squim"], noise["pesq_squim"], noise["sisdr_squim"]) == (
        round(float(stoi[0]), 3), round(float(pesq[0]), 3), round(float(sisdr[0]), 3))
    # equal-length waveforms share a batch; scores do not depend on the batch
    one = TorchSquimQualityMetricsStage(model_path=tiny_squim, model_config=T.TINY_SQUIM_CONFIG,
                                        compute_batch_size=1)
    one.setup()  # process() relies on setup() (executors and invoke_stage guarantee it)
    keys = ("audio_filepath", "stoi_squim", "pesq_squim", "sisdr_squim")
    assert [[r[k] for k in keys] for r in one.process(_task(audio_dir)).data] == [
        [r[k] for k in keys] for r in out.data]
    one.drain_rejected()


def test_filter_keeps_records_reaching_the_minimums(tiny_squim, audio_dir):
    metrics = TorchSquimQualityMetricsStage(model_path=tiny_squim, model_config=T.TINY_SQUIM_CONFIG)
    metrics.setup()
    scored = metrics.process(_task(audio_dir))
    pesq = sorted(r["pesq_squim"] for r in scored.data)
    flt = TorchSquimQualityFilterStage(model_path=tiny_squim, model_config=T.TINY_SQUIM_CONFIG,
                                       min_pesq=pesq[1])
    flt.setup()
    kept = flt.process(_task(audio_dir))
    assert sorted(r["pesq_squim"] for r in kept.data) == pesq[1:]
    assert len(flt.drain_rejected()) == 2           # bad audio is rejected, not silently dropped
    with pytest.raises(ValueError, match="min_stoi"):
        TorchSquimQualityFilterStage(model_path=tiny_squim)
    with pytest.raises(ValueError, match="not a file"):
        TorchSquimQualityMetricsStage(model_path=str(audio_dir / "missing.pth"))
