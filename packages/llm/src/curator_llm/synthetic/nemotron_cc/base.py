"""BaseSyntheticStage: one LLM request per document, the answer written to a new column."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator import ProcessingStage
from curator_text.tasks import DocumentBatch

from curator_llm.stages.generation import (
    Outcome,
    answer_records,
    as_client,
    chat_messages,
    generate,
    is_present,
)
from curator_llm.stages.stats import publish_client_stats

if TYPE_CHECKING:
    import pandas as pd
    from curator.stages.node_info import WorkerMetadata

    from curator_llm.client import AsyncLLMClient, GenerationConfig, LLMClient

__all__ = ["BaseSyntheticStage", "MISSING_INPUT"]

MISSING_INPUT = "llm_input_missing"
"""Reason of a record whose input field is null (there is nothing to send)."""


@dataclass
class BaseSyntheticStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Asks a served model about every document and writes its answer to ``output_field``.

    For each row the user turn is ``prompt.format(document=row[input_field])``, preceded by
    ``system_prompt`` as a system turn when one is given; the request goes through ``client``
    (an :class:`~curator_llm.client.AsyncLLMClient` sends a batch's requests concurrently, an
    :class:`~curator_llm.client.LLMClient` one by one; a dict, as a YAML spec gives it, is the
    arguments of an :class:`~curator_llm.client.AsyncOpenAIClient`) to ``model_name`` with
    ``generation_config`` (a :class:`~curator_llm.client.GenerationConfig` or a dict of it). The answer is the first choice's text
    (:meth:`_process_llm_response`; subclasses may reshape it).

    A record whose request still fails after the client's retries, whose model answer is
    empty, or whose input is null, goes to the rejected-records sink with the reason (HTTP
    status and message) and is left out of the output batch; the other records of the batch
    are kept. Requests, cache hits, retries, failures and tokens are counted in the stage's run
    statistics when the client keeps them (Curator's clients do).

    Attributes (NeMo Curator's): ``system_prompt``, ``prompt`` (a template with
    ``{document}``), ``input_field``, ``output_field``, ``client``, ``model_name``,
    ``generation_config``, ``name``.
    """

    system_prompt: str = None
    prompt: str = None
    input_field: str = None
    output_field: str = None
    client: AsyncLLMClient | LLMClient = None
    model_name: str = None
    generation_config: GenerationConfig | None = None
    name: str = "NemotronCCBaseStage"
    modality = "text"

    def __post_init__(self) -> None:
        from curator_llm.client import AsyncLLMClient

        self.client = as_client(self.client)
        self.is_async_client = isinstance(self.client, AsyncLLMClient)

    def inputs(self) -> tuple[list[str], list[str]]:
        return (["data"], [self.input_field]) if self.input_field else ([], [])

    def outputs(self) -> tuple[list[str], list[str]]:
        if self.output_field is None:
            raise ValueError(f"{self.name}: output_field must be set before calling outputs()")
        return ["data"], [self.output_field]

    def setup(self, worker_metadata: WorkerMetadata | None = None) -> None:
        if self.client is not None:
            self.client.setup()

    def _process_llm_prompt(self, sample: dict[str, Any] | pd.Series) -> str:
        """The user prompt of one record: ``prompt`` with ``{document}`` = its input field."""
        if self.input_field not in sample:
            raise KeyError(f"{self.name}: expected input field '{self.input_field}' in the "
                           f"record (its fields: {list(sample.keys())}); set input_field=")
        return self.prompt.format(document=sample[self.input_field])

    def _process_llm_response(self, response: list[str]) -> str:
        """The text kept from one answer: its first choice (``""`` when there is none, which
        sends the record to the rejected sink)."""
        return response[0] if response else ""

    def _check_config(self) -> None:
        missing = [f for f in ("prompt", "input_field", "output_field", "client", "model_name")
                   if getattr(self, f) is None]
        if missing:
            raise ValueError(f"{self.name}: set {', '.join(missing)} (a prompt template with "
                             f"{{document}}, the column to read and to write, an LLM client and "
                             f"the served model's name)")

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        self._check_config()
        df = batch.to_pandas()
        records = df.to_dict(orient="records")
        if records and self.input_field not in records[0]:
            self._process_llm_prompt(records[0])  # raises the KeyError naming the field
        sendable = [i for i, r in enumerate(records) if is_present(r.get(self.input_field))]
        for i in sorted(set(range(len(records))) - set(sendable)):
            self.reject(batch, MISSING_INPUT, record=records[i],
                        error=f"input field '{self.input_field}' is null")
        conversations = [chat_messages(self.system_prompt, self._process_llm_prompt(records[i]))
                         for i in sendable]
        generations = self._generate(conversations)
        publish_client_stats(self, self.client)
        answers = answer_records(self, batch, [records[i] for i in sendable], generations,
                                 self._process_llm_response)
        keep = [sendable[j] for j in sorted(answers)]
        out = df.iloc[keep].copy() if len(keep) != len(df) else df.copy()
        out[self.output_field] = [answers[j] for j in sorted(answers)]
        return batch.derive(out.reset_index(drop=True))

    def _generate(self, conversations: list[list[dict[str, str]]]) -> list[Outcome]:
        return generate(self.client, self.model_name, conversations, self.generation_config)

