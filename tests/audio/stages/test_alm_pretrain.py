"""ALM long-form pretraining stages: reading, overlap filtering, planning, repetition filter."""

from __future__ import annotations

import json

import pytest
from curator import EmptyTask
from curator.errors import ConfigError
from curator_audio import AudioBatch
from curator_audio.stages.alm_pretrain import (
    OverlapFilterStage,
    ReadLongFormManifestStage,
    SnippetCutPlannerStage,
    SnippetRepetitionFilterStage,
    find_overlapping_indices,
    make_snippet_id,
    plan_snippets,
    relativize_segments,
)


def _seg(start: float, end: float, text: str = "hello") -> dict:
    return {"start": start, "end": end, "text": text}


def _batch(records: list[dict]) -> AudioBatch:
    return AudioBatch(task_id="t", dataset_name="d", data=records)


def test_reader_rejects_bad_rows_with_reasons_and_streams_tasks(tmp_path) -> None:
    rows = ['{"id": "a", "audio_filepath": "/x/a.wav", "segments": []}', "not json",
            '{"audio_filepath": "/x/b.wav"}', '{"id": "a", "audio_filepath": "/x/c.wav"}',
            '{"id": "d"}', '{"id": 7, "audio_filepath": "sub/e.wav"}']
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    stage = ReadLongFormManifestStage(input_manifest=str(manifest), audio_dir="/audio",
                                      records_per_task=1)
    batches = stage.process(EmptyTask())
    assert [r["audio_filepath"] for b in batches for r in b.data] == ["/audio/a.wav",
                                                                        "/audio/e.wav"]
    assert batches[1].data[0]["id"] == "7"
    assert [r.reason for r in stage.drain_rejected()] == [
        "malformed_manifest_line", "missing_id", "duplicate_id", "missing_audio_filepath"]
    rel = ReadLongFormManifestStage(input_manifest=str(manifest), audio_dir="/audio",
                                    audio_path_resolution="relative")
    assert rel.process(EmptyTask())[0].data[1]["audio_filepath"] == "/audio/sub/e.wav"


def test_reader_refuses_two_rows_reading_the_same_file_and_bad_options(tmp_path) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"id": "a", "audio_filepath": "/1/x.wav"}) + "\n"
                        + json.dumps({"id": "b", "audio_filepath": "/2/x.wav"}) + "\n")
    with pytest.raises(ConfigError, match="audio_path_resolution='relative'"):
        ReadLongFormManifestStage(input_manifest=str(manifest), audio_dir="/a").process(
            EmptyTask())
    with pytest.raises(ConfigError, match="unknown audio_path_resolution"):
        ReadLongFormManifestStage(input_manifest=str(manifest), audio_path_resolution="x")
    with pytest.raises(FileNotFoundError):
        ReadLongFormManifestStage(input_manifest=str(tmp_path / "no.jsonl")).process(EmptyTask())


def test_overlap_filter_drops_empty_and_overlapping_pairs_and_counts() -> None:
    segs = [_seg(5, 6), _seg(0, 2), _seg(1, 3), _seg(3.0, 3.2, ""), _seg(7, 9), _seg(8.9, 10)]
    stage = OverlapFilterStage(min_overlap_sec=0.5)
    bad = {"id": "bad", "audio_filepath": "/b.wav", "segments": [{"start": "x", "end": 1}]}
    out = stage.process(_batch([{"id": "a", "audio_filepath": "/a.wav", "segments": segs}, bad]))
    [rec] = out.data
    assert [(s["start"], s["end"]) for s in rec["segments"]] == [(5, 6), (7, 9), (8.9, 10)]
    assert rec["_pretrain_long_form"] == {
        "original_seg_count": 6, "original_seg_duration": 10.0, "dropped_empty": 1,
        "dropped_overlap": 2, "kept_after_filter_count": 3}
    assert [r.reason for r in stage.drain_rejected()] == ["invalid_segments"]
    assert find_overlapping_indices([_seg(0, 10), _seg(4, 4.1)], 0.5) == {0, 1}  # contained


