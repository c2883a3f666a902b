"""QAMultilingualSyntheticStage: generate documents from nothing, one prompt per sample."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from curator import ProcessingStage
from curator.tasks import EmptyTask
from curator_text.tasks import DocumentBatch

from curator_llm.stages.generation import answer_records, as_client, generate, with_seed
from curator_llm.stages.stats import publish_client_stats

if TYPE_CHECKING:
    from curator.stages.node_info import WorkerMetadata

    from curator_llm.client import AsyncLLMClient, GenerationConfig, LLMClient

__all__ = ["QAMultilingualSyntheticStage"]


@dataclass
class QAMultilingualSyntheticStage(ProcessingStage[EmptyTask, DocumentBatch]):
    """Generates ``num_samples`` documents (column ``"text"``, dataset ``"simple_synthetic_data"``)
    by asking ``model_name`` through ``client`` with ``prompt.format(language=...)``, the
    language picked from ``languages`` for each sample. Asterisks (markdown bold) are removed
    from the answers, as in NeMo Curator.

    Reproducible where NeMo Curator is not: sample ``i`` takes its language from a generator
    seeded with ``i``, and is requested with ``seed = (generation_config.seed or 0) + i``, so
    the samples differ from each other (and from cache hits of each other) and a re-run asks,
    and caches, exactly the same requests. A sample whose request fails after the client's
    retries, or whose answer is empty, goes to the rejected-records sink with the reason; the
    batch holds the others.
    """

    prompt: str
    languages: list[str]
    client: AsyncLLMClient | LLMClient
    model_name: str
    num_samples: int
    generation_config: GenerationConfig | None = None
    name: str = "QAMultilingualSyntheticStage"
    modality = "text"

    def __post_init__(self) -> None:
        from curator_llm.client import AsyncLLMClient

        self.client = as_client(self.client)
        self.is_async_client = isinstance(self.client, AsyncLLMClient)

    def inputs(self) -> tuple[list[str], list[str]]:
        return [], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], ["text"]

    def setup(self, worker_metadata: WorkerMetadata | None = None) -> None:
        self.client.setup()

    def _process_llm_response(self, response: list[str]) -> str:
        """The first choice's text without ``*`` (models bold their answers)."""
        generated = response[0] if response else ""
        return generated.replace("*", "") if "*" in generated else generated

    def _language(self, i: int) -> str:
        return random.Random(f"language\x00{i}").choice(list(self.languages))

    def process(self, task: EmptyTask) -> DocumentBatch:
        if not self.languages:
            raise ValueError(f"{self.name}: languages is empty; give at least one language")
        base_seed = _seed_of(self.generation_config)
        requests = [{"sample": i, "language": self._language(i)} for i in range(self.num_samples)]
        conversations = [[{"role": "user", "content": self.prompt.format(language=r["language"])}]
                         for r in requests]
        configs = [with_seed(self.generation_config, base_seed + i) for i in range(len(requests))]
        generations = generate(self.client, self.model_name, conversations,
                               generation_configs=configs)
        publish_client_stats(self, self.client)
        answers = answer_records(self, task, requests, generations, self._process_llm_response)
        import pandas as pd

        texts = [answers[i] for i in sorted(answers)]
        return DocumentBatch(data=pd.DataFrame({"text": texts}),
                             dataset_name="simple_synthetic_data")


def _seed_of(config: object) -> int:
    seed = config.get("seed") if isinstance(config, dict) else getattr(config, "seed", None)
    return int(seed or 0)
