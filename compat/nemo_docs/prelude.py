"""Imported (by ``run.py``) before a case runs, in NeMo's venv (``HARNESS_SIDE=nemo``) or
Curator's (``HARNESS_SIDE=curator``). It swaps what cannot run here for local stand-ins and
records what each pipeline returns:

* NeMo: ``Pipeline.run`` without an executor runs the stages in this process through NeMo's own
  ``BaseStageAdapter`` (NeMo's default executor, Xenna, needs a Ray cluster); the stage code is
  NeMo's, unchanged.
* both: the user's ``RayClient().start()`` / ``stop()`` do nothing (no cluster for the page's
  client; Curator's pipelines run on the embedded executor, and its Ray executors still start
  their own), and every ``Pipeline.run`` appends the records of the tasks it returned to
  ``$HARNESS_OUT/returned.jsonl``.
"""

from __future__ import annotations

import json
import os

SIDE = os.environ["HARNESS_SIDE"]
OUT = os.environ["HARNESS_OUT"]


def _records(tasks) -> list[dict]:
    rows: list[dict] = []
    for t in tasks or []:
        data = getattr(t, "data", None)
        if hasattr(t, "to_pandas") and not isinstance(data, list):
            try:
                rows += t.to_pandas().to_dict("records")
            except Exception:
                continue
    return rows


def _record(tasks) -> None:
    with open(os.path.join(OUT, "returned.jsonl"), "a") as fh:
        for r in _records(tasks):
            fh.write(json.dumps(r, default=str, sort_keys=True) + "\n")


def _nemo() -> None:
    from nemo_curator.backends.base import BaseExecutor, BaseStageAdapter
    from nemo_curator.core.client import RayClient
    from nemo_curator.pipeline import pipeline as pmod
    from nemo_curator.tasks import EmptyTask

    class InProcessExecutor(BaseExecutor):
        """Runs each stage over all tasks in this process, NeMo's adapter doing the work."""

        def execute(self, stages, initial_tasks=None):
            tasks = list(initial_tasks or [EmptyTask()])
            for stage in stages:
                stage.setup_on_node(None, None)
                stage.setup(None)
                adapter = BaseStageAdapter(stage)
                size = max(1, stage.batch_size or 1)
                out = []
                for i in range(0, len(tasks), size):
                    out += [t for t in adapter.process_batch(tasks[i:i + size])
                            if type(t).__name__ not in ("NoneTask", "FailedTask")]
                stage.teardown()
                tasks = out
            return tasks

    run = pmod.Pipeline.run

    def patched(self, executor=None, initial_tasks=None, **kw):
        result = run(self, executor or InProcessExecutor(), initial_tasks, **kw)
        _record(result)
        return result

    pmod.Pipeline.run = patched
    RayClient.start = lambda self, *a, **k: None
    RayClient.stop = lambda self, *a, **k: None


def _curator() -> None:
    import curator

    run = curator.Pipeline.run

    def patched(self, *a, **kw):
        result = run(self, *a, **kw)
        _record(list(result))
        return result

    class NoClusterRayClient(curator.RayClient):  # the public name: survives module moves
        """The user's ``RayClient``: no cluster (Curator's Ray executors keep the real one)."""

        def start(self, *a, **k):
            return self

        def stop(self, *a, **k):
            return None

    curator.Pipeline.run = patched
    curator.RayClient = NoClusterRayClient


_nemo() if SIDE == "nemo" else _curator()
