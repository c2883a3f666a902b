"""The client's request accounting, published into a stage's run statistics."""

from __future__ import annotations

from typing import Any

__all__ = ["publish_client_stats"]


def publish_client_stats(stage: Any, client: Any) -> None:
    """Move the request counts ``client`` gathered since the last call into ``stage``'s run
    statistics: the counter ``llm_requests`` (queries, cached, sent, retried, succeeded,
    failed, prompt and completion tokens; summed over workers) and the custom metric
    ``llm_request_seconds`` (requests/s = succeeded / seconds), through the client's
    :meth:`~curator_llm.client.stats.ClientStats.publish`. A client that keeps no accounting
    (a user's own ``LLMClient`` subclass written for NeMo Curator) publishes nothing."""
    from curator_llm.client.stats import ClientStats

    stats = getattr(client, "stats", None)
    if isinstance(stats, ClientStats):
        stats.publish(stage)
