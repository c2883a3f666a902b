"""Output directories: save modes, run manifests and a lock per directory.

Every writer stage whose output directory should follow these rules mixes in
:class:`ManagedOutput` and has a ``mode`` parameter. Before any data is written,
:meth:`curator.Pipeline.run` claims each writer's directory on the driver
(:func:`claim_output_dirs`), whatever the executor:

* a lock file (``.curator-lock.json``: run id, pid, host, start time) stops a second concurrent run
  into the same directory with an :class:`OutputDirLockedError` naming the first. A lock left by a
  dead process on this host is taken over with a warning; it is removed when the run ends.
* a manifest (``.curator-run.json``) records the runs whose files the directory holds, which tells
  our own earlier files apart from another run's.
* the save mode (like Spark's) decides what happens when the directory holds files from another
  run (files of no Curator run count as another run's):

  - ``"error"`` (default): refuse with an :class:`OutputDirError` before anything runs;
  - ``"overwrite"``: delete the directory's contents first;
  - ``"append"``: keep them; this run's file names get a ``-<run id>`` suffix so they never
    replace the earlier files;
  - ``"ignore"``: write nothing into that directory (a warning says so); the run goes on.

A resumed run is the same run: with ``checkpoint_dir`` the run id is kept in
``{checkpoint_dir}/run-id.json`` and reused by every re-run with that checkpoint directory, so its
own partial output never counts as another run's (``error`` does not refuse it, ``overwrite`` does
not delete it). Hidden files (names starting with ``.``), the checkpoint and rejected directories
are never counted nor deleted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from curator.errors import ConfigError, CuratorError
from curator.io import atomic_write, get_fs, join_path

__all__ = ["MODES", "SaveMode", "MANIFEST_NAME", "LOCK_NAME", "OutputDirError", "OutputDirLockedError",
           "OutputClaim", "ManagedOutput", "check_mode", "run_id_for", "claim_output_dir",
           "release_output_dir", "claim_output_dirs"]

log = logging.getLogger(__name__)

SaveMode = Literal["error", "overwrite", "append", "ignore"]
MODES: tuple[str, ...] = ("error", "overwrite", "append", "ignore")
MANIFEST_NAME = ".curator-run.json"
LOCK_NAME = ".curator-lock.json"
_RUN_ID_FILE = "run-id.json"


class OutputDirError(CuratorError):
    """An output directory holds another run's files and the writer's mode is ``"error"``."""


class OutputDirLockedError(OutputDirError):
    """Another live run holds the output directory's lock."""


def check_mode(mode: str, owner: str) -> str:
    """``mode`` if it is a save mode; else a :class:`ConfigError` naming ``owner``."""
    if mode not in MODES:
        raise ConfigError(f"{owner}: mode must be one of {', '.join(map(repr, MODES))}, "
                          f"got {mode!r}")
    return mode


@dataclass(frozen=True)
class OutputClaim:
    """What a claimed directory allows a writer: ``write`` is False in ``ignore`` mode when the
    directory held another run's files; ``suffix`` is added to file names in ``append`` mode."""

    path: str
    run_id: str
    mode: str
    write: bool = True
    suffix: str = ""


class ManagedOutput:
    """Mixin for writer stages whose output directory follows save modes (see module doc).

    The stage has a ``mode`` parameter and names the field that holds its directory in
    :attr:`output_dir_field`. It names files with :meth:`output_file` and writes only when
    :attr:`writes_output` is true. Called outside :meth:`curator.Pipeline.run` (no claim), it
    writes plain names.
    """

    output_dir_field: ClassVar[str] = "path"
    _output_claim: OutputClaim | None = None

    def output_target(self) -> tuple[str, str]:
        """``(directory, mode)`` of this writer."""
        return str(getattr(self, self.output_dir_field)), getattr(self, "mode", "error")

    @property
    def writes_output(self) -> bool:
        return self._output_claim is None or self._output_claim.write

    def output_file(self, relative: str) -> str:
        """The path of ``relative`` (``name.ext`` or ``sub/name.ext``) in the output directory,
        with the run suffix before the extension in ``append`` mode."""
        directory = self.output_target()[0]
        claim = self._output_claim
        if claim is not None and claim.suffix:
            head, _, base = relative.rpartition("/")
            stem, dot, ext = base.rpartition(".")
            base = f"{stem}{claim.suffix}.{ext}" if dot and stem else f"{base}{claim.suffix}"
            relative = f"{head}/{base}" if head else base
        return join_path(directory, relative)


