"""``curator.utils``: the NeMo Curator file helpers its tutorials import."""

from __future__ import annotations

import json

from curator.utils import (
    create_or_overwrite_dir,
    get_all_file_paths_under,
    get_deterministic_hash,
    get_fs,
    is_remote_url,
    split_jsonl_file_by_size,
)


def test_get_all_file_paths_under(tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.jsonl", "b.JSONL", "c.parquet", "sub/d.jsonl"):
        (tmp_path / name).write_text("x")
    top = get_all_file_paths_under(str(tmp_path))
    assert top == sorted(str(tmp_path / n) for n in ("a.jsonl", "b.JSONL", "c.parquet"))
    deep = get_all_file_paths_under(str(tmp_path), recurse_subdirectories=True,
                                    keep_extensions="jsonl")
    assert deep == sorted(str(tmp_path / n) for n in ("a.jsonl", "b.JSONL", "sub/d.jsonl"))
    assert get_all_file_paths_under(str(tmp_path), keep_extensions=[".parquet"]) == [
        str(tmp_path / "c.parquet")]


def test_fs_remote_hash_and_overwrite_dir(tmp_path) -> None:
    assert not is_remote_url(str(tmp_path)) and is_remote_url("memory://bucket/x")
    assert "memory" in get_fs("memory://x").protocol
    assert get_deterministic_hash(["b", "a"], "s") == get_deterministic_hash(["a", "b"], "s")
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    create_or_overwrite_dir(str(out))
    assert out.is_dir() and not list(out.iterdir())


def test_split_jsonl_file_by_size(tmp_path) -> None:
    src = tmp_path / "big.jsonl"
    lines = [json.dumps({"text": "x" * 300, "i": i}) + "\n" for i in range(10)]
    src.write_text("".join(lines))
    (tmp_path / "parts").mkdir()
    size = len(lines[0])  # every line has this size: two lines fit a target of 2.5 lines
    written = split_jsonl_file_by_size(str(src), str(tmp_path / "parts"),
                                       target_size_mb=2.5 * size / 2**20)
    assert [p.rsplit("/", 1)[-1] for p in written] == [f"big_{i}.jsonl" for i in range(5)]
    assert "".join(open(p).read() for p in written) == "".join(lines)  # nothing lost or split
    assert callable(split_jsonl_file_by_size.remote)  # NeMo's tutorials call .remote(...)
