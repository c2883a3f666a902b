"""Work spreads over every node: on a two-node localhost cluster (the fixture of
``test_multinode``: a head and a second node, 1 CPU each, started with ``ray start`` and stopped
by process id; one cluster for this module), a small Ray Data run puts tasks on both nodes.

Ray reuses a task's worker for the next task, so tiny tasks used to pile onto whichever node's
worker started first (all 8 on one node, under load). The planner gives every CPU group at least
one worker per node, and on several nodes Ray Data runs it as an actor pool spread over them that
starts work only once every actor is up.
"""

from __future__ import annotations

import pytest

from tests.core.executors.test_multinode import _driver, cluster  # noqa: F401 (the fixture)

pytestmark = pytest.mark.ray

SPREAD = """
    import json
    from dataclasses import dataclass
    import ray
    from curator import Pipeline, ProcessingStage, RayDataExecutor, Task

    @dataclass
    class NodeOf(ProcessingStage):
        '''Records the Ray node id the task ran on.'''
        name: str = "NodeOf"

        def process(self, task):
            import ray
            return task.derive({"n": task.data, "node": ray.get_runtime_context().get_node_id()})

    out = {"runs": []}
    for _ in range(2):
        tasks = [Task(f"t{i}", "spread", i) for i in range(8)]
        result = Pipeline("spread", stages=[NodeOf()]).run(RayDataExecutor(), initial_tasks=tasks,
                                                           summary=False)
        out["runs"].append({"ok": result.ok, "n": sorted(t.data["n"] for t in result),
                            "nodes": sorted({t.data["node"] for t in result}),
                            "workers": result.stats.stages[0].workers})
    ray.init()
    out["alive"] = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
    print(json.dumps(out))
"""


def test_ray_data_spreads_a_small_run_over_both_nodes(cluster, tmp_path):  # noqa: F811
    info = _driver(SPREAD, tmp_path, RAY_ADDRESS=cluster["address"])
    assert len(info["alive"]) == 2
    for run in info["runs"]:
        assert run["ok"] and run["n"] == list(range(8))  # every task once
        assert run["workers"] >= 2  # at least one per node
        assert run["nodes"] == info["alive"], run  # both node ids appear
