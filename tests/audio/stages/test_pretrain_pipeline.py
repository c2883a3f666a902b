"""build_audio_pretrain_pipeline → run → prepare/finalize_audio_pretrain_outputs on generated
long-form audio: the merged manifest, tar and metrics fit together and a re-run gives the same
bytes."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from curator import LocalExecutor
from curator_audio.stages.alm_pretrain import (
    build_audio_pretrain_pipeline,
    finalize_audio_pretrain_outputs,
    prepare_audio_pretrain_outputs,
)


def _word_tokenizer(path) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "thank", "you", "hello", "there", "cat"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(str(path))
    return str(path)


def _seg(start: float, end: float, text: str) -> dict:
    return {"start": start, "end": end, "text": text, "speaker": "s0"}


@pytest.fixture
def setup(tmp_path):
    from curator_audio.testing import tone, write_audio

    audio = tmp_path / "audio"
    for name in ("a", "b", "c"):
        write_audio(str(audio / f"{name}.wav"), tone(seconds=8.0, sr=22050), sr=22050)
    rows = [
        {"id": "a", "audio_filepath": "/elsewhere/a.wav",
         "segments": [_seg(0.5, 2.0, "hello there"), _seg(5.0, 7.0, "the cat")]},
        {"id": "b", "audio_filepath": "b.wav",
         "segments": [_seg(0.0, 2.0, "thank you " * 4), _seg(4.0, 5.0, "hello")]},
        {"id": "c", "audio_filepath": "c.wav", "segments": [_seg(0.0, 1.0, ""), _seg(2.0, 3.0, "cat")]},
    ]
    manifest = tmp_path / "long.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    paths = {"output_manifest_path": str(out / "snippets.jsonl"),
             "metrics_path": str(out / "metrics.json"),
             "output_audio_tar_path": str(out / "audio.tar")}
    pipeline = build_audio_pretrain_pipeline(
        input_manifest=str(manifest), audio_dir=str(audio), output_dir=str(out),
        max_duration_sec=2.5, max_segment_gap_in_snippet=1.0,
        tokenizer_path=_word_tokenizer(tmp_path / "tok"), ngram_n=2, ngram_max_count=2,
        records_per_task=2, **paths)
    return pipeline, paths


def _run_and_finalize(pipeline, paths):
    assert sum(prepare_audio_pretrain_outputs(**paths).values()) >= 0
    result = pipeline.run(LocalExecutor(num_workers=1), summary=False, progress=False)
    assert result.ok
    return finalize_audio_pretrain_outputs(**paths)


def _read(paths) -> tuple[bytes, bytes, bytes]:
    return tuple(open(paths[k], "rb").read() for k in
                 ("output_manifest_path", "output_audio_tar_path", "metrics_path"))


def test_build_run_finalize_gives_consistent_files_and_a_rerun_the_same_bytes(setup) -> None:
    import soundfile as sf

    pipeline, paths = setup
    assert [s.name for s in pipeline.stages][0] == "ReadLongFormManifest"
    summary = _run_and_finalize(pipeline, paths)
    assert summary.ok and summary.tar_written, str(summary)
    assert summary.shards == {"manifest": 2, "metrics": 2, "tar": 2}
    rows = [json.loads(x) for x in open(paths["output_manifest_path"], encoding="utf-8")]
    assert [r["snippet_id"] for r in rows] == ["a-0_500-2_000", "a-5_000-7_000",
                                               "b-4_000-5_000", "c-2_000-3_000"]
    with tarfile.open(paths["output_audio_tar_path"]) as tar:
        names = tar.getnames()
        assert names == [r["audio_filepath"] for r in rows] == sorted(names)
        assert all("/" not in n for n in names)
        wave, sr = sf.read(io.BytesIO(tar.extractfile(names[1]).read()))
    assert sr == 16000 and len(wave) == 32000 and rows[1]["duration"] == 2.0
    metrics = json.load(open(paths["metrics_path"], encoding="utf-8"))
    assert (metrics["num_input_audios"], metrics["num_output_snippets"]) == (3, 4)
    assert metrics["output_total_segments"] == 4 and metrics["output_total_duration_sec"] == 5.5
    assert metrics["dropped"]["repetition"] == 1 and metrics["dropped"]["empty"] == 1
    assert metrics["dropped_repetition_examples"] == [("thank you " * 4).strip()]
    assert metrics["snippet_duration_histogram_30s"] == {"0-30": 4}
    assert [(p["id"], p["out_snippets"]) for p in metrics["per_original"]] == [
        ("a", 2), ("b", 1), ("c", 1)]
    first = _read(paths)

    again = _run_and_finalize(pipeline, paths)  # shards replaced, not appended
    assert again.ok and again.shards == summary.shards and _read(paths) == first


def test_a_missing_member_is_reported_and_shards_kept_and_prepare_modes(setup) -> None:
    import os

    pipeline, paths = setup
    _run_and_finalize(pipeline, paths)
    tar_dir = os.path.dirname(paths["output_audio_tar_path"])
    tar_shards = sorted(f for f in os.listdir(tar_dir) if f.startswith("audio.tar.shard-"))
    os.remove(os.path.join(tar_dir, tar_shards[0]))  # a's and b's snippets: task 0
    summary = finalize_audio_pretrain_outputs(**paths, delete_shards=True)
    assert not summary.ok and not summary.shards_deleted
    assert summary.rows_without_member == ["a-0_500-2_000", "a-5_000-7_000", "b-4_000-5_000"]
    assert "3 rows without member" in str(summary)
    metrics = json.load(open(paths["metrics_path"], encoding="utf-8"))
    assert metrics["dropped"]["missing_audio"] == 3 and metrics["num_output_snippets"] == 1
    assert prepare_audio_pretrain_outputs(**paths) == {"manifest": 2, "metrics": 2, "tar": 1}
    with pytest.raises(FileExistsError, match="mode='overwrite'"):
        prepare_audio_pretrain_outputs(**paths, mode="error")
    assert sum(prepare_audio_pretrain_outputs(**paths, mode="overwrite").values()) == 5
    assert prepare_audio_pretrain_outputs(**paths) == {"manifest": 0, "metrics": 0, "tar": 0}

    done = _run_and_finalize(pipeline, paths)  # a fresh run, then shards deleted when asked
    assert done.ok
    final = finalize_audio_pretrain_outputs(**paths, delete_shards=True)
    assert final.ok and final.shards_deleted and final.manifest_rows == 4
    assert sorted(os.listdir(tar_dir)) == ["audio.tar", "metrics.json", "snippets.jsonl"]


def test_a_resumed_run_keeps_the_skipped_tasks_shards_and_finalizes_the_same(setup,
                                                                             tmp_path) -> None:
    import os

    pipeline, paths = setup
    out = os.path.dirname(paths["output_manifest_path"])
    checkpoint = str(tmp_path / "ckpt")
    files, shard_times = [], []
    for _ in range(2):  # the second run skips every finished partition: no shard rewritten
        prepare_audio_pretrain_outputs(**paths)  # default mode: shards kept for the resume
        assert pipeline.run(LocalExecutor(num_workers=1), checkpoint_dir=checkpoint,
                            summary=False, progress=False).ok
        shard_times.append({f: os.stat(os.path.join(out, f)).st_mtime_ns
                            for f in os.listdir(out) if ".shard-" in f})
        summary = finalize_audio_pretrain_outputs(**paths)
        assert summary.ok and summary.manifest_rows == 4
        files.append(_read(paths))
    assert len(shard_times[0]) == 6 and shard_times[0] == shard_times[1]
    assert files[0] == files[1]
