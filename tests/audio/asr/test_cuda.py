"""The CUDA path of the ASR models and the SQUIM stage (skipped without a CUDA GPU): with
``Resources(gpus=1)`` the model is on the GPU, memory is allocated there, and the outputs agree
with the CPU run's."""

from __future__ import annotations

import numpy as np
import pytest
from curator import Resources
from curator_audio import ASRStage, AudioBatch
from curator_audio import testing as T

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

GPU = Resources(cpus=1, gpus=1)


def _task() -> AudioBatch:
    waves = [T.speech_like(0.4, seed=1), T.noise(1.0, amp=0.3), T.speech_like(0.7, seed=2),
             T.speech_like(1.3, seed=3), T.tone(440, 0.6)]
    return AudioBatch(task_id="t", dataset_name="d",
                      data=[{"audio_filepath": f"w{i}", "waveform": w, "sample_rate": 16000}
                            for i, w in enumerate(waves)])


def _transcripts(stage: ASRStage) -> list[str]:
    stage.setup()
    return [r["pred_text"] for r in stage.process(_task()).data]


@pytest.mark.parametrize("fixture,model_type", [("tiny_model", "wav2vec2"),
                                                ("tiny_hf_wav2vec2", "wav2vec2_hf")])
def test_wav2vec2_on_cuda_matches_cpu(request, fixture, model_type) -> None:
    model_dir = request.getfixturevalue(fixture)
    cpu = _transcripts(ASRStage(model_dir=model_dir, model_type=model_type,
                                inference_batch_size=2))
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    gpu_stage = ASRStage(model_dir=model_dir, model_type=model_type,
                         inference_batch_size=2).with_(resources=GPU)
    assert gpu_stage.device == "cuda"
    gpu = _transcripts(gpu_stage)
    assert next(gpu_stage._model.model.parameters()).is_cuda
    assert torch.cuda.max_memory_allocated() > 0
    assert gpu == cpu and len(set(cpu)) > 1


@pytest.mark.parametrize("fp16", [True, False])
def test_whisper_on_cuda(tiny_whisper, fp16) -> None:
    kw = {"model_dir": tiny_whisper, "model_type": "whisper", "inference_batch_size": 2,
          "model_kwargs": {"language": "en", "max_new_tokens": 8, "fp16": fp16}}
    cpu = _transcripts(ASRStage(**kw))
    stage = ASRStage(**kw).with_(resources=GPU)
    gpu = _transcripts(stage)
    model = stage._model.model
    assert next(model.parameters()).is_cuda
    assert model.dtype == (torch.float16 if fp16 else torch.float32)
    assert len(gpu) == len(cpu) and all(isinstance(t, str) for t in gpu)
    if not fp16:  # fp32 greedy decoding is the same on both devices
        assert gpu == cpu


def test_squim_stage_on_cuda_matches_cpu(tiny_squim) -> None:
    from curator_audio.stages.squim import TorchSquimQualityMetricsStage

    waves = [T.speech_like(1.0, seed=4), T.noise(0.5, amp=0.3), T.speech_like(0.5, seed=5)]
    kw = {"model_path": tiny_squim, "model_config": T.TINY_SQUIM_CONFIG}
    cpu = TorchSquimQualityMetricsStage(**kw)
    gpu = TorchSquimQualityMetricsStage(**kw).with_(resources=GPU)
    cpu.setup()
    gpu.setup()
    assert gpu.device == "cuda" and next(gpu._model.parameters()).is_cuda
    np.testing.assert_allclose(np.array(gpu.scores(waves)), np.array(cpu.scores(waves)),
                               atol=2e-3)
