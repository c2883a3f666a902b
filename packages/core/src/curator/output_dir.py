"""Output directories: save modes, run manifests, a lock per directory, and where a plain re-run
resumes.

Every writer stage whose output directory should follow these rules mixes in
:class:`ManagedOutput` and has a ``mode`` parameter. Before any data is written,
:meth:`curator.Pipeline.run` claims each writer's directory on the driver
(:func:`claim_output_dirs`), whatever the executor:

* an output directory that is, contains or is inside one of the run's **input paths** is refused
  before anything is touched (:func:`check_inputs_apart`). Input paths are a reader's
  ``file_paths``, a workflow's ``input_path``, a downloader's download directory and, for a
  custom source stage, the paths it lists in an ``input_paths`` attribute.
* a lock file (``.curator-lock.json``: run id, pid, host, start time) stops a second concurrent run
  into the same directory with an :class:`OutputDirLockedError` naming the first. A lock left by a
  dead process on this host is taken over with a warning; it is removed when the run ends.
* a manifest (``.curator-run.json``) lists the runs that wrote into the directory and **every
  file Curator wrote there** (writers note each file in ``.curator-files/`` before it appears,
  and the entries are merged into the manifest when a run claims or releases the directory).
  Curator deletes or replaces only files the manifest lists; any other file is the user's and
  stays (a run says so at INFO level).
* the save mode (NeMo Curator's names and default) decides what happens to earlier files:

  - ``"ignore"`` (default, as in NeMo Curator): write into the directory; a file of the same
    name is replaced, everything else stays. File names are deterministic (from the source
    partition), so a plain re-run replaces its own files and never duplicates them;
  - ``"overwrite"``: first delete the files earlier Curator runs wrote there (those the
    manifest lists); files Curator did not write stay;
  - ``"append"``: keep the earlier files; a source partition written again replaces its own
    file (same name), never adds a second copy;
  - ``"error"``: refuse with an :class:`OutputDirError` when the directory holds any file that
    is not this run's own.

**Re-running after an interrupt or crash.** Without ``checkpoint_dir`` the run's partition
tracker (:mod:`curator.run.tracker`) keeps its state in ``.curator-checkpoint/`` beside the first
writer's manifest. A run that is interrupted, killed or has failed tasks leaves it there, and the
next run of the same pipeline into that directory resumes: it is the same run (same run id, so
no mode refuses or deletes its files), skips the partitions already written and redoes the rest.
A run that finishes with every task done removes the state, so the next plain re-run recomputes
everything (replacing the same-named files). The state records a fingerprint of the stages and
their parameters: a changed pipeline starts over instead of resuming. With ``checkpoint_dir``
the run id is kept in ``{checkpoint_dir}/run-id.json`` instead.

A claim also removes temporary files (``.name.tmp-XXXXXXXX``) that a killed run left in the
directory. Hidden files (names starting with ``.``), the checkpoint and rejected directories are
never counted nor deleted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from curator.errors import ConfigError, CuratorError
from curator.io import atomic_write, get_fs, join_path

__all__ = ["MODES", "DEFAULT_MODE", "SaveMode", "MANIFEST_NAME", "LOCK_NAME", "JOURNAL_DIR",
           "STATE_DIR", "OutputDirError", "OutputDirLockedError", "OutputClaim", "ManagedOutput",
           "check_mode", "run_id_for", "claim_output_dir", "release_output_dir",
           "claim_output_dirs", "input_paths_of", "check_inputs_apart", "manifest_files",
           "remove_temp_files"]

log = logging.getLogger(__name__)

SaveMode = Literal["ignore", "overwrite", "append", "error"]
MODES: tuple[str, ...] = ("ignore", "overwrite", "append", "error")
DEFAULT_MODE = "ignore"
MANIFEST_NAME = ".curator-run.json"
LOCK_NAME = ".curator-lock.json"
JOURNAL_DIR = ".curator-files"
STATE_DIR = ".curator-checkpoint"
_RUN_ID_FILE = "run-id.json"
_FINGERPRINT_FILE = "pipeline.json"
_TEMP = re.compile(r"^\..+\.tmp-[0-9a-f]{8}$")  # curator.io.atomic_write's temporary names
#: attributes naming what a stage reads (see the module doc); ``input_paths`` is for custom stages
_INPUT_ATTRS = ("input_paths", "file_paths", "input_path", "download_dir", "_download_dir")


class OutputDirError(CuratorError):
    """An output directory cannot be used as asked (another run's files with ``mode="error"``,
    or it overlaps an input path)."""


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
    """A claimed output directory: the run writing there and its save mode."""

    path: str
    run_id: str
    mode: str


class ManagedOutput:
    """Mixin for writer stages whose output directory follows save modes (see module doc).

    The stage has a ``mode`` parameter and names the field that holds its directory in
    :attr:`output_dir_field`. It names every file it writes with :meth:`output_file`, which
    notes the file in the directory's manifest journal, so later runs know it is Curator's.
    ``resume_in_output_dir = False`` (class or instance) keeps a run's partition state out of the
    directory (workflows whose later phases read a phase's whole output set it: a resumed phase
    would return only the partitions it redid). Called outside :meth:`curator.Pipeline.run`
    (no claim), it writes plain names and notes nothing.
    """

    output_dir_field: ClassVar[str] = "path"
    resume_in_output_dir: bool = True
    _output_claim: OutputClaim | None = None

    def output_target(self) -> tuple[str, str]:
        """``(directory, mode)`` of this writer."""
        return str(getattr(self, self.output_dir_field)), getattr(self, "mode", DEFAULT_MODE)

    @property
    def writes_output(self) -> bool:
        """Always true: every mode writes (kept for writers written against older versions)."""
        return True

    def output_file(self, relative: str, suffixes: Sequence[str] = ("",)) -> str:
        """The path of ``relative`` (``name.ext`` or ``sub/name.ext``) in the output directory.

        Under a claim, each ``relative + suffix`` is noted as this run's file before it is
        written (``suffixes``: for writers that write several files from one prefix, such as
        ``.bin`` and ``.idx``)."""
        directory = self.output_target()[0]
        claim = self._output_claim
        if claim is not None:
            for suffix in suffixes:
                _note_file(claim, relative + suffix)
        return join_path(directory, relative)


def _note_file(claim: OutputClaim, relative: str) -> None:
    """Journal ``relative`` as written by ``claim.run_id`` (merged into the manifest later).
    One small entry per file, named by the file, so workers never contend for one file."""
    key = hashlib.blake2b(relative.encode(), digest_size=12).hexdigest()
    fs, path = get_fs(join_path(claim.path, JOURNAL_DIR, f"{key}.json"))
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    with fs.open(path, "w") as fh:  # an unreadable entry only leaves a file unlisted (kept)
        json.dump({"file": relative, "run_id": claim.run_id}, fh)


def run_id_for(checkpoint_dir: str | None) -> str:
    """A new run id, or the one kept in ``checkpoint_dir`` (created on its first run)."""
    if not checkpoint_dir:
        return uuid.uuid4().hex
    run_id = _stored_run_id(checkpoint_dir)
    if run_id:
        return run_id
    run_id = uuid.uuid4().hex
    with atomic_write(join_path(checkpoint_dir, _RUN_ID_FILE), "w") as fh:
        json.dump({"run_id": run_id, "created_at": time.time()}, fh)
    return run_id


def _stored_run_id(checkpoint_dir: str) -> str | None:
    fs, p = get_fs(join_path(checkpoint_dir, _RUN_ID_FILE))
    data = _read_json(fs, p)
    return str(data["run_id"]) if data and data.get("run_id") else None


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
    """Files under ``directory`` (relative names) not hidden and not inside a ``keep``
    directory."""
    out = []
    for f in sorted(fs.find(directory)):
        rel = f[len(directory):].lstrip("/")
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if any(f == k or f.startswith(k.rstrip("/") + "/") for k in keep):
            continue
        out.append(rel)
    return out


def _load_manifest(fs: Any, directory: str) -> dict[str, Any]:
    """The manifest with the journal merged in: ``{"runs": [...], "files": {name: run_id}}``.
    A manifest written before files were listed has no ``files``."""
    manifest = _read_json(fs, f"{directory}/{MANIFEST_NAME}") or {}
    runs = [r for r in manifest.get("runs", []) if isinstance(r, dict)]
    files = manifest.get("files")
    files = dict(files) if isinstance(files, dict) else {}
    journal = f"{directory}/{JOURNAL_DIR}"
    try:
        entries = fs.ls(journal, detail=False)
    except FileNotFoundError:
        entries = []
    for entry in entries:
        data = _read_json(fs, entry)
        if data and isinstance(data.get("file"), str):
            files[data["file"]] = str(data.get("run_id", ""))
    return {"runs": runs, "files": files, "_journal": entries}


def _save_manifest(fs: Any, path: str, directory: str, manifest: dict[str, Any]) -> None:
    with atomic_write(f"{path.rstrip('/')}/{MANIFEST_NAME}", "w") as fh:
        json.dump({"runs": manifest["runs"], "files": dict(sorted(manifest["files"].items()))},
                  fh, indent=1)
    for entry in manifest.get("_journal", ()):  # merged: the manifest lists them now
        with contextlib.suppress(FileNotFoundError):
            fs.rm(entry)
    with contextlib.suppress(OSError):  # gone once empty (a worker may be adding to it)
        fs.rmdir(f"{directory}/{JOURNAL_DIR}")


def manifest_files(path: str) -> dict[str, str]:
    """The files a Curator run manifest of ``path`` lists as Curator's own (relative name ->
    run id), journal included."""
    fs, directory = get_fs(path)
    return _load_manifest(fs, directory.rstrip("/") or "/")["files"]


def remove_temp_files(path: str) -> int:
    """Delete the temporary files (``.name.tmp-XXXXXXXX``, see :func:`curator.io.atomic_write`)
    that a killed run left under ``path``; returns how many. Call it only while no other run
    writes there (under the directory's lock, or in a workflow's own cache)."""
    fs, directory = get_fs(path)
    try:
        found = fs.find(directory)
    except FileNotFoundError:
        return 0
    litter = [f for f in found if _TEMP.match(f.rsplit("/", 1)[-1])]
    for f in litter:
        with contextlib.suppress(FileNotFoundError):
            fs.rm(f)
    if litter:
        log.info("%s: removed %d temporary file(s) left by an interrupted run", path, len(litter))
    return len(litter)


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
        remove_temp_files(path)  # we hold the lock: no other run is writing them
        manifest = _load_manifest(fs, directory)
        listed = manifest["files"]
        visible = _visible_files(fs, directory, keep_inner)
        earlier = [f for f in visible if f in listed and listed[f] != run_id]
        foreign = [f for f in visible if f not in listed]
        if mode == "error" and (earlier or foreign):
            others = [r for r in manifest["runs"] if r.get("run_id") != run_id]
            whose = (f"another run: {_describe(others[-1])}" if earlier and others
                     else "earlier Curator runs" if earlier else "outside Curator")
            example = (earlier or foreign)[0]
            raise OutputDirError(
                f"{prefix}output directory {path} already holds {len(earlier) + len(foreign)} "
                f"file(s) from {whose}, e.g. {example}, and mode='error'. Choose an empty "
                f"directory, or set the writer's mode: 'ignore' (the default: write into it, "
                f"replacing same-named files), 'overwrite' (first delete the files earlier "
                f"Curator runs wrote there; other files stay) or 'append' (keep them).")
        if mode == "overwrite" and earlier:
            log.info("output directory %s: mode='overwrite' deletes %d file(s) earlier Curator "
                     "runs wrote there", path, len(earlier))
            for rel in earlier:
                with contextlib.suppress(FileNotFoundError):
                    fs.rm(f"{directory}/{rel}")
                listed.pop(rel, None)
        if foreign:
            log.info("output directory %s holds %d file(s) Curator did not write (e.g. %s); "
                     "they stay untouched%s", path, len(foreign), foreign[0],
                     "" if mode == "ignore" else f" (mode={mode!r})")
        present = set(visible)  # a listed file that is gone needs no listing
        listed = {f: r for f, r in listed.items() if f in present}
        manifest["files"] = listed
        live = {run_id, *listed.values()}  # runs whose files are still there, and this one
        manifest["runs"] = [r for r in manifest["runs"] if r.get("run_id") in live]
        if not any(r.get("run_id") == run_id for r in manifest["runs"]):
            manifest["runs"].append({k: me[k] for k in ("run_id", "pipeline", "pid", "host",
                                                        "started_at")})
        _save_manifest(fs, path, directory, manifest)
        return OutputClaim(path, run_id, mode)
    except BaseException:
        _release(fs, directory, me)
        raise


def release_output_dir(claim: OutputClaim) -> None:
    """Merge the run's journal into the manifest and remove this process's lock."""
    fs, directory = get_fs(claim.path)
    directory = directory.rstrip("/") or "/"
    try:
        _save_manifest(fs, claim.path, directory, _load_manifest(fs, directory))
    finally:
        _release(fs, directory, {"run_id": claim.run_id, "pid": os.getpid()})


# -- input paths ---------------------------------------------------------------------------------

def _paths(value: Any) -> list[str]:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [p for v in value for p in _paths(v)]
    return []


def input_paths_of(stages: Iterable[Any]) -> list[tuple[str, str]]:
    """``(owner, path)`` for every input path the ``stages`` declare (see the module doc): a
    reader's ``file_paths``, ``input_path``, a downloader's download directory (also on its
    ``downloader``), local files listed by its ``url_generator`` and a custom stage's
    ``input_paths``."""
    out = []
    for stage in stages:
        name = getattr(stage, "name", type(stage).__name__)
        for holder in (stage, getattr(stage, "downloader", None),
                       getattr(stage, "url_generator", None)):
            for attr in _INPUT_ATTRS if holder is not None else ():
                value = getattr(holder, attr, None)
                out += [(f"{name}.{attr.lstrip('_')}", p) for p in _paths(value)]
    return out


def _location(path: str) -> tuple[str, str]:
    """``(protocol, absolute path without glob)`` of ``path``, for comparing locations."""
    from curator.paths import absolute_uri

    fs, p = get_fs(absolute_uri(path))
    protocol = fs.protocol[0] if isinstance(fs.protocol, tuple) else fs.protocol
    parts = []
    for part in p.split("/"):
        if any(c in part for c in "*?["):
            break
        parts.append(part)
    return str(protocol), ("/".join(parts).rstrip("/") or "/")


def check_inputs_apart(outputs: Iterable[tuple[str, str]],
                       inputs: Iterable[tuple[str, str]]) -> None:
    """Refuse (:class:`OutputDirError`) an output directory that is, contains or is inside an
    input path. ``outputs`` and ``inputs`` are ``(owner, path)`` pairs; nothing is touched."""
    ins = [(owner, path, _location(path)) for owner, path in inputs]
    for owner, out in outputs:
        proto, o = _location(out)
        for in_owner, path, (in_proto, i) in ins:
            if proto != in_proto:
                continue
            how = ("is" if o == i else "is inside" if o.startswith(i.rstrip("/") + "/")
                   else "contains" if i.startswith(o.rstrip("/") + "/") or o == "/" else "")
            if how:
                raise OutputDirError(
                    f"{owner}: output directory {out} {how} the input path {path} "
                    f"({in_owner}); nothing was touched. Write the output to a directory "
                    f"outside the input, so a run can never delete, replace or re-read its "
                    f"own input.")


# -- the partition tracker's state beside the manifest ----------------------------------------

def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return type(value).__qualname__


def _fingerprint(stages: Sequence[Any]) -> str:
    """A digest of the stages' classes, names and plain parameters; a writer's save mode is left
    out (it does not change what is computed: an interrupted run may resume in another mode)."""
    doc = []
    for s in stages:
        skip = {"mode"} if isinstance(s, ManagedOutput) else set()
        params = ({f.name: _plain(getattr(s, f.name, None)) for f in dataclasses.fields(s)
                   if f.name not in skip} if dataclasses.is_dataclass(s) else {})
        doc.append([type(s).__module__, type(s).__qualname__, getattr(s, "name", ""), params])
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _prepare_state(state: str, fingerprint: str) -> None:
    """Keep ``state`` (an interrupted run's) only when it belongs to the same pipeline."""
    fs, p = get_fs(state)
    if not fs.exists(p):
        return
    saved = _read_json(fs, f"{p.rstrip('/')}/{_FINGERPRINT_FILE}") or {}
    if saved.get("fingerprint") == fingerprint:
        done = len(fs.ls(f"{p.rstrip('/')}/done", detail=False)) \
            if fs.exists(f"{p.rstrip('/')}/done") else 0
        log.info("%s: resuming the interrupted run %s (%d partition(s) already done)",
                 state, saved.get("run_id", "?"), done)
        return
    log.info("%s: an interrupted run of another pipeline (or other parameters) left its state "
             "there; starting over", state)
    fs.rm(p, recursive=True)


def _save_state(state: str, run_id: str, fingerprint: str) -> None:
    with atomic_write(join_path(state, _RUN_ID_FILE), "w") as fh:
        json.dump({"run_id": run_id, "created_at": time.time()}, fh)
    with atomic_write(join_path(state, _FINGERPRINT_FILE), "w") as fh:
        json.dump({"run_id": run_id, "fingerprint": fingerprint}, fh)


def _drop_state(state: str) -> None:
    fs, p = get_fs(state)
    with contextlib.suppress(FileNotFoundError):
        fs.rm(p, recursive=True)


@contextlib.contextmanager
def claim_output_dirs(stages: Sequence[Any], *, checkpoint_dir: str | None = None,
                      rejected_dir: str | None = None, pipeline: str = "pipeline",
                      context: Any = None) -> Iterator[str]:
    """Claim the output directory of every :class:`ManagedOutput` stage for one run.

    Every output directory is first checked against the stages' input paths
    (:func:`check_inputs_apart`). Each stage gets its claim (carried to workers with the stage);
    the locks are released when the block exits. Yields the run id. Two writers into one
    directory share one claim; they must then use the same mode.

    ``context`` (the run's :class:`~curator.run.context.RunContext`): without a checkpoint
    directory, the run's partition state goes beside the first writer's manifest (see the module
    doc) and the context uses it; it is removed when the block exits with no failed task.
    """
    writers = [s for s in stages if isinstance(s, ManagedOutput)]
    if not writers:
        yield ""
        return
    check_inputs_apart([(s.name, s.output_target()[0]) for s in writers], input_paths_of(stages))
    state = None
    resumable = [s for s in writers if getattr(s, "resume_in_output_dir", True)]
    if context is not None and not checkpoint_dir and resumable:
        state = join_path(resumable[0].output_target()[0], STATE_DIR)
        fingerprint = _fingerprint(stages)
        _prepare_state(state, fingerprint)
        run_id = _stored_run_id(state) or uuid.uuid4().hex
    else:
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
        if state is not None:
            _save_state(state, run_id, fingerprint)
            from curator.run.tracker import CheckpointStore

            context.checkpoint_dir = state
            context.checkpoint = CheckpointStore(state)
        yield run_id
        if context is not None and not context.sink.failed:  # every task done: nothing to resume
            for s in resumable[:1]:
                _drop_state(join_path(s.output_target()[0], STATE_DIR))
    finally:
        for stage in writers:
            stage.__dict__.pop("_output_claim", None)
        for claim in claims.values():
            with contextlib.suppress(Exception):
                release_output_dir(claim)
