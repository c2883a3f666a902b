"""Shared fixtures for the whole test suite.

``ray_cluster`` (session scope): ONE real local Ray cluster for every Ray test of the run, started
with :class:`curator.RayClient` (2 CPUs, a 200 MB object store, Ray's dashboard on as by default:
``XennaExecutor`` needs its state API) on first use and stopped at the end of the session. A
test that starts a cluster of its own and needs no dashboard may pass
``RayClient(dashboard=False)``. Ray executors find it running and use it instead of
starting their own, so a Ray test only pays for its own work::

    import pytest
    from curator import Pipeline, RayDataExecutor

    @pytest.mark.ray
    def test_my_stage_on_ray(ray_cluster):
        result = Pipeline("p", stages=[...]).run(RayDataExecutor())

The fixture yields the started ``RayClient``; ``ray_cluster.address`` is the GCS address a
subprocess can pass to ``RayClient(address=...)`` (or an executor's ``address`` config) to join
the same cluster. Mark Ray tests ``@pytest.mark.ray`` (``pytest -m "not ray"`` skips them). Keep
their data tiny: the whole suite runs on 2 cores.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # workers use this interpreter


@pytest.fixture(scope="session")
def ray_cluster():
    """A real local Ray cluster shared by all Ray tests of the session (see module docstring)."""
    from curator.cluster.ray_client import RayClient

    client = RayClient(num_cpus=2, object_store_memory=200 * 1024**2, timeout_s=120)
    client.start()
    try:
        yield client
    finally:
        client.stop()
