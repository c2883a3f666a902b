import pytest
from curator_audio import AudioBatch, PreserveByValueStage


def _task():
    return AudioBatch(task_id="f", dataset_name="d", data=[
        {"audio_filepath": "a", "wer": 10.0}, {"audio_filepath": "b", "wer": 30},
        {"audio_filepath": "c", "wer": 50.5}, {"audio_filepath": "d"},
        {"audio_filepath": "e", "wer": "high"}])


@pytest.mark.parametrize("op,kept", [("eq", ["b"]), ("ne", ["a", "c"]), ("lt", ["a"]),
                                     ("le", ["a", "b"]), ("gt", ["c"]), ("ge", ["b", "c"])])
def test_each_operator(op, kept):
    stage = PreserveByValueStage(input_value_key="wer", target_value=30, operator=op)
    out = stage.process(_task())
    assert [r["audio_filepath"] for r in out.data] == kept
    assert [r.record["audio_filepath"] for r in stage.drain_rejected()] == ["d", "e"]


def test_config_errors():
    with pytest.raises(ValueError, match="operator"):
        PreserveByValueStage(input_value_key="wer", target_value=1, operator="approx")
    with pytest.raises(ValueError, match="input_value_key"):
        PreserveByValueStage(target_value=1)
    # converted as a spec's value is ("1" -> 1.0); what cannot be converted is named
    assert PreserveByValueStage(input_value_key="x", target_value="1").target_value == 1.0
    with pytest.raises(ValueError, match="target_value"):
        PreserveByValueStage(input_value_key="x", target_value="one")
