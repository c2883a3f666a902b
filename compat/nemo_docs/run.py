"""Runs NeMo Curator's documentation and tutorial code (from ``extract.py``: text, image, video,
audio, dedup) twice, with its paths and models replaced by tiny local ones of the case's modality: as written, in a venv with ``nemo-curator`` from
PyPI, and after ``curator migrate`` with Curator. Compares the documents each run kept.

    python compat/nemo_docs/run.py --cases /tmp/nemo_docs_cases --nemo-python /tmp/nemo-venv/bin/python \\
        [--migrate sed --curator-src /tmp/curator-head] [--only 012,040] [--json result.json]

``--migrate sed`` rewrites imports with the sed the migration guide used to give, and
``--curator-src`` puts an older checkout's packages first on ``sys.path`` (the "before" figure).
A case is *runnable* when NeMo's own run succeeds here (no GPU, network, LLM or cluster needed);
it *agrees* when Curator's run succeeds and keeps the same documents: the same multiset of
records written under the output paths and returned by ``Pipeline.run`` (compared by ``text``,
or the whole record without id columns when there is no ``text``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUT_KEYS = {"file_paths", "input_path", "input_dir", "input_file", "data_path", "data_dir",
              "input_data_dir", "input_data_path", "input_files", "manifest_path",
              "input_manifest", "input_video_path", "input_image_path", "video_dir", "audio_dir"}
OUTPUT_KEYS = {"path", "output_path", "output_dir", "cache_path", "output_file",
               "ids_to_remove_path", "id_generator_path", "checkpoint_path"}
READERS = {"JsonlReader", "ParquetReader", "JsonlReaderStage", "ParquetReaderStage"}
WRITERS = {"JsonlWriter", "ParquetWriter"}
_PATHLIKE = re.compile(r"^(\./|/|~/|s3://|gs://)?[\w.\-]+(/[\w.\-*]*)*/?$")

GOOD = ["The committee published a detailed report on economic growth in the region this year, "
        "and the findings were discussed by many researchers at the annual meeting.",
        "Researchers explain the results of the experiment in the paper and describe how the "
        "measurements were taken over several weeks in the laboratory near the river.",
        "The history of the city is described in this careful article, which covers the old "
        "market, the harbour and the people who lived there for hundreds of years.",
        "Students learned how plants turn sunlight into energy, and the teacher showed them "
        "leaves under a microscope so they could see the small green cells inside."]
BAD = ["click here buy now", "win win win win win win win win win win win win win win",
       "Visit https://example.com/a?b=1 http://spam.example.org/x www.junk.example/y now",
       "!!!! #### $$$$ %%%% ^^^^ &&&& **** (((( )))) ---- ++++ ==== ~~~~",
       "Le chat est sur la table et il dort tranquillement pendant que nous allons au marché.",
       "lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum",
       "x", "", "Read more\nRead more\nRead more\nRead more\nRead more",
       "THIS IS ALL CAPS TEXT THAT SHOULD LOOK LIKE SHOUTING TO MOST READERS OF IT HERE",
       "see <a href=\"http://example.com/page\">the page</a> for more details about it"]


def documents(seed: int) -> list[dict]:
    rng = random.Random(seed)
    docs = [*GOOD, *BAD, GOOD[0], BAD[1]]  # one exact duplicate each
    rng.shuffle(docs)
    return [{"id": f"doc-{seed}-{i}", "text": t} for i, t in enumerate(docs)]


SPEECH = ["the cat sat on the mat", "seven ships sailed at dawn", "a quiet river runs east",
          "we read the report today"]


def write_audio(path: Path) -> None:
    """A JSONL manifest (or a directory of two) naming generated WAV files: tones, noise and
    silence, with ``text``/``pred_text``/``duration`` as NeMo's audio pages expect."""
    import numpy as np
    import soundfile as sf

    def one(p: Path, seed: int) -> None:
        p.parent.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        lines = []
        for i, text in enumerate(SPEECH):
            sr = 16000
            t = np.arange(int(sr * (1.0 + 0.5 * i))) / sr
            wave = 0.3 * np.sin(2 * np.pi * (200 + 100 * i) * t) + 0.05 * rng.standard_normal(
                t.size)
            wav = p.parent / "audio" / f"{p.stem}_{i}.wav"
            wav.parent.mkdir(parents=True, exist_ok=True)
            sf.write(wav, wave.astype("float32"), sr)
            pred = text if i % 2 == 0 else text.replace("the", "a")
            lines.append({"audio_filepath": str(wav.resolve()), "text": text, "pred_text": pred,
                          "duration": round(t.size / sr, 3)})
        p.write_text("".join(json.dumps(r) + "\n" for r in lines))

    if path.suffix in (".jsonl", ".json"):
        one(path, 0)
    else:
        for i in range(2):
            one(path / f"manifest_{i}.jsonl", i)


