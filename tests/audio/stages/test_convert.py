"""AudioToDocumentStage: audio records become text documents, audio left out."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import torch
from curator_audio import AudioBatch, AudioToDocumentStage
from curator_text import DocumentBatch


def _batch(records: list[dict], dataset_name: str = "ds") -> AudioBatch:
    return AudioBatch(task_id="t0", dataset_name=dataset_name, data=records,
                      metadata={"source_files": ["m.jsonl"]})


def test_one_row_per_record_with_task_identity_kept() -> None:
    recs = [{"audio_filepath": f"/{i}.wav", "text": f"text{i}", "duration": 1.5 * i}
            for i in range(5)]
    [doc] = AudioToDocumentStage().process_batch([_batch(recs)])
    assert isinstance(doc, DocumentBatch)
    assert isinstance(doc.data, pd.DataFrame)
    assert list(doc.data["audio_filepath"]) == [f"/{i}.wav" for i in range(5)]
    assert list(doc.data["text"]) == [f"text{i}" for i in range(5)]
    assert (doc.task_id, doc.dataset_name) == ("t0", "ds")
    assert doc.metadata["source_files"] == ["m.jsonl"]


def test_audio_arrays_segments_and_tensors_left_out(caplog) -> None:
    rec = {"audio_filepath": "/a.wav", "text": "hi", "waveform": np.zeros(16, np.float32),
           "sample_rate": 16000, "segments": [{"start": 0.0}], "audio": b"x",
           "emb": torch.zeros(3)}
    with caplog.at_level(logging.WARNING):
        [doc] = AudioToDocumentStage().process_batch([_batch([rec])])
    assert sorted(doc.data.columns) == ["audio_filepath", "sample_rate", "text"]
    assert "'emb'" in caplog.text


def test_each_audio_batch_its_own_document_batch_and_empty_input() -> None:
    stage = AudioToDocumentStage()
    assert stage.process_batch([]) == []
    out = stage.process_batch([_batch([{"audio_filepath": "/a.wav"}], "a"),
                               _batch([{"audio_filepath": "/b.wav"}], "b")])
    assert [d.dataset_name for d in out] == ["a", "b"]
    assert [list(d.data["audio_filepath"]) for d in out] == [["/a.wav"], ["/b.wav"]]


def test_a_text_filter_runs_on_the_transcripts() -> None:
    from curator_text import ScoreFilter, WordCountFilter

    recs = [{"audio_filepath": "/a.wav", "text": "one two three four"},
            {"audio_filepath": "/b.wav", "text": "hi"}]
    [doc] = AudioToDocumentStage().process_batch([_batch(recs)])
    kept = ScoreFilter(WordCountFilter(min_words=3), text_field="text").process(doc)
    assert list(kept.to_pandas()["audio_filepath"]) == ["/a.wav"]
