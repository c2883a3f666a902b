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
    table = result[0].data
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
    assert result[0].data.num_rows == 0
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
