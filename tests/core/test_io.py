from __future__ import annotations

import pytest
from curator.io import atomic_write, ensure_dir, expand_paths, join_path


def test_atomic_write_writes_whole_file_and_overwrites(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_write(str(target), "w") as fh:
        fh.write("one")
        assert not target.exists()  # nothing visible until the block ends
    assert target.read_text() == "one"
    with atomic_write(str(target), "wb") as fh:
        fh.write(b"two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]  # no temp files left


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_write(str(target), "w") as fh:
            fh.write("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_error_keeps_previous_version(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(str(target), "w") as fh:
            fh.write("new")
            raise KeyboardInterrupt
    assert target.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "d" / "nested").mkdir(parents=True)
    for name in ["d/a.jsonl", "d/b.json", "d/nested/c.jsonl", "d/.hidden.jsonl", "d/x.txt"]:
        (tmp_path / name).write_text("x")
    return tmp_path


def test_expand_directory_recursive_sorted_without_hidden(tree):
    d = tree / "d"
    assert expand_paths(str(d)) == [str(d / "a.jsonl"), str(d / "b.json"),
                                    str(d / "nested" / "c.jsonl"), str(d / "x.txt")]
    assert expand_paths(str(d), extensions=[".jsonl"]) == [str(d / "a.jsonl"),
                                                           str(d / "nested" / "c.jsonl")]


def test_expand_glob_list_and_single_file(tree):
    d = tree / "d"
    assert expand_paths(f"{d}/*.json*") == [str(d / "a.jsonl"), str(d / "b.json")]
    both = expand_paths([str(d / "x.txt"), f"{d}/*.jsonl", str(d / "x.txt")])
    assert both == [str(d / "a.jsonl"), str(d / "x.txt")]  # deduplicated and sorted
    # an explicitly named file is kept even if its extension is not in the filter
    assert expand_paths(str(d / "x.txt"), extensions=[".jsonl"]) == [str(d / "x.txt")]


def test_expand_missing_paths_raise_naming_them(tree):
    with pytest.raises(FileNotFoundError, match="nope"):
        expand_paths(str(tree / "nope"))
    with pytest.raises(FileNotFoundError, match="no input files"):
        expand_paths(f"{tree}/d/*.parquet")
    with pytest.raises(FileNotFoundError, match="no input files"):
        expand_paths(str(tree / "d"), extensions=[".parquet"])


def test_expand_keeps_protocol(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    assert expand_paths(f"file://{tmp_path}/*.txt") == [f"file://{tmp_path}/f.txt"]


def test_join_path_and_ensure_dir(tmp_path):
    assert join_path("s3://b/", "/x/", "y.txt") == "s3://b/x/y.txt"
    assert join_path("/a", "b") == "/a/b"
    ensure_dir(str(tmp_path / "p" / "q"))
    assert (tmp_path / "p" / "q").is_dir()