def write_images(path: Path) -> None:
    """Two WebDataset tar shards of generated JPEGs with captions and JSON."""
    import io
    import tarfile

    import numpy as np
    from PIL import Image

    path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for shard in range(2):
        with tarfile.open(path / f"{shard:05d}.tar", "w") as tar:
            for i in range(4):
                key = f"{shard:05d}{i:04d}"
                buf = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, (48 + 8 * i, 64, 3), dtype=np.uint8)).save(
                    buf, format="JPEG")
                for ext, data in ((".jpg", buf.getvalue()), (".txt", SPEECH[i].encode()),
                                  (".json", json.dumps({"caption": SPEECH[i]}).encode())):
                    info = tarfile.TarInfo(key + ext)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))


def write_videos(path: Path) -> None:
    """Two short generated MP4 videos (PyAV), each with a hard cut in the middle."""
    import av
    import numpy as np

    files = [path] if path.suffix == ".mp4" else [path / f"video_{i}.mp4" for i in range(2)]
    for k, f in enumerate(files):
        f.parent.mkdir(parents=True, exist_ok=True)
        with av.open(str(f), "w") as out:
            stream = out.add_stream("libx264", rate=24)
            stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
            for i in range(72):
                color = (40 + 60 * k, 200, 90) if i < 36 else (220, 30, 160)
                frame = np.zeros((48, 64, 3), dtype=np.uint8) + np.array(color, dtype=np.uint8)
                frame[:, (i % 60):(i % 60) + 4] = 255
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                    out.mux(packet)
            for packet in stream.encode():
                out.mux(packet)


def write_input(path: Path, modality: str = "text") -> None:
    """The case's input of its modality: text gets two JSONL and two Parquet files (a directory)
    or one file of the named kind; audio a manifest of WAVs; image tar shards; video MP4s."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if modality == "audio":
        return write_audio(path)
    if modality == "image":
        return write_images(path)
    if modality == "video":
        return write_videos(path)

    def one(p: Path, seed: int) -> None:
        p.parent.mkdir(parents=True, exist_ok=True)
        rows = documents(seed)
        if p.suffix == ".parquet":
            pq.write_table(pa.Table.from_pylist(rows), p)
        else:
            p.write_text("".join(json.dumps(r) + "\n" for r in rows))

    if path.suffix in (".jsonl", ".json", ".parquet"):
        one(path, 0)
        return
    for i in range(2):
        one(path / f"part_{i}.jsonl", i)
        one(path / f"part_{i}.parquet", i)


def train_models(models: Path) -> None:
    import fasttext

    models.mkdir(parents=True, exist_ok=True)
    for name, labels in (("quality", (("hq", GOOD), ("lq", BAD[:4] + BAD[5:7]))),
                         ("lid", (("en", GOOD + BAD[:4]), ("fr", [BAD[4], "nous allons au marché "
                                                                  "le matin avec le chat"])))):
        lines = [f"__label__{lab} {t.replace(chr(10), ' ')}" for lab, texts in labels
                 for t in texts if t] * 10
        random.Random(0).shuffle(lines)
        data = models / f"{name}.txt"
        data.write_text("\n".join(lines) + "\n")
        model = fasttext.train_supervised(str(data), epoch=25, lr=0.1, dim=8, minCount=1,
                                          wordNgrams=2, thread=1, seed=0, verbose=0)
        model.save_model(str(models / f"{name}.bin"))


class _Paths(ast.NodeTransformer):
    """Rewrites path and model strings to local ones; notes the inputs to create."""

    def __init__(self) -> None:
        self.inputs: set[str] = set()
        self.names: dict[str, str] = {}

    def _local(self, value: str, role: str) -> str:
        if role == "model":
            return "models/lid.bin" if "lid" in value.lower() else "models/quality.bin"
        clean = re.sub(r"^(\./|/|~/|s3://|gs://)", "", value).replace("path/to/", "")
        clean = clean.replace("*", "").rstrip("/") or "data"
        if role == "input":
            local = "input/" + clean
            self.inputs.add(local)
            return local
        return "out/" + clean  # the folder structure stays: results/ and results/x relate

    @staticmethod
    def _is_path(node: ast.AST) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and bool(_PATHLIKE.match(node.value))
                and not re.match(r"^(text|application|image|audio|video)/", node.value)
                and ("/" in node.value
                or node.value.endswith((".jsonl", ".json", ".parquet", ".bin", ".ftz"))))

    def _role(self, key: str | None, call: str | None, value: str) -> str | None:
        if value.endswith((".bin", ".ftz")) or key in ("model_path", "model_dir"):
            return "model"
        if key in INPUT_KEYS or (key is None and call in READERS):
            return "input"
        if key in OUTPUT_KEYS or (key is None and call in WRITERS):
            return "output"
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        call = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        for i, arg in enumerate(node.args):
            if self._is_path(arg) and i == 0:
                role = self._role(None, call, arg.value) or "output"
                node.args[i] = ast.Constant(self._local(arg.value, role))
        for kw in node.keywords:
            if self._is_path(kw.value):
                role = self._role(kw.arg, call, kw.value.value) or "output"
                kw.value = ast.Constant(self._local(kw.value.value, role))
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self._is_path(
                node.value):
            name = node.targets[0].id.lower()
            role = ("model" if "model" in name or node.value.value.endswith((".bin", ".ftz"))
                    else "input" if any(k in name for k in ("input", "data_dir", "data_path",
                                                               "raw", "source", "src"))
                    else "output")
            node.value = ast.Constant(self._local(node.value.value, role))
            return node
        self.generic_visit(node)
        return node


FRAGMENT_HEAD = """from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.text.io.reader import JsonlReader
pipeline = Pipeline(name="doc_fragment")
pipeline.add_stage(JsonlReader(file_paths="input/data"))
"""
FRAGMENT_HEADS = {
    "text": FRAGMENT_HEAD,
    "audio": """from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.audio import ManifestReader
