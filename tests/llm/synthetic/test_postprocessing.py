"""Nemotron-CC post-processing by NeMo Curator's rules: on hand-made answers and on answers the
real SmolLM2 model gave (``data/smollm2_responses.json``, re-recorded by
``record_responses.py``). What NeMo Curator would turn into ``""`` goes to the rejected sink."""

from __future__ import annotations

import json
import os

import pandas as pd
from curator import Pipeline
from curator_llm.synthetic import DiverseQAPostProcessingStage, KnowledgeListPostProcessingStage
from curator_llm.synthetic.nemotron_cc.nemotron_cc import (
    DIVERSE_QA_PREFIX,
    KNOWLEDGE_LIST_EMPTY,
    QA_UNPARSABLE,
    format_knowledge_list,
    parse_qa_pairs,
)
from curator_text.tasks import DocumentBatch

RECORDED = os.path.join(os.path.dirname(__file__), "data", "smollm2_responses.json")


def _run(stage, rows: list[dict]) -> tuple[list[dict], list]:
    batch = DocumentBatch(data=pd.DataFrame(rows), dataset_name="ds", task_id="t0")
    result = Pipeline("pp", stages=[stage]).run(initial_tasks=[batch])
    out = [r for t in result for r in t.to_pandas().to_dict("records")]
    return out, list(result.rejected.records)


def test_qa_parsing_follows_nemo_rules() -> None:
    answer = "\n".join([DIVERSE_QA_PREFIX, "- Question: Q1?", "- Answer: A1.", "",
                        "Question: Q2?", "Answer: A2", "more of A2"])
    assert parse_qa_pairs(answer) == (["Question: Q1?\nAnswer: A1.",
                                       "Question: Q2?\nAnswer: A2\nmore of A2"], "")
    assert parse_qa_pairs("Sure!\nQuestion: Q?\nAnswer: A")[0] == []  # text before a question
    assert parse_qa_pairs("  \n\n")[0] == []
    assert parse_qa_pairs(DIVERSE_QA_PREFIX + "\nAnswer: A")[0] == []


def test_diverse_qa_keeps_parsable_answers_and_rejects_the_rest() -> None:
    good = "\n".join(f"- Question: Q{i}?\n- Answer: A{i}." for i in range(6))
    rows = [{"id": 0, "text": "DOC0", "diverse_qa": good},
            {"id": 1, "text": "DOC1", "diverse_qa": "I cannot help with that."},
            {"id": 2, "text": "DOC2", "diverse_qa": None}]
    out, rejected = _run(DiverseQAPostProcessingStage(max_num_pairs=3), rows)
    assert [r["id"] for r in out] == [0]
    head, *pairs = out[0]["diverse_qa"].split("\n\n")
    assert head == "DOC0" and 1 <= len(pairs) <= 3
    assert all(p.startswith("Question: Q") and "\nAnswer: A" in p for p in pairs)
    assert sorted((r.reason, r.record["id"]) for r in rejected) == [
        (QA_UNPARSABLE, 1), (QA_UNPARSABLE, 2)]
    again, _ = _run(DiverseQAPostProcessingStage(max_num_pairs=3), rows)
    assert again == out  # seeded: a re-run writes the same pairs


def test_diverse_qa_tokenizer_bounds_the_number_of_pairs() -> None:
    class Words:  # anything with tokenize(), as a transformers tokenizer
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    answer = "\n".join(f"Question: Q{i}?\nAnswer: A{i}." for i in range(10))
    rows = [{"text": f"doc {i}", "diverse_qa": answer} for i in range(20)]
    out, _ = _run(DiverseQAPostProcessingStage(tokenizer=Words()), rows)
    # 2 tokens -> at most max(1, int(10 * 2 / 150)) = 1 pair each
    assert all(len(r["diverse_qa"].split("\n\n")) == 2 for r in out) and len(out) == 20


def test_knowledge_list_reshaping_follows_nemo_rules() -> None:
    assert format_knowledge_list("Header\n- one\n  more\n- two") == "one\nmore\ntwo"
    assert format_knowledge_list("- first\nplain") == "first\nplain"
    rows = [{"id": 0, "knowledge_list": "Here you go:\n- a fact\n- another"},
            {"id": 1, "knowledge_list": "Only a header line"},
            {"id": 2, "knowledge_list": None}]
    out, rejected = _run(KnowledgeListPostProcessingStage(), rows)
    assert out == [{"id": 0, "knowledge_list": "a fact\nanother"}]
    assert sorted((r.reason, r.record["id"]) for r in rejected) == [
        (KNOWLEDGE_LIST_EMPTY, 1), (KNOWLEDGE_LIST_EMPTY, 2)]


def _recorded(task: str) -> list[dict]:
    with open(RECORDED, encoding="utf-8") as f:
        records = [r for r in json.load(f)["records"] if r["task"] == task]
    assert records, f"no recorded {task} answers in {RECORDED}"
    return records


def test_recorded_real_diverse_qa_answers() -> None:
    records = _recorded("diverse_qa")
    rows = [{"id": i, "text": r["text"], "diverse_qa": r["response"]}
            for i, r in enumerate(records)]
    out, rejected = _run(DiverseQAPostProcessingStage(), rows)
    assert len(out) + len(rejected) == len(rows)
    for row in out:
        raw = records[row["id"]]["response"]
        head, *pairs = row["diverse_qa"].split("\n\n")
        assert head == row["text"] and pairs
        for pair in pairs:
            assert pair.startswith("Question:")
            assert all(line.strip() in raw for line in pair.split("\n"))
    for rec in rejected:
        assert rec.reason == QA_UNPARSABLE and rec.error
        assert parse_qa_pairs(records[rec.record["id"]]["response"])[0] == []
    assert out, "SmolLM2 gave no parsable QA answer in the recording"


def test_recorded_real_knowledge_lists() -> None:
    records = _recorded("knowledge_list")
    rows = [{"id": i, "knowledge_list": r["response"]} for i, r in enumerate(records)]
    out, rejected = _run(KnowledgeListPostProcessingStage(), rows)
    assert len(out) + len(rejected) == len(rows) and out
    for row in out:
        raw = records[row["id"]]["response"]
        assert row["knowledge_list"] == format_knowledge_list(raw)
    for rec in rejected:
        assert rec.reason == KNOWLEDGE_LIST_EMPTY
        assert not format_knowledge_list(records[rec.record["id"]]["response"]).strip()
