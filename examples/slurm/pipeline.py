"""A small text pipeline on a Ray cluster spanning a Slurm allocation.

    sbatch examples/slurm/run.sbatch          # from the repository root (see that script)

:class:`curator.SlurmRayClient` starts the Ray head on this node (the allocation's first, where
the sbatch script runs) and one Ray worker per other node with ``srun``, and stops them at the
end. Generates a few JSONL files of short documents under ``{workdir}/raw`` if they are missing,
keeps documents of at least 3 words and writes them to ``{workdir}/out``; malformed records and
failed tasks go to ``{workdir}/rejected`` (dropped documents are only counted: use
``ScoreFilter(..., split=True)`` to keep them there). The last line printed is a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import random


def generate(raw_dir: str, docs: int, files: int = 4, seed: int = 7) -> None:
    """``docs`` documents in ``files`` JSONL files; about a quarter are too short to keep."""
    rng = random.Random(seed)
    words = ["data", "curation", "at", "scale", "on", "many", "nodes", "with", "ray", "slurm"]
    os.makedirs(raw_dir, exist_ok=True)
    for f in range(files):
        with open(os.path.join(raw_dir, f"docs_{f:02d}.jsonl"), "w") as fh:
            for i in range(docs // files):
                n = rng.choice([1, 2, 5, 8, 12])
                fh.write(json.dumps({"id": f"{f}-{i}", "text": " ".join(rng.choices(words, k=n))})
                         + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="slurm_example")
    parser.add_argument("--docs", type=int, default=400)
    parser.add_argument("--executor", default="ray_data", choices=["ray_data", "ray_actor_pool"])
    args = parser.parse_args()

    from curator import Pipeline, SlurmRayClient
    from curator_text import JsonlReader, JsonlWriter, ScoreFilter, WordCountFilter

    workdir = os.path.abspath(args.workdir)
    raw = os.path.join(workdir, "raw")
    if not os.path.isdir(raw):
        generate(raw, args.docs)
    pipeline = Pipeline("slurm_example", stages=[
        JsonlReader(raw, files_per_partition=1),
        ScoreFilter(WordCountFilter(min_words=3)),
        JsonlWriter(os.path.join(workdir, "out"), mode="overwrite"),
    ])
    with SlurmRayClient() as client:
        import ray

        address, nodes = client.address, len([n for n in ray.nodes() if n.get("Alive")])
        print(f"Ray cluster at {address}: {nodes} node(s), {ray.cluster_resources()}", flush=True)
        result = pipeline.run(args.executor, rejected_dir=os.path.join(workdir, "rejected"),
                              raise_on_failure=False)
    kept = result.stats.stages[-2].items_out  # what the filter passed on to the writer
    print(json.dumps({"address": address, "nodes": nodes, "ok": result.ok,
                      "kept": kept, "files": [f for t in result for f in t.data],
                      "rejected": result.rejected.total,
                      "job": os.environ.get("SLURM_JOB_ID"),
                      "ray_running_after": ray.is_initialized()}))


if __name__ == "__main__":
    main()
