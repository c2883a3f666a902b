"""JsonlWriter / ParquetWriter: deterministic names, overwrite on re-run, fields, filenames."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator_text import DocumentBatch, JsonlWriter, ParquetWriter


def _batch(tid="abc"):
    return DocumentBatch(tid, "d", pa.table({"text": ["x", "y", "z"], "n": [1, 2, 3],
                                             "file_name": ["a.jsonl", "b.jsonl", "a.jsonl"]}))


def test_jsonl_writer_names_file_after_task_and_overwrites(tmp_path) -> None:
    w = JsonlWriter(path=str(tmp_path), fields=["text", "n"])
    out = w.process(_batch())
    assert out.data == [f"{tmp_path}/abc.jsonl"]
    w.process(_batch())  # re-run: same file, overwritten
    assert os.listdir(tmp_path) == ["abc.jsonl"]
    rows = [json.loads(x) for x in open(out.data[0])]
    assert rows == [{"text": "x", "n": 1}, {"text": "y", "n": 2}, {"text": "z", "n": 3}]


def test_write_to_filename_groups_rows(tmp_path) -> None:
    out = JsonlWriter(path=str(tmp_path), write_to_filename=True).process(_batch())
    assert sorted(os.path.basename(p) for p in out.data) == ["a.jsonl", "b.jsonl"]
    rows = [json.loads(x) for x in open(tmp_path / "a.jsonl")]
    assert [r["text"] for r in rows] == ["x", "z"] and "file_name" not in rows[0]


def test_parquet_writer(tmp_path) -> None:
    out = ParquetWriter(path=str(tmp_path)).process(_batch("p1"))
    assert pq.read_table(out.data[0])["n"].to_pylist() == [1, 2, 3]
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_writer_needs_path() -> None:
    with pytest.raises(ValueError, match="path"):
        JsonlWriter()


def test_jsonl_encoding_round_trips_awkward_values() -> None:
    from curator_text.io.jsonl_encode import table_to_jsonl

    table = pa.table({"text": ['a "q" \\ b\n\tc\x01\x1f é “x”', None, ""],
                      "n": [1, None, -3], "f": [0.5, float("nan"), 2.0],
                      "b": [True, False, None], "tags": [["a"], [], None]})
    rows = [json.loads(x) for x in table_to_jsonl(table.drop_columns(["tags"])).splitlines()]
    assert rows[0] == {"text": 'a "q" \\ b\n\tc\x01\x1f é “x”', "n": 1, "f": 0.5, "b": True}
    assert rows[1] == {"text": None, "n": None, "f": None, "b": False}
    assert rows[2]["text"] == "" and rows[2]["b"] is None
    nested = [json.loads(x) for x in table_to_jsonl(table).splitlines()]  # pandas fallback
    assert nested[0]["tags"] == ["a"]


def test_jsonl_strings_are_escaped_as_json_dumps_does() -> None:
    """The compiled escaping writes each string exactly as ``json.dumps(ensure_ascii=False)``:
    every control character, quotes, backslashes, and non-ASCII text as it is."""
    import random

    from curator_text.io.jsonl_encode import table_to_jsonl

    chars = [chr(c) for c in range(160)] + ["é", "“", "\u2028", "😀", "\\", '"']
    rng = random.Random(0)
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 40))) for _ in range(500)]
    texts += ["".join(chars), "", None]
    lines = table_to_jsonl(pa.table({"text": texts, "n": range(len(texts))})).decode()
    lines = lines.split("\n")
    assert lines.pop() == ""
    for i, (line, text) in enumerate(zip(lines, texts, strict=True)):
        assert line == f'{{"text":{json.dumps(text, ensure_ascii=False)},"n":{i}}}'


def test_jsonl_integers_are_written_as_str_writes_them() -> None:
    """Integer columns are formatted by a compiled pass (``_native.int64_text``): every integer
    type's extremes, negative numbers, sliced arrays, rows selected; with nulls and uint64
    Arrow's cast formats them."""
    import numpy as np
    from curator_text.io.jsonl_encode import jsonl_chunks, table_to_jsonl

    for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        info = np.iinfo(dtype)
        values = [int(info.min), int(info.max), 0, 1, 9, 10, 99, 100, int(info.max) // 3]
        if info.min < 0:
            values += [-1, -9, -10, -100, int(info.min) + 1]
        column = pa.array(values, pa.from_numpy_dtype(np.dtype(dtype)))
        for arr, expect in ((column, values), (column.slice(2, 5), values[2:7])):
            lines = table_to_jsonl(pa.table({"n": arr})).decode().splitlines()
            assert lines == [f'{{"n":{v}}}' for v in expect], dtype
        rows = np.array([3, 0, 1])
        got = b"".join(bytes(p) for p in jsonl_chunks(pa.table({"n": column}), rows))
        assert got.decode().splitlines() == [f'{{"n":{values[r]}}}' for r in rows], dtype
    with_nulls = table_to_jsonl(pa.table({"n": pa.array([5, None, -7])})).decode()
    assert with_nulls.splitlines() == ['{"n":5}', '{"n":null}', '{"n":-7}']


def test_jsonl_is_written_in_buffer_sized_pieces_of_whole_rows(tmp_path) -> None:
    """Rows go out through one reused buffer, as many whole rows a piece as fit; a row larger
    than the buffer grows it. The file is the rows in order, whatever the pieces."""
    from curator_text.io import jsonl_encode

    texts = ["x" * 300_000, "short", '"' * (3 << 20), "é" * 100_000, None]
    texts *= 3
    table = pa.table({"text": texts, "i": range(len(texts))})
    pieces = [bytes(p) for p in jsonl_encode.jsonl_chunks(table)]
    assert len(pieces) > 3
    assert all(p.endswith(b"\n") for p in pieces)  # whole rows
    expected = "".join(f'{{"text":{json.dumps(t, ensure_ascii=False)},"i":{i}}}\n'
                       for i, t in enumerate(texts)).encode()
    assert b"".join(pieces) == expected
    JsonlWriter(path=str(tmp_path / "out")).write_table(table, str(tmp_path / "out.jsonl"))
    assert (tmp_path / "out.jsonl").read_bytes() == expected


def _dotted_inputs(root, rows_per_file=3):
    src = root / "src"
    src.mkdir()
    for name in ("part.a.jsonl", "part.b.jsonl", "docs.v2.json.gz"):
        lines = "".join(json.dumps({"text": f"{name}-{i}", "file_name": f"s3://b/x/{name}"}) + "\n"
                        for i in range(rows_per_file))
        if name.endswith(".gz"):
            import gzip

            (src / name).write_bytes(gzip.compress(lines.encode()))
        else:
            (src / name).write_text(lines)
    return src


@pytest.mark.parametrize("files_per_partition", [1, 3])  # names across tasks and within one
def test_write_to_filename_keeps_dotted_names_whole(tmp_path, files_per_partition) -> None:
    from curator import Pipeline
    from curator_text import JsonlReader

    src, out = _dotted_inputs(tmp_path), tmp_path / "out"
    result = Pipeline("p", stages=[
        JsonlReader(str(src), files_per_partition=files_per_partition),
        JsonlWriter(path=str(out), write_to_filename=True)]).run(summary=False)
    assert sorted(n for n in os.listdir(out) if not n.startswith(".")) == [
        "docs.v2.jsonl", "part.a.jsonl", "part.b.jsonl"]
    rows = [json.loads(x) for f in out.glob("*.jsonl") for x in open(f)]
    assert len(rows) == 9 == sum(t.metadata["num_rows"] for t in result)  # none lost
    for f in out.glob("*.jsonl"):
        assert {r["text"].rsplit("-", 1)[0] for r in map(json.loads, open(f))} == {
            f.name.replace(".jsonl", ".json.gz") if f.name.startswith("docs") else f.name}


def test_write_to_filename_parquet_and_rows_without_a_name(tmp_path) -> None:
    table = pa.table({"text": ["a", "b", "c"], "file_name": ["x.y.parquet", None, "x.z.jsonl"]})
    out = ParquetWriter(path=str(tmp_path), write_to_filename=True).process(
        DocumentBatch("t1", "d", table))
    assert sorted(os.path.basename(p) for p in out.data) == ["t1.parquet", "x.y.parquet",
                                                             "x.z.parquet"]
    assert sum(pq.read_table(p).num_rows for p in out.data) == 3


def _docs(n, tag):
    return DocumentBatch(f"{tag}", "d", pa.table({"text": [f"{tag}{i}" for i in range(n)]}))


def _count(out):
    return sum(1 for f in out.glob("*.jsonl") for _ in open(f))


def test_writer_modes_on_a_dirty_directory(tmp_path) -> None:
    """12,000 documents into a directory holding 15,000 of another run (issue 13, case 7)."""
    from curator import Pipeline
    from curator.output_dir import OutputDirError

    out = tmp_path / "out"

    def run(tasks, **kw):
        return Pipeline("p", stages=[JsonlWriter(path=str(out), **kw)]).run(
            initial_tasks=tasks, summary=False)

    run([_docs(5_000, f"old{i}_") for i in range(3)])
    assert _count(out) == 15_000
    new = [_docs(6_000, f"new{i}_") for i in range(2)]
    with pytest.raises(OutputDirError, match="JsonlWriter|another run"):
        run(new, mode="error")
    assert _count(out) == 15_000  # refused: nothing mixed in
    run(new)  # NeMo's default "ignore": written beside the other run's files
    assert _count(out) == 27_000
    run(new)  # a plain re-run replaces its own files (deterministic names)
    assert _count(out) == 27_000
    run(new, mode="overwrite")  # the files earlier Curator runs wrote go first
    assert _count(out) == 12_000
    run(new, mode="append")
    run(new, mode="append")  # the same partitions again: replaced, never a second copy
    assert _count(out) == 12_000 and len(list(out.glob("*.jsonl"))) == 2
    with pytest.raises(ValueError, match="mode must be one of|'mode' expects"):
        JsonlWriter(path=str(out), mode="errorifexists")


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_modes_reach_the_writers_on_ray_workers(kind, tmp_path, ray_cluster) -> None:
    """The claim is made on the driver and travels with the stage to Ray workers."""
    from curator import Pipeline
    from curator_text import JsonlReader

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for f in range(2):
        (src / f"p{f}.jsonl").write_text("".join(json.dumps({"text": f"{f}-{i}"}) + "\n"
                                                 for i in range(4)))

    def run(executor, mode):
        return Pipeline("p", stages=[JsonlReader(str(src)), JsonlWriter(path=str(out), mode=mode)]
                        ).run(executor, summary=False)

    from curator.output_dir import manifest_files

    run("local", "error")
    run(kind, "append")  # the same partitions: their files replaced, never a second copy
    assert _count(out) == 8 and len(list(out.glob("*.jsonl"))) == 2
    run(kind, "overwrite")
    assert _count(out) == 8
    listed = manifest_files(str(out))  # the workers noted their files under the run's claim
    assert sorted(listed) == sorted(f.name for f in out.glob("*.jsonl"))
    assert len(set(listed.values())) == 1


def test_mode_is_a_spec_key_checked_before_any_data_is_read(tmp_path) -> None:
    from curator.errors import ConfigError
    from curator.spec import pipeline_from_spec

    spec = {"name": "s", "stages": [
        {"reader": "JsonlReader", "file_paths": str(tmp_path / "missing")},
        {"writer": "JsonlWriter", "path": str(tmp_path / "out"), "mode": "overwrite"}]}
    (writer,) = [s for s in pipeline_from_spec(spec).build() if isinstance(s, JsonlWriter)]
    assert writer.mode == "overwrite"
    spec["stages"][1]["mode"] = "sideways"
    with pytest.raises(ConfigError, match="mode"):
        pipeline_from_spec(spec)


@pytest.mark.parametrize(("name", "stem"), [
    ("part.a.jsonl", "part.a"), ("s3://b/x/part.b.jsonl", "part.b"), ("docs.v2.json.gz", "docs.v2"),
    ("x.jsonl.zst", "x"), ("noext", "noext"), (".hidden", ".hidden"), ("a.b.c.parquet", "a.b.c")])
def test_file_stem_drops_only_the_extension(name, stem) -> None:
    from curator.io import file_stem

    assert file_stem(name) == stem