def test_planner_packs_by_span_and_gap_and_counts_what_it_leaves_out() -> None:
    segs = [_seg(0, 2), _seg(2.5, 4), _seg(40, 41), _seg(41, 60), _seg(100, 100.1),
            _seg(200, 203, "")]
    snippets, drops = plan_snippets(segs, max_duration_sec=10, min_duration_sec=0.5,
                                    max_segment_gap_in_snippet=30)
    assert [(s["start"], s["end"]) for s in snippets] == [(0, 4), (40, 41)]
    assert drops == {"too_long": 1, "too_short": 1, "no_text": 1}
    stage = SnippetCutPlannerStage(max_duration_sec=10, min_duration_sec=0.5)
    [rec] = stage.process(_batch([{"id": "a", "audio_filepath": "/a", "segments": segs}])).data
    assert len(rec["_snippet_plan"]) == 2 and rec["_pretrain_long_form"]["planned_snippets"] == 2
    with pytest.raises(ConfigError):
        SnippetCutPlannerStage(min_duration_sec=5, max_duration_sec=1)
    rel = relativize_segments([{"start": 39.99, "end": 41.2, "words": [{"start": 40.5}]}], 40, 41)
    assert rel == [{"start": 0.0, "end": 1.0, "words": [{"start": 0.5}]}]
    assert make_snippet_id("a.b/c", 1.5, 12.25) == "a_b_c-1_500-12_250"


def _word_tokenizer(path) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "thank", "you", "so", "much", "the", "cat"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(str(path))
    return str(path)


def test_repetition_filter_drops_repeating_snippets_with_a_local_tokenizer(tmp_path) -> None:
    plan = [{"start": 0, "end": 5, "segments": [_seg(0, 5, "thank you " * 5)]},
            {"start": 6, "end": 9, "segments": [_seg(6, 9, "the cat so much")]}]
    stage = SnippetRepetitionFilterStage(tokenizer_path=_word_tokenizer(tmp_path / "tok"),
                                         ngram_n=2, ngram_max_count=3)
    stage.setup()
    [rec] = stage.process(_batch([{"id": "a", "audio_filepath": "/a", "_snippet_plan": plan}])
                          ).data
    assert [s["start"] for s in rec["_snippet_plan"]] == [6]
    meta = rec["_pretrain_long_form"]
    assert (meta["dropped_repetition"], meta["planned_snippets"]) == (1, 1)
    assert meta["filtered_repetition_texts"] == [("thank you " * 5).strip()]
    with pytest.raises(ConfigError, match="not a local directory"):
        SnippetRepetitionFilterStage(tokenizer_path="openai/whisper-large-v3").setup()


