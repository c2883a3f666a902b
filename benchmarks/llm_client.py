"""Curator's LLM client against a plain asyncio + httpx loop, same server, same prompts.

At each concurrency (default 1, 4 and 16) the same conversations are sent by
:func:`curator_llm.client.generate_batch` over an ``AsyncOpenAIClient`` (retry policy, typed
failures, accounting; response cache off) and by a plain loop (``httpx.AsyncClient`` + a
semaphore, the same JSON body), alternately (the order flips every repeat), ``--repeats`` times;
the medians of requests/s are reported with their ratio (target >= 0.9x) and the peak RSS of
this process and the server.

    uv run python benchmarks/llm_client.py                 # SmolLM2 on llama.cpp (CPU)
    uv run python benchmarks/llm_client.py --server echo   # an instant echo server: client cost
    uv run python benchmarks/llm_client.py --base-url http://host:8000/v1 --model NAME

``--server echo`` runs :class:`curator_llm.testing.FaultServer` in its own process, so the
figures show what the client layers themselves cost per request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _rss import PeakRSS

TEXTS = ["the cat sat on teh mat and it was v happy lol", "i has went to the store yesterday",
         "their going to the park tomorow", "she dont like apples but she like pears",
         "we was late becuase of the rain", "the results was suprising to every one",
         "he goed home after the meating", "its a nice day to go outside isnt it"]


def conversations(n: int) -> list[list[dict]]:
    return [[{"role": "system", "content": "Rewrite the sentence with correct spelling."},
             {"role": "user", "content": f"{TEXTS[i % len(TEXTS)]} ({i})"}] for i in range(n)]


def ours(base_url: str, model: str, convs: list, concurrency: int, max_tokens: int) -> int:
    from curator_llm.client import AsyncOpenAIClient, Generated, generate_batch

    client = AsyncOpenAIClient(base_url=base_url, max_concurrent_requests=concurrency,
                               timeout=600)
    out = generate_batch(client, convs, model=model,
                         generation_config={"max_tokens": max_tokens, "temperature": 0.0})
    return sum(isinstance(o, Generated) for o in out)


def floor(base_url: str, model: str, convs: list, concurrency: int, max_tokens: int) -> int:
    import httpx

    body = {"model": model, "max_tokens": max_tokens, "n": 1, "seed": 0, "stop": None,
            "stream": False, "temperature": 0.0, "top_p": 0.95}

    async def run() -> int:
        sem = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(timeout=600) as http:
            async def one(messages: list) -> str:
                async with sem:
                    r = await http.post(f"{base_url}/chat/completions",
                                        json={**body, "messages": messages})
                    r.raise_for_status()
                    return r.json()["choices"][0]["message"]["content"]
            answers = await asyncio.gather(*(one(m) for m in convs))
        return sum(isinstance(a, str) for a in answers)

    return asyncio.run(run())


@contextlib.contextmanager
def server(kind: str, base_url: str | None, model: str | None):
    if base_url:
        yield base_url, model, None
        return
    if kind == "echo":
        code = ("import time; from curator_llm.testing import FaultServer\n"
                "s = FaultServer().start(); print(s.base_url, flush=True)\n"
                "time.sleep(10**6)")
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            yield proc.stdout.readline().strip(), "fault-model", proc.pid
        finally:
            proc.kill()
            proc.wait()
        return
    from curator_llm.testing import SMOLLM2_MODEL, serve_smollm2

    with serve_smollm2(skip_if_missing=False) as s:
        yield s.endpoint, SMOLLM2_MODEL, s.pid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", choices=("smollm2", "echo"), default="smollm2")
    ap.add_argument("--base-url", help="an OpenAI-compatible /v1 URL you run (no server started)")
    ap.add_argument("--model")
    ap.add_argument("--requests", type=int, default=None,
                    help="conversations per run (default 16 on SmolLM2, 400 on echo)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    n = args.requests or (400 if args.server == "echo" and not args.base_url else 16)
    convs = conversations(n)
    rows = []
    with server(args.server, args.base_url, args.model) as (url, model, pid):
        pids = lambda: [os.getpid(), *([pid] if pid else [])]  # noqa: E731
        ours(url, model, convs[:2], 1, args.max_tokens)  # warm both paths up
        floor(url, model, convs[:2], 1, args.max_tokens)
        with PeakRSS(processes=pids) as rss:
            for c in args.concurrency:
                times: dict[str, list[float]] = {"curator": [], "plain": []}
                for rep in range(args.repeats):
                    order = [("curator", ours), ("plain", floor)]
                    for name, fn in order if rep % 2 == 0 else order[::-1]:
                        t0 = time.perf_counter()
                        ok = fn(url, model, convs, c, args.max_tokens)
                        dt = time.perf_counter() - t0
                        if ok != n:
                            raise SystemExit(f"{name} answered {ok}/{n} at concurrency {c}")
                        times[name].append(n / dt)
                med = {k: statistics.median(v) for k, v in times.items()}
                rows.append({"concurrency": c, "curator_rps": round(med["curator"], 2),
                             "plain_rps": round(med["plain"], 2),
                             "ratio": round(med["curator"] / med["plain"], 3),
                             "runs": {k: [round(x, 2) for x in v] for k, v in times.items()}})
                print(f"concurrency {c:>3}: curator {med['curator']:8.2f} req/s   plain "
                      f"{med['plain']:8.2f} req/s   ratio {rows[-1]['ratio']:.3f}", flush=True)
    print(f"peak RSS (this process + server): {rss.peak / 2**20:.0f} MB; {n} requests per run, "
          f"max_tokens={args.max_tokens}, median of {args.repeats}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"server": args.base_url or args.server, "requests": n, "rows": rows,
                       "peak_rss_mb": round(rss.peak / 2**20)}, fh, indent=1)


if __name__ == "__main__":
    main()
