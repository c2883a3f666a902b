"""Fixtures for curator-interleaved tests: generated shards and a local HTTP server."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from curator import FileGroupTask


@pytest.fixture
def http_dir(tmp_path):
    """``(directory, base URL)`` of a real HTTP server on 127.0.0.1 serving ``directory``;
    stopped when the test ends."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


def file_task(paths, task_id: str = "t0") -> FileGroupTask:
    return FileGroupTask(task_id=task_id, dataset_name="test", data=[str(p) for p in paths])