pipeline = Pipeline(name="doc_fragment")
pipeline.add_stage(ManifestReader(manifest_path="input/data"))
""",
    "image": """from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.file_partitioning import FilePartitioningStage
from nemo_curator.stages.image.io.image_reader import ImageReaderStage
pipeline = Pipeline(name="doc_fragment")
pipeline.add_stage(FilePartitioningStage(file_paths="input/data", files_per_partition=1,
                                         file_extensions=[".tar"]))
pipeline.add_stage(ImageReaderStage())
""",
    "video": """from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.video.io.video_reader import VideoReader
pipeline = Pipeline(name="doc_fragment")
pipeline.add_stage(VideoReader(input_video_path="input/data"))
""",
}
FRAGMENT_HEADS["dedup"] = FRAGMENT_HEAD


def complete(code: str, modality: str = "text") -> str:
    """A fragment that adds stages to a ``pipeline`` it never builds gets a reader in front and
    a run at the end (the page's own context: "Initialize pipeline, read stage, etc.")."""
    tree = ast.parse(code)
    assigned = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if "pipeline" in used and "pipeline" not in assigned:
        runs = any(isinstance(n, ast.Attribute) and n.attr == "run" for n in ast.walk(tree))
        return FRAGMENT_HEADS[modality] + code + ("" if runs else "\npipeline.run()\n")
    return code


def prepare(code: str, modality: str = "text") -> tuple[str, set[str]]:
    tree = ast.parse(complete(code, modality))
    paths = _Paths()
    tree = paths.visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n", paths.inputs


SED = [(r"^from nemo_curator\.(stages\.text|tasks)[^ ]* import", "from curator_text import"),
       (r"^from nemo_curator[^ ]* import", "from curator import")]


def migrate(code: str, how: str) -> tuple[str, list[str]]:
    if how == "sed":
        for pat, rep in SED:
            code = re.sub(pat, rep, code, flags=re.M)
        return code, []
    from curator.migrate import migrate_source

    res = migrate_source(code, "case.py")
    return res.text, [str(u) for u in res.unmapped] + ([res.error] if res.error else [])


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def outputs(work: Path, inputs: set[str]) -> list[str]:
    """The records written under ``out/`` and returned by ``Pipeline.run``, normalised."""
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for f in sorted((work / "out").rglob("*")) if (work / "out").exists() else []:
        if f.name.startswith(".") or any(p.startswith(".") or p == "cache"
                                         for p in f.relative_to(work).parts) \
                or f.name.endswith("_id_generator.json"):
            continue
        if f.suffix == ".parquet":
            rows += pq.read_table(f).to_pylist()
        elif f.suffix in (".jsonl", ".json"):
            for line in f.read_text(errors="replace").splitlines():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue
    returned = work / "returned.jsonl"
    if returned.exists():
        rows += [json.loads(line) for line in returned.read_text().splitlines()]
    out = []
    for r in rows:
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("text"), str):
            out.append(r["text"])
        else:
            out.append(json.dumps({k: v for k, v in r.items()
                                   if "id" not in k.lower() and "file" not in k.lower()},
                                  sort_keys=True, default=str))
    return sorted(out)


