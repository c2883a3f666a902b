"""``curator.local_fs.LOCAL_FS`` answers exactly as fsspec's own ``LocalFileSystem`` does (the same
calls on the same tree give the same values, or the same exception types), and ``get_fs`` hands
it out only while fsspec is not loaded."""

from __future__ import annotations

import gzip
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from curator.local_fs import LOCAL_FS
from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem

FSSPEC = LocalFileSystem()


def _tree(root: Path) -> Path:
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "empty").mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / ".hidden").write_text("h")
    (root / "sub" / "b.jsonl").write_text('{"x": 1}\n')
    (root / "sub" / "deeper" / "c.jsonl.gz").write_bytes(gzip.compress(b'{"y": 2}\n'))
    os.symlink(root / "a.txt", root / "link_file")
    os.symlink(root / "sub", root / "link_dir")
    os.symlink(root / "missing", root / "broken")
    return root


def _same(call) -> None:
    """``call(fs)`` gives the same value, or raises the same exception type, on both."""
    results = []
    for fs in (LOCAL_FS, FSSPEC):
        try:
            results.append(("value", call(fs)))
        except Exception as exc:
            results.append(("raises", type(exc)))
    assert results[0] == results[1]


def test_paths_are_stripped_as_fsspec_strips_them(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for path in ("/a/b/", "/", "rel/x", "./rel", ".", "", "~", "~/x", "a//b/", "/x/./y",
                 "~nobody-here/x", tmp_path / "p", "dir/"):
        assert LOCAL_FS._strip_protocol(path) == FSSPEC._strip_protocol(path), path
        assert LOCAL_FS._strip_protocol(path) == url_to_fs(str(path))[1], path
        assert LOCAL_FS.unstrip_protocol(path) == FSSPEC.unstrip_protocol(path)
    assert LOCAL_FS._strip_protocol("file:///x/y/") == "/x/y"  # fsspec's own, for a URL


def test_listing_and_info_equal_fsspecs(tmp_path) -> None:
    root = _tree(tmp_path / "t")
    paths = [root, root / "sub", root / "empty", root / "a.txt", root / "link_file",
             root / "link_dir", root / "broken", root / "nothing", f"{root}/sub/"]
    for p in map(str, paths):
        _same(lambda fs, p=p: fs.info(p))
        _same(lambda fs, p=p: fs.exists(p))
        _same(lambda fs, p=p: (fs.isdir(p), fs.isfile(p)))
        _same(lambda fs, p=p: fs.size(p))
        for detail in (False, True):
            _same(lambda fs, p=p, d=detail: sorted(map(str, fs.ls(p, detail=d))))
            for withdirs in (False, True):
                for maxdepth in (None, 1, 2):
                    _same(lambda fs, p=p, d=detail, w=withdirs, m=maxdepth:
                          fs.find(p, maxdepth=m, withdirs=w, detail=d))
    _same(lambda fs: fs.find(str(root), maxdepth=0))
    _same(lambda fs: fs.glob(f"{root}/**/*.jsonl*"))  # fsspec's own, through the same object


def test_writing_reading_and_removing_equal_fsspecs(tmp_path) -> None:
    for name, fs in (("ours", LOCAL_FS), ("fsspec", FSSPEC)):
        base = tmp_path / name
        fs.makedirs(str(base / "d" / "e"), exist_ok=True)
        fs.makedirs(str(base / "d"), exist_ok=True)
        with pytest.raises(FileExistsError):
            fs.makedirs(str(base / "d"))
        with fs.open(str(base / "d" / "t.txt"), "w") as fh:
            fh.write("é text\n")
        with fs.open(str(base / "d" / "t.txt"), "r", encoding="latin-1") as fh:
            assert fh.read() == "é text\n".encode().decode("latin-1")
        with fs.open(str(base / "d" / "b.bin"), "wb") as fh:
            fh.write(b"\x00\x01")
        with fs.open(str(base / "d" / "b.bin"), "rb", compression="infer") as fh:
            assert fh.read() == b"\x00\x01"
        (base / "c.jsonl.gz").write_bytes(gzip.compress(b"zipped"))
        with fs.open(str(base / "c.jsonl.gz"), "rb", compression="infer") as fh:
            assert fh.read() == b"zipped"
        with fs.open(str(base / "c.jsonl.gz"), "rb") as fh:
            assert fh.read() == gzip.compress(b"zipped")
        with pytest.raises(ValueError):
            fs.rm(str(base / "d"))
        with pytest.raises(OSError):
            fs.rmdir(str(base / "d"))
        fs.rm(str(base / "d" / "b.bin"))
        fs.rm(str(base / "d"), recursive=True)
        assert not os.path.exists(base / "d")
        fs.makedirs(str(base / "gone"))
        fs.rmdir(str(base / "gone"))
        with pytest.raises(FileNotFoundError):
            fs.rm(str(base / "gone"))
    assert sorted(os.listdir(tmp_path / "ours")) == sorted(os.listdir(tmp_path / "fsspec"))


def test_it_pickles_as_the_one_instance() -> None:
    assert pickle.loads(pickle.dumps(LOCAL_FS)) is LOCAL_FS


def test_get_fs_gives_it_only_while_fsspec_is_not_loaded(tmp_path) -> None:
    code = textwrap.dedent(f"""
        import sys
        from curator.io import get_fs, register_storage_options
        from curator.local_fs import LOCAL_FS
        fs, inner = get_fs("rel/x")
        assert fs is LOCAL_FS and inner.endswith("/rel/x"), (fs, inner)
        assert get_fs("file:///x")[0] is not LOCAL_FS  # a URL: fsspec
        register_storage_options({str(tmp_path)!r}, {{"auto_mkdir": True}})
        assert get_fs({str(tmp_path / 'y')!r})[0] is not LOCAL_FS  # options: fsspec
        assert get_fs("/z")[0] is not LOCAL_FS  # fsspec is loaded now: its own
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
