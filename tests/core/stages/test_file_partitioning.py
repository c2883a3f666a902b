"""FilePartitioningStage and curator.io listing: batched listing (filesystem calls do not grow with
the file count), sizes from the listing, and the same partitions as a plain os-based oracle."""

from __future__ import annotations

import os
import threading
from collections import Counter

import fsspec
import pytest
from curator.io import expand_paths, list_files
from curator.stages.file_partitioning import FilePartitioningStage
from curator.tasks import EmptyTask
from fsspec.implementations.local import LocalFileSystem

CALLS: Counter[str] = Counter()
_LOCK = threading.Lock()
_LOCAL = threading.local()  # nesting of counted calls, per thread (lists may list in parallel)


class CountingFS(LocalFileSystem):
    """The real local filesystem, counting the requests a remote store would see: every call made
    from outside the filesystem, plus every directory listing (``ls``) made inside it (``find``
    walks with one ``ls`` per folder; the ``info`` of each entry inside ``ls`` comes with the
    listing, as it does from an object store, and is not counted)."""

    protocol = "curatorcount"
    cachable = False


def _counted(name: str):
    base = getattr(LocalFileSystem, name)

    def method(self, *args, **kwargs):
        depth = getattr(_LOCAL, "depth", 0)
        if not depth or name == "ls":
            with _LOCK:
                CALLS[name] += 1
        _LOCAL.depth = depth + 1
        try:
            return base(self, *args, **kwargs)
        finally:
            _LOCAL.depth = depth
    return method


for _name in ("ls", "find", "glob", "walk", "info", "size", "sizes", "isfile", "isdir", "exists",
              "lexists", "modified"):
    setattr(CountingFS, _name, _counted(_name))
fsspec.register_implementation("curatorcount", CountingFS, clobber=True)


def _make_tree(root, n_files: int, n_dirs: int = 4) -> list[str]:
    """``n_files`` .jsonl files of varying sizes over ``n_dirs`` folders, plus noise that must be
    skipped (a hidden temp file, another extension)."""
    paths = []
    for i in range(n_files):
        d = root / f"d{i % n_dirs}"
        d.mkdir(exist_ok=True)
        p = d / f"f{i:05d}.jsonl"
        p.write_bytes(b"x" * (10 + (i * 37) % 90))
        paths.append(str(p))
    (root / "d0" / ".f.jsonl.tmp-1234").write_bytes(b"tmp")
    (root / "d1" / "notes.txt").write_bytes(b"txt")
    return sorted(paths)


def _oracle(paths: list[str], *, n: int | None = None, blocksize: int | None = None):
    """The partitions by definition: sorted paths, ``n`` per group or about ``blocksize`` bytes."""
    if blocksize is None:
        return [paths[i:i + n] for i in range(0, len(paths), n)]
    groups, cur, size = [], [], 0
    for p in paths:
        s = os.path.getsize(p)
        if cur and size + s > blocksize:
            groups.append(cur)
            cur, size = [], 0
        cur.append(p)
        size += s
    return groups + ([cur] if cur else [])


def _count(make_stage) -> tuple[int, list[list[str]]]:
    CALLS.clear()
    tasks = make_stage().process(EmptyTask())
    return sum(CALLS.values()), [list(t.data) for t in tasks]


@pytest.mark.parametrize("form", ["dir", "glob", "list"])
@pytest.mark.parametrize("opts", [{"files_per_partition": 7}, {"blocksize": 500}])
def test_listing_calls_do_not_grow_with_file_count(tmp_path, form, opts):
    counts = {}
    for n in (200, 2000):
        root = tmp_path / str(n)
        root.mkdir()
        files = _make_tree(root, n)
        url = f"curatorcount://{root}"
        file_paths = {"dir": url, "glob": f"{url}/*/*.jsonl",
                      "list": [f"{url}/d{i}" for i in range(4)]}[form]
        calls, groups = _count(lambda fp=file_paths: FilePartitioningStage(
            file_paths=fp, file_extensions=[".jsonl"], **opts))
        counts[n] = calls
        expected = _oracle(files, n=opts.get("files_per_partition"), blocksize=opts.get("blocksize"))
        assert groups == [[f"curatorcount://{p}" for p in g] for g in expected]
    # one listing per directory at most: 4 folders (+ root), never one call per file
    assert counts[2000] == counts[200], counts
    assert counts[2000] <= 20, counts


def test_list_files_sizes_and_errors(tmp_path):
    files = _make_tree(tmp_path, 30)
    listed = list_files(str(tmp_path), [".jsonl"])
    assert [p for p, _ in listed] == files == expand_paths(str(tmp_path), [".jsonl"])
    assert all(s == os.path.getsize(p) for p, s in listed)
    assert list_files(files[3]) == [(files[3], os.path.getsize(files[3]))]  # a single file
    # hidden files are kept only when the glob names them
    assert [p.rsplit("/", 1)[-1] for p in expand_paths(f"{tmp_path}/d0/.*")] == [".f.jsonl.tmp-1234"]
    with pytest.raises(FileNotFoundError, match="missing"):
        list_files([str(tmp_path), str(tmp_path / "missing")])
    with pytest.raises(FileNotFoundError, match="no input files"):
        list_files(str(tmp_path), [".parquet"])


def test_partitions_stream_and_limit(tmp_path):
    files = _make_tree(tmp_path, 25)
    stage = FilePartitioningStage(file_paths=str(tmp_path), file_extensions=[".jsonl"],
                                  files_per_partition=4, limit=3)
    it = stage.iter_partitions()
    first = next(it)  # a generator: the first partition comes before the rest are built
    assert first.data == files[:4] and first.metadata["source_files"] == files[:4]
    assert [t.data for t in it] == [files[4:8], files[8:12]]
    assert [t.task_id for t in stage.process(EmptyTask())][0] == first.task_id


def test_process_stream_hands_on_chunks_of_partitions(tmp_path, monkeypatch):
    files = _make_tree(tmp_path, 25)
    stage = FilePartitioningStage(file_paths=str(tmp_path), file_extensions=[".jsonl"],
                                  files_per_partition=2)
    monkeypatch.setattr(FilePartitioningStage, "stream_chunk", 5)
    chunks = list(stage.process_stream(EmptyTask()))
    assert [len(c) for c in chunks] == [5, 5, 3]  # 13 partitions of 2 files (the last of 1)
    assert [t.data for c in chunks for t in c] == [t.data for t in stage.process(EmptyTask())]
    assert [f for c in chunks for t in c for f in t.data] == files
