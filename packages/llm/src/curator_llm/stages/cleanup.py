"""LLMCleanupStage: rewrite (clean up) or classify each document with a served model."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from curator import ProcessingStage, Resources
from curator.errors import ConfigError
from curator_text.tasks import DocumentBatch

from curator_llm.stages.generation import answer_records, as_client, generate, is_present
from curator_llm.stages.stats import publish_client_stats

if TYPE_CHECKING:
    from curator.stages.node_info import WorkerMetadata

    from curator_llm.client import AsyncLLMClient, LLMClient

__all__ = ["LLMCleanupStage", "INPUT_TOO_LONG", "format_name_with_suffix"]

INPUT_TOO_LONG = "llm_input_too_long"
"""Reason of a chunk whose token count is not under 80% of ``max_model_len``."""


def format_name_with_suffix(model_identifier: str, suffix: str = "_classifier") -> str:
    """NeMo Curator's stage name from a model id: the last path part, ``-`` -> ``_``, lower
    case, plus ``suffix``."""
    return model_identifier.split("/")[-1].replace("-", "_").lower() + suffix


class LLMCleanupStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Cleans up (or classifies) each document with a served model: NeMo Curator's math-pipeline
    stage, calling an OpenAI-compatible server through Curator's clients instead of running
    vLLM inside the worker.

    For each row the user turn is ``system_prompt`` with ``{text}`` replaced by the row's
    ``text_field`` (other placeholders become empty, as in NeMo Curator), after an empty system
    turn (``" /no_think"`` for Qwen3 models, which is also appended to the user turn); the
    server applies the model's chat template. The answer goes to ``output_field``, or with
    ``classification=True`` to ``"label"`` (``text_field`` is then dropped).

    Args (NeMo Curator's, same defaults): ``model`` is the *served* model's name;
    ``system_prompt``, ``text_field``, ``output_field``, ``max_model_len``, ``classification``,
    ``temperature``, ``top_p``, ``top_k``, ``min_p`` (sent to the server as extra sampling
    parameters), ``max_tokens``, ``n_tokens_field``. When the batch has ``n_tokens_field``
    (chunked input), ``max_model_len`` is required; chunks of at least 80% of it go to the
    rejected-records sink (NeMo Curator drops them silently); the rest are ordered by token
    count and the column is dropped, as in NeMo Curator.

    Curator's additions (keyword-only): ``client``, an :class:`~curator_llm.client.AsyncLLMClient`
    or :class:`~curator_llm.client.LLMClient` (e.g. ``AsyncOpenAIClient(base_url=...)`` of an
    :class:`~curator_llm.serve.InferenceServer`); or ``base_url`` / ``api_key`` (default: the
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` environment variables) to make an
    ``AsyncOpenAIClient`` with ``max_concurrent_requests``; ``cache_dir`` is then that client's
    response cache (in NeMo Curator it is where model weights are downloaded). ``seed`` is the
    sampling seed sent with every request (reproducible answers, and the response-cache key).
    A record whose request still fails after the client's retries, or whose answer is empty,
    goes to the rejected-records sink with the reason.
    """

    modality = "text"

    def __init__(
        self,
        model: str,
        system_prompt: str,
        text_field: str = "text",
        output_field: str = "cleaned_text",
        max_model_len: int | None = None,
        classification: bool = False,
        temperature: float = 0.7,
        top_p: float = 0.8,
        top_k: int = 20,
        min_p: float = 0.0,
        max_tokens: int | None = None,
        cache_dir: str | None = None,
        n_tokens_field: str = "n_tokens",
        *,
        client: AsyncLLMClient | LLMClient | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        max_concurrent_requests: int = 8,
        seed: int = 0,
    ) -> None:
        if not isinstance(model, str):
            raise ConfigError("LLMCleanupStage(model=...) is the served model's name (a str): "
                              "Curator calls a model server through a client instead of "
                              "running vLLM in the worker; see docs/migrating-from-nemo-curator.md")
        self.model_name = model
        self.system_prompt = system_prompt
        self.text_field = text_field
        self.output_field = output_field
        self.max_model_len = max_model_len
        self.classification = classification
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.min_p = min_p
        self.max_tokens = max_tokens
        self.cache_dir = cache_dir
        self.n_tokens_field = n_tokens_field
        self.seed = seed
        if client is None:
            base_url = base_url or os.environ.get("OPENAI_BASE_URL")
            if not base_url:
                raise ConfigError("LLMCleanupStage: give client= (e.g. AsyncOpenAIClient("
                                  "base_url=...)) or base_url= of an OpenAI-compatible server "
                                  "(or set OPENAI_BASE_URL)")
            from curator_llm.client import AsyncOpenAIClient

            kwargs: dict[str, Any] = {"base_url": base_url, "cache_dir": cache_dir}
            if api_key or os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = api_key or os.environ["OPENAI_API_KEY"]
            client = AsyncOpenAIClient(max_concurrent_requests=max_concurrent_requests, **kwargs)
        self.client = as_client(client)
        self.resources = Resources(cpus=1.0)
        self.name = format_name_with_suffix(self.model_name, suffix="_llm_cleanup")

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], ["label" if self.classification else self.output_field]

    def setup(self, worker_metadata: WorkerMetadata | None = None) -> None:
        self.client.setup()

    @property
    def generation_config(self) -> Any:
        """The sampling parameters sent with every request."""
        from curator_llm.client import GenerationConfig

        extra = {"top_k": self.top_k, "min_p": self.min_p}
        return GenerationConfig(max_tokens=self.max_tokens, temperature=self.temperature,
                                top_p=self.top_p, seed=self.seed,
                                extra_kwargs={"extra_body": extra})

    def _messages(self, text: str) -> list[dict[str, str]]:
        name = self.model_name.lower()
        qwen3_family = "qwen3" in name
        qwen3_only = qwen3_family and "qwen3." not in name
        user = self.system_prompt.format_map(defaultdict(str, text=text))
        if qwen3_only:
            return [{"role": "system", "content": " /no_think"},
                    {"role": "user", "content": user + " /no_think"}]
        return [{"role": "system", "content": ""}, {"role": "user", "content": user}]

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        df = batch.to_pandas()
        if self.n_tokens_field in df.columns:
            if self.max_model_len is None:
                raise ValueError(f"{self.name}: max_model_len must be set when processing "
                                 f"chunked data ({self.n_tokens_field!r} column present)")
            threshold = int(0.8 * self.max_model_len)
            too_long = df[self.n_tokens_field] >= threshold
            for record in df[too_long].to_dict(orient="records"):
                self.reject(batch, INPUT_TOO_LONG, record=record,
                            error=f"{record[self.n_tokens_field]} tokens >= 80% of "
                                  f"max_model_len={self.max_model_len}")
            df = df[~too_long].sort_values(by=self.n_tokens_field, kind="stable",
                                           ignore_index=True)
            df = df.drop(columns=[self.n_tokens_field])
        records = df.to_dict(orient="records")
        texts = [str(r[self.text_field]) if is_present(r[self.text_field]) else ""
                 for r in records]
        generations = generate(self.client, self.model_name,
                               [self._messages(t) for t in texts], self.generation_config)
        publish_client_stats(self, self.client)
        answers = answer_records(self, batch, records, generations,
                                 lambda choices: choices[0] if choices else "")
        keep = sorted(answers)
        out = df.iloc[keep].copy() if len(keep) != len(df) else df.copy()
        out = out.reset_index(drop=True)
        values = [answers[i] for i in keep]
        if self.classification:
            out["label"] = values
            if self.text_field in out.columns:
                out = out.drop(columns=[self.text_field])
        else:
            out[self.output_field] = values
        return batch.derive(out)

