"""One request per record through an LLM client, each outcome kept apart.

The stages of this package (synthetic data, cleanup, translation) build one conversation per
record and send them all with :func:`generate`, which is
:func:`curator_llm.client.generate_batch` plus one thing a stage needs: a generation config
per conversation (``generation_configs``; :class:`QAMultilingualSyntheticStage` gives each
sample its own seed). Each outcome is a :class:`~curator_llm.client.Generated` or a
:class:`~curator_llm.client.RequestFailure`; :func:`answer_records` sends the records whose
request failed after the client's retries (or whose answer is empty) to the stage's
rejected-records sink with the reason, HTTP status and message.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from curator_llm.client import (
    AsyncLLMClient,
    Generated,
    RequestFailure,
    as_generation_config,
    generate_batch,
    run_coroutine,
)

if TYPE_CHECKING:
    from curator_llm.client import GenerationConfig, LLMClient

__all__ = ["generate", "answer_records", "chat_messages", "with_seed", "is_present", "Outcome",
           "as_client",
           "REQUEST_FAILED", "EMPTY_COMPLETION"]

REQUEST_FAILED = "llm_request_failed"
"""Reason of a record whose request failed after the client's retries."""

EMPTY_COMPLETION = "llm_empty_completion"
"""Reason of a record for which the model returned no text."""

Messages = list[dict[str, str]]
Outcome = Generated | RequestFailure


def chat_messages(system_prompt: str | None, user_prompt: str) -> Messages:
    """A user turn, after a system turn when ``system_prompt`` is non-empty (NeMo's layout)."""
    if system_prompt:
        return [{"role": "system", "content": system_prompt},
                {"role": "user", "content": user_prompt}]
    return [{"role": "user", "content": user_prompt}]


def with_seed(config: GenerationConfig | dict | None, seed: int) -> GenerationConfig:
    """``config`` (None: the defaults) as a :class:`GenerationConfig` with ``seed``."""
    return dataclasses.replace(as_generation_config(config), seed=seed)


def as_client(client: Any) -> Any:
    """A stage's ``client`` argument as a client: a dict (what a YAML spec can give) is the
    keyword arguments of an :class:`~curator_llm.client.AsyncOpenAIClient` (``base_url``,
    ``api_key``, ``max_concurrent_requests``, ``max_retries``, ``timeout``, ``cache_dir``, ...);
    anything else is returned as it is."""
    if isinstance(client, dict):
        from curator_llm.client import AsyncOpenAIClient

        return AsyncOpenAIClient(**client)
    return client


def is_present(value: object) -> bool:
    """Whether a cell holds a value (not None, not NaN)."""
    try:
        return value is not None and value == value
    except (TypeError, ValueError):  # an array-like value
        return True


def generate(client: AsyncLLMClient | LLMClient, model: str,
             conversations: Sequence[Messages],
             generation_config: GenerationConfig | dict | None = None,
             generation_configs: Sequence[GenerationConfig | dict | None] | None = None,
             ) -> list[Outcome]:
    """Ask ``model`` through ``client`` for each conversation; one outcome per conversation, in
    order (see :func:`curator_llm.client.generate_batch`). ``generation_configs`` (one per
    conversation) replaces ``generation_config``."""
    if generation_configs is None:
        return generate_batch(client, list(conversations), model=model,
                              generation_config=generation_config)
    configs = [as_generation_config(c) for c in generation_configs]
    if len(configs) != len(conversations):
        raise ValueError(f"generate: {len(configs)} generation configs for "
                         f"{len(conversations)} conversations")
    if isinstance(client, AsyncLLMClient):
        async def one(messages: Messages, config: Any) -> Outcome:
            try:
                return Generated(list(await client.query_model(
                    messages=messages, model=model, generation_config=config)))
            except Exception as exc:  # a failed request is the record's outcome, not the batch's
                return RequestFailure.from_exception(exc)

        async def run_all() -> list[Outcome]:
            return list(await asyncio.gather(*(one(m, c) for m, c in
                                               zip(conversations, configs, strict=True))))

        return run_coroutine(run_all())
    out: list[Outcome] = []
    for messages, config in zip(conversations, configs, strict=True):
        try:
            out.append(Generated(list(client.query_model(
                messages=messages, model=model, generation_config=config))))
        except Exception as exc:  # a failed request is the record's outcome, not the batch's
            out.append(RequestFailure.from_exception(exc))
    return out


def answer_records(stage: Any, task: Any, records: Sequence[dict[str, Any]],
                   outcomes: Sequence[Outcome], parse: Any) -> dict[int, str]:
    """The parsed answer of each record whose request succeeded, by record index. A record
    whose request failed, or whose parsed answer is empty, is sent to ``stage``'s
    rejected-records sink (``stage.reject``) with the reason and the record itself."""
    answers: dict[int, str] = {}
    for i, (record, outcome) in enumerate(zip(records, outcomes, strict=True)):
        if not outcome.ok:
            stage.reject(task, REQUEST_FAILED, record=record, error=str(outcome))
            continue
        text = parse(list(outcome.texts))
        if text is None or not str(text).strip():
            stage.reject(task, EMPTY_COMPLETION, record=record,
                         error=f"the model returned no text ({len(outcome.texts)} choice(s)); "
                               f"nothing is written as an empty answer")
            continue
        answers[i] = text
    return answers
