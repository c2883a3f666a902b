"""The response cache on disk: atomic entries shared by several writer processes; a file a
killed writer left behind is never read as an answer; the key covers every parameter."""

from __future__ import annotations

import multiprocessing as mp
import os

from curator_llm.client import GenerationConfig, ResponseCache, request_key

MSG = [{"role": "user", "content": "hello"}]


def _writer(directory: str, start: int) -> None:
    cache = ResponseCache(directory)
    for i in range(start, start + 60):
        cache.put(f"{i:064x}", [f"answer {i}"], model="m")


def test_several_processes_write_one_cache(tmp_path):
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 30)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = ResponseCache(tmp_path)
    assert len(cache) == 90  # the 30 keys both wrote are there once
    assert all(cache.get(f"{i:064x}") == [f"answer {i}"] for i in range(90))
    assert not [f for _r, _d, fs in os.walk(tmp_path) for f in fs if f.endswith(".tmp")]


def test_leftovers_of_a_killed_writer_are_misses(tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key("m", MSG, GenerationConfig())
    folder = tmp_path / key[:2]
    folder.mkdir()
    (folder / f".{key[:16]}.x.tmp").write_text('{"choices": ["half')  # killed mid-write
    assert cache.get(key) is None and key not in cache
    (folder / f"{key}.json").write_text('{"choices": ["trunc')        # not ours, but unreadable
    assert cache.get(key) is None
    cache.put(key, ["whole"])
    assert cache.get(key) == ["whole"]


def test_the_key_covers_model_messages_and_every_parameter():
    base = request_key("m", MSG, GenerationConfig())
    assert base == request_key("m", list(MSG), {"max_tokens": 2048, "n": 1, "seed": 0,
                                                "stop": None, "stream": False,
                                                "temperature": 0.0, "top_k": None,
                                                "top_p": 0.95, "extra_kwargs": None})
    others = [request_key("m2", MSG, GenerationConfig()),
              request_key("m", [{"role": "user", "content": "hello!"}], GenerationConfig()),
              request_key("m", MSG, GenerationConfig(seed=1)),
              request_key("m", MSG, GenerationConfig(max_tokens=10)),
              request_key("m", MSG, GenerationConfig(extra_kwargs={"response_format": {}}))]
    assert len({base, *others}) == 6