def run_id_for(checkpoint_dir: str | None) -> str:
    """A new run id, or the one kept in ``checkpoint_dir`` (created on its first run)."""
    if not checkpoint_dir:
        return uuid.uuid4().hex
    path = join_path(checkpoint_dir, _RUN_ID_FILE)
    fs, p = get_fs(path)
    with contextlib.suppress(FileNotFoundError, ValueError, KeyError):
        with fs.open(p, "r") as fh:
            return str(json.load(fh)["run_id"])
    run_id = uuid.uuid4().hex
    with atomic_write(path, "w") as fh:
        json.dump({"run_id": run_id, "created_at": time.time()}, fh)
    return run_id


def _describe(info: dict[str, Any]) -> str:
    started = info.get("started_at")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)) if started else "?"
    return (f"run {info.get('run_id', '?')} (pipeline {info.get('pipeline', '?')!r}, pid "
            f"{info.get('pid', '?')} on host {info.get('host', '?')}, started {when})")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    return "file" in protocol or "local" in protocol


def _read_json(fs: Any, path: str) -> dict[str, Any] | None:
    try:
        with fs.open(path, "r") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except FileNotFoundError:
        return None
    except ValueError:
        return {}


def _acquire(fs: Any, directory: str, me: dict[str, Any], prefix: str = "") -> None:
    lock = f"{directory}/{LOCK_NAME}"
    payload = json.dumps(me).encode()
    for _ in range(3):
        if _is_local(fs):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(payload)
                return
        elif not fs.exists(lock):  # object stores have no exclusive create: best effort
            with fs.open(lock, "wb") as fh:
                fh.write(payload)
            return
        other = _read_json(fs, lock)
        if other is None:  # released between our two looks: try again
            continue
        if not other:
            raise OutputDirLockedError(
                f"output directory {directory} has an unreadable lock file {lock}; if no other "
                f"Curator run writes there, delete that file and run again")
        if other.get("host") == me["host"] and isinstance(other.get("pid"), int) \
                and not _pid_alive(other["pid"]):
            log.warning("output directory %s: taking over the stale lock of %s (that process is "
                        "gone)", directory, _describe(other))
            with contextlib.suppress(FileNotFoundError):
                fs.rm(lock)
            continue
        raise OutputDirLockedError(
            f"{prefix}output directory {directory} is being written by another Curator run: "
            f"{_describe(other)}. Wait for it to finish or write to another directory; if that "
            f"process is gone, delete {lock}.")
    raise OutputDirLockedError(f"output directory {directory}: could not take the lock {lock}")


def _release(fs: Any, directory: str, me: dict[str, Any]) -> None:
    lock = f"{directory}/{LOCK_NAME}"
    other = _read_json(fs, lock)
    if other and other.get("run_id") == me["run_id"] and other.get("pid") == me["pid"]:
        with contextlib.suppress(FileNotFoundError):
            fs.rm(lock)


def _visible_files(fs: Any, directory: str, keep: Sequence[str]) -> list[str]:
    """Files under ``directory`` not hidden and not inside a ``keep`` directory."""
    out = []
    for f in sorted(fs.find(directory)):
        rel = f[len(directory):].lstrip("/")
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if any(f == k or f.startswith(k.rstrip("/") + "/") for k in keep):
            continue
        out.append(f)
    return out