def run_side(python: str, code: str, work: Path, side: str, env_extra: dict[str, str],
             timeout: int) -> tuple[bool, str]:
    (work / "case.py").write_text(code)
    env = {**os.environ, "HARNESS_SIDE": side, "HARNESS_OUT": str(work),
           "PYTHONPATH": os.pathsep.join([str(HERE), *env_extra.get("PYTHONPATH", "").split(
               os.pathsep)]).rstrip(os.pathsep), "RAY_ADDRESS": "", "CUDA_VISIBLE_DEVICES": ""}
    env = {k: v for k, v in env.items() if v != "" or k == "CUDA_VISIBLE_DEVICES"}
    try:
        proc = subprocess.run([python, "-c", "import prelude; import runpy; "
                               "runpy.run_path('case.py', run_name='__main__')"],
                              cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timeout"
    tail = (proc.stderr or "").strip().splitlines()
    return proc.returncode == 0, tail[-1] if tail else ""


NEEDS = re.compile(
    r"CommonCrawl|Wikipedia|Arxiv|ArXiv|VLLM|vllm|OpenAI|LLMClient|InferenceServer|"
    r"Classifier\(|EmbeddingCreatorStage|EmbeddingModelStage|DataDesigner|Translation|"
    r"SemanticDeduplication|Nemotron|Gliner|GLiNER|Omni|PDF|Pdf|Interleaved|KMeans|"
    r"huggingface|AutoTokenizer|MegatronTokenizer|SlurmRay|sentence-transformers|"
    # image, video and audio stages whose models live on a hub or need NeMo's toolkit or a GPU
    r"ImageEmbeddingStage|ImageAestheticFilterStage|ImageNSFWFilterStage|DALI|dali_|"
    r"InferenceAsrNemoStage|InferenceSortformer|PyAnnote|SEDInference|SpeakerSeparation|"
    r"UTMOS|SIGMOS|BandFilterStage|CreateInitialManifestFleurs|Qwen|Cosmos|Caption|"
    r"TransNetV2|CLIP|Clip(Aesthetic|Embedding)|InternVideo|Motion.*Gpu|nvdec|NVDEC|"
    r"ImageDuplicatesRemovalStage|ImageSemanticDeduplication")
"""Code that needs a GPU, the network, an LLM endpoint or a hub model: not run here."""


def _gpu_dedup(code: str, err: str) -> bool:
    return "cudf" in (err or "") and bool(re.search(
        r"(Exact|Fuzzy)DeduplicationWorkflow|TextDuplicatesRemovalWorkflow", code))


def _dedup_formula(work: Path, inputs: set[str], kept: list[str]) -> bool:
    """Removal output: each input text once; identification only: one id per extra copy."""
    import pyarrow.parquet as pq

    texts: list[str] = []
    for rel in inputs or {"input/data"}:
        base = work / rel
        parquet = any("parquet" in f for f in (base.as_posix(),)) or \
            "parquet" in (work / "case.py").read_text()
        files = [base] if base.is_file() else sorted(base.glob("*.parquet" if parquet
                                                               else "*.jsonl"))
        for f in files:
            texts += (pq.read_table(f).column("text").to_pylist() if f.suffix == ".parquet"
                      else [json.loads(line)["text"] for line in f.read_text().splitlines()])
    kept_texts = [k for k in kept if not k.startswith("{")]
    if kept_texts:
        return sorted(kept_texts) == sorted(set(texts))
    found = list((work / "out").rglob("duplicates/*.parquet")) if (work / "out").exists() else []
    if not found:
        return None  # the code never runs the workflow
    ids = sum(pq.read_table(f).num_rows for f in found)
    return ids == len(texts) - len(set(texts))


def run_case(case: Path, root: Path, args: argparse.Namespace, modality: str = "text") -> dict:
    code = case.read_text()
    info: dict = {"case": case.name, "modality": modality}
    if NEEDS.search(code):
        info.update(status="skipped (GPU/network/LLM/hub model)",
                    unmapped=migrate(code, args.migrate)[1] if _parses(code) else ["not python"])
        return info
    try:
        prepared, inputs = prepare(code, modality)
    except SyntaxError as exc:
        info.update(status="not python", error=str(exc))
        return info
    migrated, unmapped = migrate(prepared, args.migrate)
    info["unmapped"] = unmapped
    results = {}
    for side, python, text, extra in (
            ("nemo", args.nemo_python, prepared, {}),
            ("curator", sys.executable, migrated,
             {"PYTHONPATH": os.pathsep.join(str(Path(args.curator_src) / "packages" / p / "src")
                                            for p in ("core", "text", "web", "image", "audio",
                                                      "video", "llm", "interleaved"))}
             if args.curator_src else {})):
        work = root / case.stem / side
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        shutil.copytree(root / "_models", work / "models")
        for rel in inputs or {"input/data"}:
            write_input(work / rel, modality)
        ok, err = run_side(python, text, work, side, extra, args.timeout)
        results[side] = (ok, err, outputs(work, inputs) if ok else None)
        if side == "nemo" and not ok and not args.both and not _gpu_dedup(code, err):
            results["curator"] = (False, "not run (NeMo's run failed)", None)
            break
    (n_ok, n_err, n_out), (c_ok, c_err, c_out) = results["nemo"], results["curator"]
    info.update(nemo_ok=n_ok, nemo_error=n_err, curator_ok=c_ok, curator_error=c_err)
    if not n_ok and _gpu_dedup(code, n_err):
        # NeMo's dedup needs cuDF: compare with what its formula keeps instead (one record of
        # each text; ids of all the others reported)
        same = _dedup_formula(root / case.stem / "curator", inputs, c_out) if c_ok else False
        info["status"] = ("curator fails (dedup)" if not c_ok else
                          "agree (no records)" if same is None else
                          "agree with NeMo's dedup formula" if same else
                          "differs from NeMo's dedup formula")
    elif not n_ok:
        info["status"] = "nemo cannot run here"
    elif not c_ok:
        info["status"] = "curator fails"
    elif n_out == c_out:
        info["status"] = "agree" if n_out else "agree (no records)"
    else:
        diff = (Counter(n_out) - Counter(c_out), Counter(c_out) - Counter(n_out))
        info.update(status="differ", only_nemo=list(diff[0].elements())[:5],
                    only_curator=list(diff[1].elements())[:5])
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="/tmp/nemo_docs_cases")
    ap.add_argument("--work", default="/tmp/nemo_docs_work")
    ap.add_argument("--nemo-python", default="/tmp/nemo-venv/bin/python")
    ap.add_argument("--migrate", choices=("tool", "sed"), default="tool")
    ap.add_argument("--curator-src", help="an older checkout whose packages go first")
    ap.add_argument("--only", help="comma-separated case number prefixes")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--both", action="store_true",
                    help="run Curator's side also where NeMo's run failed")
    ap.add_argument("--json", help="write the per-case results here")
    ap.add_argument("--modality", help="only the cases of these modalities (comma-separated)")
    args = ap.parse_args()
    root = Path(args.work)
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "_models" / "lid.bin").exists():
        train_models(root / "_models")
    cases = sorted(Path(args.cases).glob("[0-9]*.py"))
    listed = Path(args.cases) / "cases.json"
    modality_of = ({c["case"]: c.get("modality", "text") for c in json.loads(listed.read_text())}
                   if listed.exists() else {})
    if args.modality:
        cases = [c for c in cases if modality_of.get(c.name, "text") in args.modality.split(",")]
    if args.only:
        cases = [c for c in cases if c.name.split("_", 1)[0] in args.only.split(",")]
    results = []
    for case in cases:
        info = run_case(case, root, args, modality_of.get(case.name, "text"))
        results.append(info)
        print(f"{info['case']:<70} {info['status']:<22} "
              f"{(info.get('curator_error') or info.get('nemo_error') or '')[:120]}", flush=True)
    counts = Counter(r["status"] for r in results)
    by_modality: dict[str, Counter] = {}
    for r in results:
        by_modality.setdefault(r["modality"], Counter())[r["status"]] += 1
    for m, c in sorted(by_modality.items()):
        print(f"{m}: {dict(c)}")
    runnable = [r for r in results if r.get("nemo_ok")]
    agree = [r for r in runnable if r["status"].startswith("agree")]
    print(json.dumps({"cases": len(results), "statuses": counts,
                      "nemo_runnable": len(runnable), "agree": len(agree),
                      "migrate_clean": sum(1 for r in results if not r.get("unmapped"))}))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
