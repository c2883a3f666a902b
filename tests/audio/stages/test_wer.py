from curator_audio import AudioBatch, GetPairwiseWerStage


def test_pairwise_wer_in_percent_and_cer_and_rejects_missing():
    task = AudioBatch(task_id="w", dataset_name="d", data=[
        {"audio_filepath": "a", "text": "The cat sat.", "pred_text": "the cat sat"},
        {"audio_filepath": "b", "text": "the cat sat on the mat", "pred_text": "the cat sit on mat"},
        {"audio_filepath": "c", "text": "abcd"}])
    stage = GetPairwiseWerStage(cer_key="cer")
    out = stage.process(task)
    assert [r["wer"] for r in out.data] == [0.0, 33.33]
    assert out.data[1]["cer"] == round(100 * 5 / 22, 2)   # a->i (1) + "the " deleted (4), 22 chars
    assert [r.record["audio_filepath"] for r in stage.drain_rejected()] == ["c"]


def test_normalisation_can_be_turned_off():
    task = AudioBatch(task_id="w", dataset_name="d", data=[
        {"audio_filepath": "a", "text": "Hello world", "pred_text": "hello world"}])
    assert GetPairwiseWerStage(lowercase=False).process(task).data[0]["wer"] == 50.0
