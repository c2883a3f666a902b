"""TaskDecontamination on a planted benchmark overlap: split around the match, short parts
dropped, too many splits removes the document, removed text in the rejected sink with the
benchmark's name; the index holds only hashes."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator_text.tasks import DocumentBatch

QUESTION = ("Which river flows through the ancient city that was the capital of the eastern "
            "roman empire")  # 16 words
ANSWER = "The Bosphorus strait separates the two continents of the city"  # 10 words
FILLER_A = "Gardening is a relaxing hobby that many people enjoy on weekends. " * 5
FILLER_B = "Stars form in dense clouds of gas and dust over millions of years. " * 5


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    (d / "trivia.jsonl").write_text(json.dumps({"question": QUESTION, "answer": "Bosporus",
                                                "id": 1}) + "\n")
    pq.write_table(pa.table({"question": ["Short one?"], "answer": [ANSWER]}),
                   d / "geo.parquet")
    return {"trivia": str(d / "trivia.jsonl"), "geo": str(d / "geo.parquet")}


def _run(stage, texts):
    batch = DocumentBatch(task_id="d", dataset_name="t",
                          data=pa.table({"id": list(range(len(texts))), "text": texts}))
    return Pipeline("decon", stages=[stage]).run(initial_tasks=[batch], summary=False)


def test_planted_overlap_is_cut_out(benchmarks) -> None:
    from curator_text import TaskDecontamination

    stage = TaskDecontamination(benchmarks, min_document_length=50, remove_char_each_side=10)
    contaminated = f"{FILLER_A}Quiz time: {QUESTION.upper()}? Nobody knew. {FILLER_B}"
    near_start = f"Hi. {ANSWER}. {FILLER_B}"
    only_bench = f"{QUESTION}."
    clean = FILLER_A + FILLER_B
    result = _run(stage, [clean, contaminated, near_start, only_bench, None])
    table = result[0].to_pyarrow()
    rows = list(zip(table["id"].to_pylist(), table["text"].to_pylist(), strict=True))
    assert rows[0] == (0, clean)
    parts = [t for i, t in rows if i == 1]
    assert len(parts) == 2  # split in two around the match
    assert parts[0].startswith("Gardening") and parts[0].endswith(".")
    assert "roman" not in " ".join(parts).lower()
    assert FILLER_B.strip()[:40] in parts[1]
    assert [t for i, t in rows if i == 2] and all(
        "bosphorus" not in t.lower() for i, t in rows if i == 2)
    assert 3 not in [i for i, _ in rows]  # nothing clean left: removed whole
    assert (4, None) in rows  # null text passes through
    rejected = [r for r in result.rejected.records if r.stage == "TaskDecontamination"]
    by_doc = {}
    for r in rejected:
        by_doc.setdefault(r.record["id"], []).append(r.record)
    assert {x["benchmark"] for x in by_doc[1]} == {"trivia"}
    assert "roman empire" in by_doc[1][0]["removed"].lower()
    assert {x["benchmark"] for x in by_doc[2]} == {"geo"}  # the 10-word answer n-gram
    assert by_doc[3][0]["text"] == only_bench and 0 not in by_doc


def test_max_splits_removes_the_document(benchmarks) -> None:
    from curator_text import TaskDecontamination

    doc = "".join(f"{FILLER_A}{QUESTION}. " for _ in range(4)) + FILLER_B
    loose = TaskDecontamination(benchmarks, min_document_length=50, remove_char_each_side=5)
    assert len(loose.decontaminate(doc)[0]) == 5
    strict = TaskDecontamination(benchmarks, min_document_length=50, remove_char_each_side=5,
                                 max_splits=3)
    result = _run(strict, [doc])
    assert result[0].to_pyarrow().num_rows == 0
    [rej] = [r for r in result.rejected.records if r.stage == "TaskDecontamination"]
    assert "max_splits" in rej.reason and rej.record["benchmark"] == "trivia"


def test_index_is_hashed_and_matches_nemo_ngram_rules(benchmarks) -> None:
    from curator_text.decontamination import NGramIndex, get_words

    index = NGramIndex(13, 8)
    index.add("b", [QUESTION, "too short to count", ANSWER])
    index.freeze()
    assert index.hashes.dtype == np.uint64 and len(index) == (16 - 13 + 1) + 1
    assert index.lengths == [13, 10]
    words, _ = get_words("x " + QUESTION.upper() + " y")
    assert index.first_match(words)[:2] == (1, 13)
    assert index.first_match(get_words("too short to count at all here ok")[0]) is None


def test_config_errors(tmp_path) -> None:
    from curator_text import TaskDecontamination

    with pytest.raises(ValueError, match="does not exist"):
        TaskDecontamination({"x": str(tmp_path / "missing.jsonl")})
    (tmp_path / "b.csv").write_text("q\n")
    with pytest.raises(ValueError, match="jsonl or"):
        TaskDecontamination([str(tmp_path / "b.csv")]).setup()


COMMON = ("All of the following statements are true about the topic except for which one "
          "of them")  # 16 words: a boilerplate phrase many documents share


def test_max_matches_keeps_ngrams_too_common_to_be_contamination(tmp_path) -> None:
    """NeMo's two passes: the counter counts matches over the dataset; n-grams matched more than
    max_matches times are left in the documents, the rare one is still cut out."""
    from curator_text.decontamination import TaskDecontamination, read_match_counts

    bench = tmp_path / "exam.jsonl"
    bench.write_text(json.dumps({"question": COMMON}) + "\n"
                     + json.dumps({"question": QUESTION}) + "\n")
    docs = [f"{FILLER_A}{COMMON}. {FILLER_B}" for _ in range(4)]
    docs.append(f"{FILLER_A}{QUESTION}. {FILLER_B}")
    kwargs = {"min_document_length": 50, "remove_char_each_side": 10}

    counts = str(tmp_path / "counts")
    counter = TaskDecontamination([str(bench)], **kwargs).counter(counts)
    passed = _run(counter, docs)
    assert passed[0].to_pyarrow()["text"].to_pylist() == docs  # the counting pass changes nothing
    totals = read_match_counts(counts)
    assert sorted(totals["count"].tolist()) == [1, 4]

    stage = TaskDecontamination([str(bench)], max_matches=3, match_counts=counts,
                                removed_dir=str(tmp_path / "removed"), **kwargs)
    result = _run(stage, docs)
    out = result[0].to_pyarrow()
    kept = [t for i, t in zip(out["id"].to_pylist(), out["text"].to_pylist(), strict=True)
            if i < 4]
    assert kept == docs[:4]  # the common n-gram (4 matches > 3) is not contamination
    stage.setup()
    assert stage.too_common == 1  # the counting pass matched its first 13-gram 4 times
    assert "roman empire" not in " ".join(t for i, t in zip(
        out["id"].to_pylist(), out["text"].to_pylist(), strict=True) if i == 4).lower()
    rejected = [r.record for r in result.rejected.records if r.stage == "TaskDecontamination"]
    assert rejected and {r["id"] for r in rejected} == {4}

    # without the counts (or with a high max_matches) every match is removed
    strict = _run(TaskDecontamination([str(bench)], max_matches=4, match_counts=counts,
                                      **kwargs), docs)
    assert not any(COMMON.lower() in t.lower() for t in strict[0].to_pyarrow()["text"].to_pylist())
    plain = _run(TaskDecontamination([str(bench)], **kwargs), docs)
    assert not any(COMMON.lower() in t.lower() for t in plain[0].to_pyarrow()["text"].to_pylist())


def test_removed_dir_gets_the_documents_removed_whole(benchmarks, tmp_path) -> None:
    from curator_text import TaskDecontamination

    removed = tmp_path / "removed"
    stage = TaskDecontamination(benchmarks, min_document_length=50, remove_char_each_side=10,
                                removed_dir=str(removed))
    _run(stage, [f"{QUESTION}.", FILLER_A])
    [f] = list(removed.iterdir())
    rows = [json.loads(line) for line in f.read_text().splitlines()]
    assert rows == [{"id": 0, "text": f"{QUESTION}."}]


def test_missing_match_counts_is_a_config_error(benchmarks, tmp_path) -> None:
    from curator_text import TaskDecontamination

    stage = TaskDecontamination(benchmarks, match_counts=str(tmp_path / "none"))
    with pytest.raises(ValueError, match="counter"):
        stage.setup()
    with pytest.raises(ValueError, match="max_matches"):
        TaskDecontamination(benchmarks, max_matches=0)


def test_counter_and_new_parameters_keep_the_stage_contract(benchmarks, tmp_path) -> None:
    from curator.testing import check_stage_contract
    from curator_text import TaskDecontamination

    docs = [f"{FILLER_A}{QUESTION}. {FILLER_B}", FILLER_A]
    batch = DocumentBatch(task_id="c", dataset_name="t",
                          data=pa.table({"id": [0, 1], "text": docs}))
    stage = TaskDecontamination(benchmarks, min_document_length=50, remove_char_each_side=10)
    counter = stage.counter(str(tmp_path / "counts"))
    assert counter.name == "TaskNGramCounter" and counter.max_ngram_size == 13
    [out] = check_stage_contract(counter, batch)
    assert out.to_pyarrow()["text"].to_pylist() == docs
    check_stage_contract(TaskDecontamination(benchmarks, match_counts=str(tmp_path / "counts"),
                                             removed_dir=str(tmp_path / "rm")), batch)
