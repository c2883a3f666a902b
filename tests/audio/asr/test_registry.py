import numpy as np
import pytest
from curator_audio import ASRModel, ASRStage, AudioBatch, get_asr_model, register_asr_model
from curator_audio.asr import base


class _EchoModel(ASRModel):
    """A plugin-style model: 'transcribes' a waveform as its length in samples."""

    sample_rate = 8000

    @classmethod
    def load(cls, model_dir, device):
        return cls()

    def transcribe(self, waveforms):
        return [str(len(w)) for w in waveforms]


@pytest.fixture
def echo_registered():
    register_asr_model("echo_test", _EchoModel)
    yield
    base._MODELS.pop("echo_test", None)


def test_plugin_model_type_is_used_by_asr_stage(echo_registered, tmp_path):
    stage = ASRStage(model_dir=str(tmp_path), model_type="echo_test", inference_batch_size=2)
    task = AudioBatch(task_id="t", dataset_name="d", data=[
        {"audio_filepath": "x", "waveform": np.zeros(1600, np.float32), "sample_rate": 16000},
        {"audio_filepath": "y", "waveform": np.zeros(400, np.float32), "sample_rate": 8000}])
    stage.setup()
    out = stage.process(task)
    assert [r["pred_text"] for r in out.data] == ["800", "400"]   # resampled to the model's rate


def test_registry_errors(echo_registered, tmp_path):
    with pytest.raises(ValueError, match="already registered"):
        register_asr_model("echo_test", type("Other", (_EchoModel,), {}))
    with pytest.raises(TypeError, match="not an ASRModel"):
        register_asr_model("bad", object)
    with pytest.raises(ValueError, match="unknown ASR model_type 'nope'.*wav2vec2"):
        get_asr_model("nope")
    with pytest.raises(ValueError, match="unknown ASR model_type"):
        ASRStage(model_dir=str(tmp_path), model_type="nope")
    with pytest.raises(ValueError, match="ASRStage: model_dir"):
        ASRStage(model_dir=str(tmp_path / "missing"))
