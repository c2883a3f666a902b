"""NeMo Curator's deduplication arguments: ``assign_id`` numbers the records
(``_curator_dedup_id``) and writes NeMo's ``*_id_generator.json``; ``TextDuplicatesRemovalWorkflow``
removes the duplicates with it, as in NeMo's exact-dedup quick start."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from curator.dedup import ExactDeduplicationWorkflow
from curator_text.dedup import FuzzyDeduplicationWorkflow, TextDuplicatesRemovalWorkflow

DOCS = {"a": ["the cat sat on the mat", "a duplicated line of text", "unique one"],
        "b": ["a duplicated line of text", "something else entirely", "the cat sat on the mat"]}


@pytest.fixture
def data(tmp_path):
    (tmp_path / "in").mkdir()
    for name, docs in DOCS.items():
        (tmp_path / "in" / f"{name}.jsonl").write_text(
            "".join(json.dumps({"text": t}) + "\n" for t in docs))
    return tmp_path


def _kept(directory) -> list[str]:
    return sorted(json.loads(line)["text"] for f in sorted(directory.glob("*.jsonl"))
                  for line in f.read_text().splitlines())


def test_exact_quick_start_with_assigned_ids(data) -> None:
    result = ExactDeduplicationWorkflow(
        input_path=str(data / "in"), output_path=str(data / "results"), text_field="text",
        assign_id=True, perform_removal=False, input_filetype="jsonl",
        input_blocksize="2GiB", identification_batchsize=1, total_nparts=2,
        rmm_pool_size="auto", spill_memory_limit="auto", use_async_memory=True).run()
    assert result.num_duplicates == 2
    assert result.metadata["id_generator_path"].endswith("exact_id_generator.json")
    gen = json.loads((data / "results" / "exact_id_generator.json").read_text())
    assert gen["next_id"] == 6 and sorted(map(tuple, gen["batch_registry"].values())) == [
        (0, 2), (3, 5)]
    dups = pq.read_table(data / "results" / "duplicates").to_pylist()
    assert sorted((d["id"], d["duplicate_of"]) for d in dups) == [(3, 1), (5, 0)]

    removal = TextDuplicatesRemovalWorkflow(
        input_path=str(data / "in"), ids_to_remove_path=str(data / "results" / "ExactDuplicateIds"),
        output_path=str(data / "clean"), input_filetype="jsonl", output_filetype="jsonl",
        id_field="_curator_dedup_id", duplicate_id_field="_curator_dedup_id",
        id_generator_path=str(data / "results" / "exact_id_generator.json")).run()
    assert removal.metadata["num_duplicates_removed"] == 2
    assert _kept(data / "clean") == sorted(["the cat sat on the mat", "a duplicated line of text",
                                            "unique one", "something else entirely"])


def test_fuzzy_accepts_nemo_arguments_and_assigns_ids(data) -> None:
    result = FuzzyDeduplicationWorkflow(
        cache_path=str(data / "cache"), output_path=str(data / "fuzzy"),
        input_path=str(data / "in"), input_filetype="jsonl", text_field="text", char_ngrams=5,
        assign_id=True, use_64_bit_hash=False, bands_per_iteration=5,
        lsh_num_output_partitions=2, read_kwargs={"storage_options": None}).run()
    assert result.num_duplicates == 2
    assert (data / "fuzzy" / "fuzzy_id_generator.json").exists()
    ids = sorted(r["id"] for r in pq.read_table(data / "fuzzy" / "duplicates").to_pylist())
    assert ids == [3, 5]


def test_input_file_extensions_pick_the_files(data) -> None:
    (data / "in" / "c.txtl").write_text(json.dumps({"text": "unique one"}) + "\n")
    result = ExactDeduplicationWorkflow(
        input_path=str(data / "in"), output_path=str(data / "r2"), assign_id=True,
        input_file_extensions=[".jsonl", ".txtl"]).run()
    assert result.num_duplicates == 3


def test_without_an_id_column_ids_are_assigned_as_nemo_does(data) -> None:
    result = FuzzyDeduplicationWorkflow(
        cache_path=str(data / "cache"), output_path=str(data / "results"),
        input_path=str(data / "in"), input_filetype="jsonl", char_ngrams=5).run()
    assert result.num_duplicates == 2
    removal = TextDuplicatesRemovalWorkflow(
        input_path=str(data / "in"), ids_to_remove_path=str(data / "results" / "FuzzyDuplicateIds"),
        output_path=str(data / "clean"), input_filetype="jsonl", output_filetype="jsonl",
        duplicate_id_field="_curator_dedup_id",
        id_generator_path=str(data / "results" / "fuzzy_id_generator.json")).run()
    assert removal.num_duplicates_removed == 2 and len(_kept(data / "clean")) == 4