def claim_output_dir(path: str, mode: str, run_id: str, *, pipeline: str = "pipeline",
                     keep: Sequence[str] = (), owner: str = "") -> OutputClaim:
    """Lock ``path`` for run ``run_id`` and apply ``mode`` (see the module doc).

    ``keep``: directories inside ``path`` that are never counted nor deleted (checkpoint and
    rejected directories). ``owner`` (the writer stage) starts error messages. Raises
    :class:`OutputDirLockedError` or :class:`OutputDirError`; release with
    :func:`release_output_dir`.
    """
    check_mode(mode, owner or f"output directory {path}")
    fs, directory = get_fs(path)
    directory = directory.rstrip("/") or "/"
    fs.makedirs(directory, exist_ok=True)
    me = {"run_id": run_id, "pipeline": pipeline, "pid": os.getpid(),
          "host": socket.gethostname(), "started_at": time.time()}
    keep_inner = [get_fs(k)[1].rstrip("/") for k in keep if k]
    prefix = f"{owner}: " if owner else ""
    _acquire(fs, directory, me, prefix)
    try:
        manifest = _read_json(fs, f"{directory}/{MANIFEST_NAME}") or {}
        runs = [r for r in manifest.get("runs", []) if isinstance(r, dict)]
        own = bool(runs) and all(r.get("run_id") == run_id for r in runs)
        files = [] if own else _visible_files(fs, directory, keep_inner)
        claim = OutputClaim(path, run_id, mode)
        if files:
            others = [r for r in runs if r.get("run_id") != run_id]
            whose = (f"another run: {_describe(others[-1])}" if others
                     else "outside Curator (no run manifest)")
            if mode == "error":
                raise OutputDirError(
                    f"{prefix}output directory {path} already holds {len(files)} file(s) from {whose}, "
                    f"e.g. {files[0]}. Choose an empty directory, or set the writer's mode: "
                    f"'overwrite' (delete them first), 'append' (keep them and add this run's), "
                    f"'ignore' (write nothing there).")
            if mode == "overwrite":
                log.warning("output directory %s: mode='overwrite' deletes %d file(s) from %s",
                            path, len(files), whose)
                _clear(fs, directory, keep_inner)
                runs = []
            elif mode == "append":
                claim = OutputClaim(path, run_id, mode, suffix=f"-{run_id[:8]}")
            else:
                log.warning("output directory %s holds %d file(s) from %s; mode='ignore': this "
                            "run writes nothing there", path, len(files), whose)
                return OutputClaim(path, run_id, mode, write=False)
        elif not own:  # earlier runs left no files: the directory is this run's alone
            runs = []
        if not any(r.get("run_id") == run_id for r in runs):
            runs.append({k: me[k] for k in ("run_id", "pipeline", "pid", "host", "started_at")})
        with atomic_write(f"{path.rstrip('/')}/{MANIFEST_NAME}", "w") as fh:
            json.dump({"runs": runs}, fh, indent=1)
        return claim
    except BaseException:
        _release(fs, directory, me)
        raise


def _clear(fs: Any, directory: str, keep: Sequence[str]) -> None:
    for entry in fs.ls(directory, detail=False):
        entry = entry.rstrip("/")
        name = entry.rsplit("/", 1)[-1]
        if name in (LOCK_NAME, MANIFEST_NAME):
            continue
        if any(k == entry or k.startswith(entry + "/") for k in keep):
            if fs.isdir(entry) and not any(k == entry for k in keep):
                _clear(fs, entry, keep)
            continue
        fs.rm(entry, recursive=True)


def release_output_dir(claim: OutputClaim) -> None:
    """Remove this process's lock from the claimed directory."""
    fs, directory = get_fs(claim.path)
    _release(fs, directory.rstrip("/") or "/", {"run_id": claim.run_id, "pid": os.getpid()})


@contextlib.contextmanager
def claim_output_dirs(stages: Sequence[Any], *, checkpoint_dir: str | None = None,
                      rejected_dir: str | None = None, pipeline: str = "pipeline",
                      ) -> Iterator[str]:
    """Claim the output directory of every :class:`ManagedOutput` stage for one run.

    Each stage gets its claim (carried to workers with the stage); the locks are released when
    the block exits. Yields the run id. Two writers into one directory share one claim; they must
    then use the same mode.
    """
    writers = [s for s in stages if isinstance(s, ManagedOutput)]
    if not writers:
        yield ""
        return
    run_id = run_id_for(checkpoint_dir)
    claims: dict[str, OutputClaim] = {}
    modes: dict[str, tuple[str, str]] = {}
    try:
        for stage in writers:
            path, mode = stage.output_target()
            key = path.rstrip("/")
            if key in modes and modes[key][1] != mode:
                raise ConfigError(
                    f"stages {modes[key][0]!r} and {stage.name!r} write to {path} with different "
                    f"modes ({modes[key][1]!r}, {mode!r}); give them the same mode")
            if key not in claims:
                check_mode(mode, stage.name)
                claims[key] = claim_output_dir(path, mode, run_id, pipeline=pipeline,
                                               keep=[checkpoint_dir or "", rejected_dir or ""],
                                               owner=stage.name)
                modes[key] = (stage.name, mode)
            stage._output_claim = claims[key]
        yield run_id
    finally:
        for stage in writers:
            stage.__dict__.pop("_output_claim", None)
        for claim in claims.values():
            with contextlib.suppress(Exception):
                release_output_dir(claim)
