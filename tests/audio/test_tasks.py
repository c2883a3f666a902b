from curator_audio import AudioBatch


def test_audio_batch_counts_validates_and_derives():
    batch = AudioBatch(task_id="t", dataset_name="d",
                       data=[{"audio_filepath": "a.wav", "text": "x", "lang": "en"}],
                       metadata={"source_files": ["m.jsonl"]}, filepath_key="audio_filepath")
    assert batch.num_items == 1 and batch.validate()
    child = batch.derive([], suffix=2)
    assert isinstance(child, AudioBatch) and child.task_id == "t_2"
    assert child.metadata["source_files"] == ["m.jsonl"] and child.filepath_key == "audio_filepath"
    assert not AudioBatch(task_id="t", dataset_name="d", data=[{"text": "x"}]).validate()
