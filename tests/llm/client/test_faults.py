"""The clients against a real HTTP server on 127.0.0.1 that answers 429 with Retry-After, 500,
slowly, by dropping the connection, with invalid JSON or without content, by script: every
request ends as an answer or a typed failure with its reason, the counts add up with what the
server received, and Retry-After is honoured."""

from __future__ import annotations

import pickle

import pytest
from curator_llm.client import (
    AsyncOpenAIClient,
    Generated,
    LLMRequestError,
    OpenAIClient,
    RequestFailure,
    RetryPolicy,
    generate_batch,
    parse_retry_after,
)
from curator_llm.testing import FaultServer

FAST = {"max_retries": 3, "base_delay": 0.01}

# prompt -> (faults of its successive requests, expected outcome, requests the server sees)
SCRIPT = {
    "plain": ([], "ok", 1),
    "flaky500": (["500", "502"], "ok", 3),
    "always500": (["500"] * 10, "http_500", 4),
    "dropped": (["drop"], "ok", 2),
    "garbled": (["invalid_json"], "ok", 2),
    "bad-request": (["400"], "http_400", 1),   # a client error is not retried
    "empty": (["no_content"], "no_content", 1),
    "slow-once": (["slow:3"], "ok", 2),         # past the 1 s timeout once
}


def conversations():
    return [[{"role": "user", "content": p}] for p in SCRIPT]


def check(outcomes, server, client):
    assert len(outcomes) == len(SCRIPT)
    for (prompt, (_faults, expected, sent)), out in zip(SCRIPT.items(), outcomes, strict=True):
        assert server.by_prompt[prompt] == sent, prompt
        if expected == "ok":
            assert isinstance(out, Generated), (prompt, out)
            assert out.text == f"echo: {prompt}"
        else:
            assert isinstance(out, RequestFailure), (prompt, out)
            assert out.reason == expected
            assert out.message  # the server's or the transport's words, never empty
            assert out.attempts == sent
            if expected.startswith("http_"):
                assert out.status == int(expected[5:])
    s = client.stats.snapshot()
    failed = sum(1 for o in outcomes if isinstance(o, RequestFailure))
    assert s.queries == len(SCRIPT) and s.cached == 0
    assert s.succeeded + s.failed == len(SCRIPT) and s.failed == failed
    assert s.sent == server.requests == sum(v[2] for v in SCRIPT.values())
    assert s.retried == s.sent - s.queries
    assert s.prompt_tokens > 0 and s.completion_tokens > 0


@pytest.fixture
def scripted():
    with FaultServer({p: v[0] for p, v in SCRIPT.items()}) as server:
        yield server


def test_async_client_every_request_ends_answered_or_failed_with_reason(scripted):
    client = AsyncOpenAIClient(base_url=scripted.base_url, timeout=1.0,
                               max_concurrent_requests=4, **FAST)
    outcomes = generate_batch(client, conversations(), model="fault-model",
                              generation_config={"max_tokens": 8})
    check(outcomes, scripted, client)


def test_sync_client_in_threads_gives_the_same_accounting(scripted):
    client = OpenAIClient(base_url=scripted.base_url, timeout=1.0, **FAST)
    outcomes = generate_batch(client, conversations(), model="fault-model",
                              max_concurrent_requests=3)
    check(outcomes, scripted, client)


def test_sync_query_model_raises_typed_error_after_retries(fault_server):
    fault_server.script = {"x": ["503:0"] * 5}
    client = OpenAIClient(base_url=fault_server.base_url, max_retries=2, base_delay=0.01)
    with pytest.raises(LLMRequestError) as info:
        client.query_model(messages=[{"role": "user", "content": "x"}], model="m")
    err = info.value
    assert (err.reason, err.status, err.attempts) == ("http_503", 503, 3)
    assert "scripted status 503" in err.message and fault_server.requests == 3


def test_retry_after_is_honoured(fault_server):
    fault_server.script = {"wait": ["429:1", "ok"]}
    client = AsyncOpenAIClient(base_url=fault_server.base_url, max_retries=2, base_delay=0.01)
    [out] = generate_batch(client, [[{"role": "user", "content": "wait"}]], model="m")
    assert isinstance(out, Generated)
    (_, kind1, t1), (_, kind2, t2) = fault_server.log
    assert (kind1, kind2) == ("429", "ok")
    assert t2 - t1 >= 0.95  # the server asked for 1 s; backoff alone would be ~0.01 s
    assert client.stats.snapshot().retried == 1


def test_connection_refused_is_a_typed_failure():
    with FaultServer() as server:
        url = server.base_url
    client = AsyncOpenAIClient(base_url=url, max_retries=1, base_delay=0.01)
    [out] = generate_batch(client, [[{"role": "user", "content": "a"}]], model="m")
    assert isinstance(out, RequestFailure) and out.reason == "connection"
    assert out.attempts == 2 and client.stats.snapshot().failed == 1


def test_response_cache_makes_a_second_run_send_nothing_but_failures(fault_server, tmp_path):
    fault_server.script = {"bad": ["400"] * 5}
    convs = [[{"role": "user", "content": p}] for p in ("a", "b", "c", "bad")]

    def run():
        client = AsyncOpenAIClient(base_url=fault_server.base_url, cache_dir=tmp_path / "c",
                                   **FAST)
        return client, generate_batch(client, convs, model="m",
                                      generation_config={"seed": 1, "max_tokens": 4})

    client1, first = run()
    assert fault_server.requests == 4
    client2, second = run()
    # answered requests are not sent again; the failed one is (a failure is never cached)
    assert fault_server.requests == 5 and fault_server.by_prompt["bad"] == 2
    assert [o.texts for o in first[:3]] == [o.texts for o in second[:3]]
    assert isinstance(second[3], RequestFailure)
    s = client2.stats.snapshot()
    assert (s.queries, s.cached, s.sent, s.failed) == (4, 3, 1, 1)
    # another seed (or model, or message) is another request
    client3 = AsyncOpenAIClient(base_url=fault_server.base_url, cache_dir=tmp_path / "c")
    generate_batch(client3, convs[:1], model="m", generation_config={"seed": 2, "max_tokens": 4})
    assert fault_server.by_prompt["a"] == 2


def test_retry_policy_backoff_and_retry_after():
    p = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5)
    for retry, low in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 5.0)):
        d = p.delay(retry)
        assert low <= d <= low * 1.5
    assert p.delay(1, retry_after=7.0) == 7.0
    assert parse_retry_after("3") == 3.0 and parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a past date: no wait
    assert parse_retry_after("soon") is None


def test_typed_error_survives_pickling():
    err = LLMRequestError("http_429", "slow down", status=429, retryable=True,
                          retry_after=2.0, attempts=4)
    back = pickle.loads(pickle.dumps(err))
    assert (back.reason, back.status, back.retry_after, back.attempts) == ("http_429", 429,
                                                                          2.0, 4)
    assert str(back) == "http_429 (HTTP 429): slow down after 4 attempt(s)"


def test_stats_publish_into_a_stage_run_report():
    from curator.stages.base import ProcessingStage

    class Probe(ProcessingStage):
        name = "probe"

        def process(self, task):
            return task

    with FaultServer() as server:
        client = OpenAIClient(base_url=server.base_url)
        generate_batch(client, [[{"role": "user", "content": "a"}]], model="m")
    stage = Probe()
    snap = client.stats.publish(stage)
    assert stage.drain_counts()["llm_requests"]["succeeded"] == 1
    assert snap.requests_per_s > 0
    assert client.stats.snapshot().queries == 0  # drained
