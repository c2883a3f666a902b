"""Synthetic-data stages against a real local HTTP server that fails on purpose: every record
ends in the output or in the rejected sink with its reason, and the counts add up."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from curator import Pipeline
from curator_llm.client import AsyncOpenAIClient, OpenAIClient
from curator_llm.stages import LLMCleanupStage, TranslationStage
from curator_llm.stages.generation import EMPTY_COMPLETION, REQUEST_FAILED
from curator_llm.synthetic import QAMultilingualSyntheticStage, WikipediaParaphrasingStage
from curator_llm.synthetic.nemotron_cc.base import MISSING_INPUT
from curator_llm.testing import FaultServer
from curator_text.tasks import DocumentBatch


def _batch(texts: list[str | None]) -> DocumentBatch:
    df = pd.DataFrame({"id": list(range(len(texts))), "text": texts})
    return DocumentBatch(data=df, dataset_name="ds", task_id="t0")


def _client(server: FaultServer, kind: type = AsyncOpenAIClient):
    return kind(base_url=server.base_url, max_retries=1, base_delay=0.01, timeout=10)


@pytest.mark.parametrize("kind", [AsyncOpenAIClient, OpenAIClient])
def test_failed_requests_go_to_the_sink_and_the_rest_is_kept(tmp_path, kind) -> None:
    prompt = WikipediaParaphrasingStage()._process_llm_prompt
    script = {prompt({"text": "always fails"}): ["500", "500"],
              prompt({"text": "throttled once"}): ["429:0"],
              prompt({"text": "dropped once"}): ["drop"]}
    with FaultServer(script) as server:
        stage = WikipediaParaphrasingStage(client=_client(server, kind), model_name="m")
        texts = ["fine", "always fails", None, "throttled once", "dropped once"]
        result = Pipeline("p", stages=[stage]).run(
            initial_tasks=[_batch(texts)], rejected_dir=str(tmp_path / "rejected"))
    assert result.ok
    out = pd.concat([t.to_pandas() for t in result], ignore_index=True)
    assert sorted(out["id"]) == [0, 3, 4]
    for row in out.to_dict("records"):
        assert row["rephrased"] == f"echo: {prompt(row)}"
    written = [json.loads(line) for f in (tmp_path / "rejected").rglob("*.jsonl")
               for line in f.read_text().splitlines()]
    reasons = {r["record"]["id"]: (r["reason"], r["error"]) for r in written}
    assert set(reasons) == {1, 2} and len(written) == 2
    assert reasons[1][0] == REQUEST_FAILED and "HTTP 500" in reasons[1][1]
    assert reasons[2][0] == MISSING_INPUT
    assert result.rejected.counts == {"WikipediaParaphrasing": 2}
    counts = result.stats.stages[-1].counters["llm_requests"]
    assert counts["queries"] == 4 and counts["succeeded"] == 3 and counts["failed"] == 1
    assert counts["sent"] == 4 + counts["retried"] and counts["retried"] == 3


def test_an_empty_answer_is_rejected_not_written() -> None:
    with FaultServer(answer=lambda body: "   ") as server:
        stage = WikipediaParaphrasingStage(client=_client(server), model_name="m")
        result = Pipeline("p", stages=[stage]).run(initial_tasks=[_batch(["a", "b"])])
    assert sum(t.num_items for t in result) == 0
    assert [r.reason for r in result.rejected.records] == [EMPTY_COMPLETION] * 2


def test_qa_multilingual_samples_are_distinct_requests_and_reproducible() -> None:
    with FaultServer(answer=lambda body: f"**{body['seed']}** {body['messages'][-1]['content']}"
                     ) as server:
        def run() -> list[str]:
            stage = QAMultilingualSyntheticStage(
                prompt="A question in {language}", languages=["English", "French", "German"],
                client=_client(server), model_name="m", num_samples=4)
            return Pipeline("q", stages=[stage]).run()[0].to_pandas()["text"].tolist()

        first = run()
        assert first == run()
    assert [t.split()[0] for t in first] == ["0", "1", "2", "3"]  # one seed per sample
    assert all("*" not in t and t.split(" in ")[-1] in {"English", "French", "German"}
               for t in first)


def test_translation_rejects_a_document_whose_segment_failed() -> None:
    template = "Translate {source_lang} -> {target_lang}: {src}"
    script = {"Translate en -> fr: Broken line.": ["500", "500"]}

    def answer(body: dict) -> str:
        return "\u3018" + body["messages"][-1]["content"].split(": ", 1)[1].upper() + "\u3019"

    with FaultServer(script, answer=answer) as server:
        stage = TranslationStage(source_lang="en", target_lang="fr", client=_client(server),
                                 model_name="m")
        stages = stage.decompose()
        stages[1].prompt_template = template
        docs = ["First line.\n\n<br>\nSecond one. Still second.", "Good.\nBroken line."]
        result = Pipeline("t", stages=stages).run(initial_tasks=[_batch(docs)])
    out = pd.concat([t.to_pandas() for t in result], ignore_index=True)
    assert out["translated_text"].tolist() == ["FIRST LINE.\n\n<br>\nSECOND ONE. STILL SECOND."]
    assert [(r.reason, r.record["id"]) for r in result.rejected.records] == [
        ("llm_translation_failed", 1)]
    assert "HTTP 500" in result.rejected.records[0].error
    assert "_seg_segments" not in out.columns


def test_cleanup_rejects_overlong_chunks_and_classifies() -> None:
    with FaultServer(answer=lambda body: "label-" + body["messages"][-1]["content"][-1]
                     ) as server:
        stage = LLMCleanupStage("org/Some-Model", "Is this math? {text}", max_model_len=100,
                                classification=True, client=_client(server))
        df = pd.DataFrame({"text": ["x", "y", "z"], "n_tokens": [90, 10, 5]})
        result = Pipeline("c", stages=[stage]).run(
            initial_tasks=[DocumentBatch(data=df, dataset_name="ds")])
    assert stage.name == "some_model_llm_cleanup"
    out = result[0].to_pandas()
    assert out.to_dict("records") == [{"label": "label-z"}, {"label": "label-y"}]
    assert [(r.reason, r.record["text"]) for r in result.rejected.records] == [
        ("llm_input_too_long", "x")]
