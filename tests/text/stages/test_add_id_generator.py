"""NeMo Curator's reader-based ID generation: ``create_id_generator_actor()``, then readers with
``_generate_ids=True`` add ``_curator_dedup_id`` (integers, unique across files), and
``_assign_ids=True`` gives the same files the same ids again, also from a saved state file."""

from __future__ import annotations

import json

import pytest
from curator import Pipeline
from curator.dedup import (
    CURATOR_DEDUP_ID_STR,
    create_id_generator_actor,
    kill_id_generator_actor,
    write_id_generator_to_disk,
)
from curator_text import JsonlReader, ParquetReader, ParquetWriter


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATOR_ID_GENERATOR_DIR", str(tmp_path / "idgen"))
    src = tmp_path / "in"
    src.mkdir()
    for f, n in (("a", 3), ("b", 2), ("c", 4)):
        (src / f"{f}.jsonl").write_text("".join(json.dumps({"text": f"{f}{i}"}) + "\n"
                                                for i in range(n)))
    yield tmp_path
    kill_id_generator_actor()


def _ids(result) -> dict[str, int]:
    return {r["text"]: r[CURATOR_DEDUP_ID_STR] for t in result for r in t.to_pyarrow().to_pylist()}


def test_generate_then_assign_the_same_ids(data) -> None:
    create_id_generator_actor()
    first = _ids(Pipeline("gen", stages=[JsonlReader(file_paths=str(data / "in"),
                                                     _generate_ids=True)]).run(summary=False))
    assert sorted(first.values()) == list(range(9))  # unique, dense, integers
    again = _ids(Pipeline("gen2", stages=[JsonlReader(file_paths=str(data / "in"),
                                                      _generate_ids=True)]).run(summary=False))
    assert again == first  # the same files are not given new ids
    state = str(data / "ids.json")
    write_id_generator_to_disk(state)
    kill_id_generator_actor()
    assert json.loads(open(state).read())["next_id"] == 9
    create_id_generator_actor(state)
    assigned = _ids(Pipeline("assign", stages=[JsonlReader(file_paths=str(data / "in"),
                                                           _assign_ids=True)]).run(summary=False))
    assert assigned == first


def test_ids_survive_a_parquet_round_trip_and_need_the_generator(data) -> None:
    create_id_generator_actor()
    Pipeline("w", stages=[JsonlReader(file_paths=str(data / "in"), _generate_ids=True),
                          ParquetWriter(path=str(data / "pq"))]).run(summary=False)
    back = _ids(Pipeline("r", stages=[ParquetReader(file_paths=str(data / "pq"),
                                                    _generate_ids=True)]).run(summary=False))
    assert sorted(back.values()) == list(range(9))  # existing ids are kept, not regenerated
    kill_id_generator_actor()
    result = Pipeline("none", stages=[JsonlReader(file_paths=str(data / "in"),
                                                  _generate_ids=True)]).run(
        summary=False, raise_on_failure=False)
    assert not result.ok  # no generator: the tasks fail and are kept, not silently id-less