def test_extraction_writer_and_metrics_on_generated_audio(tmp_path) -> None:
    import io
    import tarfile

    import soundfile as sf
    from curator_audio.stages.alm_pretrain import (
        PretrainMetricsAggregatorStage,
        SnippetExtractionStage,
        SnippetManifestWriterStage,
    )
    from curator_audio.testing import tone, write_audio

    write_audio(str(tmp_path / "long.wav"), tone(seconds=6.0, sr=24000), sr=24000)
    (tmp_path / "broken.wav").write_bytes(b"RIFF....garbage")
    rows = [{"id": "rec.1", "audio_filepath": "long.wav", "text": "",
             "segments": [_seg(0.5, 1.5, "one"), _seg(1.6, 2.0, "two"), _seg(4.0, 5.0, "three")]},
            {"id": "silent", "audio_filepath": "long.wav.none", "segments": [_seg(0, 1, "")]},
            {"id": "broken", "audio_filepath": "broken.wav", "segments": [_seg(0, 1, "x")]}]
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    [batch] = ReadLongFormManifestStage(input_manifest=str(manifest), audio_dir=str(tmp_path),
                                        audio_path_resolution="relative").process(EmptyTask())
    batch = OverlapFilterStage().process(batch)
    batch = SnippetCutPlannerStage(max_duration_sec=2.0, max_segment_gap_in_snippet=1.0
                                   ).process(batch)
    tar_path = str(tmp_path / "out" / "audio.tar")
    extract = SnippetExtractionStage(output_dir=str(tmp_path / "out"),
                                     output_audio_tar_path=tar_path)
    snippets = extract.process(batch)
    assert [r.reason for r in extract.drain_rejected()] == ["undecodable_audio"]
    assert [r["snippet_id"] for r in snippets.data] == ["rec_1-0_500-2_000", "rec_1-4_000-5_000",
                                                        None]
    first = snippets.data[0]
    assert first["audio_filepath"] == "rec_1-0_500-2_000.flac" and first["text"] == "one two"
    assert [(s["start"], s["end"]) for s in first["segments"]] == [(0.0, 1.0), (1.1, 1.5)]
    with tarfile.open(f"{tar_path}.shard-{batch.task_id}.tar") as tar:
        wave, sr = sf.read(io.BytesIO(tar.extractfile("rec_1-0_500-2_000.flac").read()))
    assert sr == 16000 and len(wave) == 24000 and first["duration"] == 1.5

    manifest_out = str(tmp_path / "out" / "snippets.jsonl")
    for _ in range(2):  # a re-run replaces the shards, never appends
        SnippetManifestWriterStage(output_path=manifest_out).process(snippets)
    lines = open(f"{manifest_out}.shard-{batch.task_id}.jsonl").read().splitlines()
    assert [json.loads(x)["snippet_id"] for x in lines] == ["rec_1-0_500-2_000",
                                                            "rec_1-4_000-5_000"]
    assert "_pretrain_long_form" not in json.loads(lines[0])
    metrics_out = str(tmp_path / "out" / "metrics.jsonl")
    PretrainMetricsAggregatorStage(output_path=metrics_out).process(snippets)
    metrics = [json.loads(x) for x in open(f"{metrics_out}.shard-{batch.task_id}.jsonl")]
    assert [(m["id"], m["is_stub"], m["out_segments"]) for m in metrics] == [
        ("rec.1", False, 2), ("rec.1", False, 1), ("silent", True, 0)]
    assert metrics[2]["dropped"]["empty"] == 1 and "filtered_texts" not in metrics[1]

    dry = SnippetExtractionStage(output_dir=str(tmp_path / "dry"), output_audio_tar_path="",
                                 dry_run=True).process(batch)
    assert dry.data[0]["duration"] == 1.5 and not (tmp_path / "dry").exists()


def test_the_pretraining_stages_chain_in_a_pipeline(tmp_path) -> None:
    from curator import LocalExecutor, Pipeline
    from curator_audio.stages.alm_pretrain import (
        PretrainMetricsAggregatorStage,
        SnippetExtractionStage,
        SnippetManifestWriterStage,
    )
    from curator_audio.testing import tone, write_audio

    write_audio(str(tmp_path / "a.wav"), tone(seconds=3.0))
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"id": "a", "audio_filepath": "a.wav",
                                    "segments": [_seg(0.5, 2.0, "hi there")]}) + "\nbad\n")
    out = tmp_path / "out"
    result = Pipeline("pretrain", stages=[
        ReadLongFormManifestStage(input_manifest=str(manifest), audio_dir=str(tmp_path)),
        OverlapFilterStage(), SnippetCutPlannerStage(),
        SnippetExtractionStage(output_dir=str(out), output_audio_tar_path=str(out / "a.tar")),
        SnippetManifestWriterStage(output_path=str(out / "snippets.jsonl")),
        PretrainMetricsAggregatorStage(output_path=str(out / "metrics.jsonl")),
    ]).run(LocalExecutor(num_workers=1), summary=False)
    assert result.ok and result.rejected.counts == {"ReadLongFormManifest": 1}
    [shard] = out.glob("snippets.jsonl.shard-*.jsonl")
    assert json.loads(shard.read_text())["snippet_id"] == "a-0_500-2_000"
    assert len(list(out.glob("a.tar.shard-*.tar"))) == 1
