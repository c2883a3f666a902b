"""The clients against the real SmolLM2-135M-Instruct model served by llama.cpp on 127.0.0.1
(one server for the module): NeMo's call shapes work, tokens are counted, answers at
temperature 0 are reproducible, and a second run with the response cache sends no request
(counted at a proxy in front of the server)."""

from __future__ import annotations

from curator_llm.client import (
    AsyncOpenAIClient,
    Generated,
    GenerationConfig,
    OpenAIClient,
    generate_batch,
)
from curator_llm.testing import SMOLLM2_MODEL, CountingProxy

SHORT = GenerationConfig(max_tokens=12, temperature=0.0, seed=7)


def ask(text: str) -> list[dict]:
    return [{"role": "system", "content": "You correct spelling. Answer with the sentence."},
            {"role": "user", "content": text}]


def test_nemo_style_sync_query(smollm2):
    client = OpenAIClient(api_key="unused", base_url=smollm2.endpoint)
    first = client.query_model(messages=ask("the cat sat on teh mat"), model=SMOLLM2_MODEL,
                               generation_config=SHORT)
    again = client.query_model(messages=ask("the cat sat on teh mat"), model=SMOLLM2_MODEL,
                               generation_config=SHORT)
    assert len(first) == 1 and first[0].strip()
    assert first == again  # temperature 0 and a fixed seed: the same answer
    s = client.stats.snapshot()
    assert (s.queries, s.sent, s.succeeded, s.failed) == (2, 2, 2, 0)
    assert s.prompt_tokens > 10 and 0 < s.completion_tokens <= 24


def test_batch_then_cached_rerun_sends_nothing(smollm2, tmp_path):
    texts = ["i has a apple", "she go to school yesterday", "we was happy", "he dont know"]
    convs = [ask(t) for t in texts]
    with CountingProxy(smollm2.endpoint) as proxy:
        client = AsyncOpenAIClient(base_url=proxy.base_url, cache_dir=tmp_path / "cache",
                                   max_concurrent_requests=4)
        first = generate_batch(client, convs, model=SMOLLM2_MODEL, generation_config=SHORT)
        assert proxy.requests == 4
        assert all(isinstance(o, Generated) and o.text.strip() for o in first)
        rerun = AsyncOpenAIClient(base_url=proxy.base_url, cache_dir=tmp_path / "cache")
        second = generate_batch(rerun, convs, model=SMOLLM2_MODEL, generation_config=SHORT)
        assert proxy.requests == 4  # nothing reached the server
    assert [o.texts for o in first] == [o.texts for o in second]
    s = rerun.stats.snapshot()
    assert (s.queries, s.cached, s.sent) == (4, 4, 0)
