"""``InferenceServer``: model servers owned by a pipeline run (NeMo Curator's
``nemo_curator.core.serve.server``).

Started, it is health-checked before it is handed out; it is stopped when the ``with`` block
ends (normally, on an exception, on Ctrl-C), at interpreter exit, and — through Linux's
PR_SET_PDEATHSIG — when the driver is killed outright. Only llama.cpp's server is offered as a
backend (GGUF models on CPU); NeMo's default, vLLM on Ray Serve, and Dynamo are not (see
``curator migrate``).
"""

from __future__ import annotations

import atexit
import json
import logging
import socket
import time
import urllib.request
from dataclasses import dataclass, field

from curator_llm.serve.base import BaseModelConfig, BaseServerConfig, InferenceBackend
from curator_llm.serve.constants import DEFAULT_SERVE_HEALTH_TIMEOUT_S, DEFAULT_SERVE_PORT
from curator_llm.serve.llamacpp import LlamaCppBackend, LlamaCppServerConfig

__all__ = ["InferenceServer", "is_inference_server_active", "free_port"]

logger = logging.getLogger(__name__)

_active_servers: set[str] = set()


def is_inference_server_active() -> bool:
    """Whether an :class:`InferenceServer` is running in this process."""
    return bool(_active_servers)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerStartError(RuntimeError):
    """The model server exited or did not become healthy; the message has its log's tail.
    ``port_taken``: its log says the port was already in use."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.port_taken = "address already in use" in log_tail.lower()


#: servers started on a port chosen by InferenceServer(port=0) before giving up
_PORT_ATTEMPTS = 3


@dataclass
class InferenceServer:
    """Serve ``models`` behind an OpenAI-compatible endpoint for the length of a run::

        from curator_llm import InferenceServer, LlamaCppModelConfig, OpenAIClient
        with InferenceServer([LlamaCppModelConfig("SmolLM2-135M-Instruct.Q4_1.gguf")],
                             port=0) as server:
            client = OpenAIClient(base_url=server.endpoint)
            pipeline.run()   # stages built with that client

    ``backend``: :class:`LlamaCppServerConfig` (the only one offered); ``port``: where it
    listens (``0``: a free port, chosen at start); ``health_check_timeout_s``: how long to wait
    for the models to load. One server per process at a time, as in NeMo Curator.
    """

    models: list[BaseModelConfig]
    backend: BaseServerConfig = field(default_factory=LlamaCppServerConfig)
    name: str = "default"
    port: int = DEFAULT_SERVE_PORT
    health_check_timeout_s: int = DEFAULT_SERVE_HEALTH_TIMEOUT_S
    verbose: bool = False

    _started: bool = field(init=False, default=False, repr=False)
    _backend_impl: InferenceBackend | None = field(init=False, default=None, repr=False)
    _host: str = field(init=False, default="127.0.0.1", repr=False)

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("InferenceServer needs at least one model config")
        accepted = self.backend.model_configs
        wrong = sorted({type(m).__name__ for m in self.models if not isinstance(m, accepted)})
        if wrong:
            names = ", ".join(c.__name__ for c in accepted) or "<none>"
            raise TypeError(f"{type(self.backend).__name__} accepts {names}, but got "
                            f"{', '.join(wrong)}")
        if len({type(m) for m in self.models}) > 1:
            raise TypeError("All models in one InferenceServer must be the same config type")
        names = [m.resolved_model_name for m in self.models]
        if len(set(names)) != len(names):
            raise ValueError(f"two models are served under one name: {names}")

    # -- lifecycle ---------------------------------------------------------------------------
    def _create_backend(self) -> InferenceBackend:
        if isinstance(self.backend, LlamaCppServerConfig):
            return LlamaCppBackend(self)
        raise TypeError(f"Unknown backend config type: {type(self.backend)!r} (Curator offers "
                        f"LlamaCppServerConfig; Ray Serve and Dynamo are not offered)")

    def start(self) -> None:
        """Start the server and wait until every model answers on ``/v1/models``."""
        if _active_servers:
            raise RuntimeError(f"Cannot start InferenceServer {self.name!r}: another "
                               f"InferenceServer is already active (running: "
                               f"{', '.join(sorted(_active_servers))}). Stop it first.")
        if isinstance(self.backend, LlamaCppServerConfig):
            self._host = self.backend.host
        auto_port = self.port == 0
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            if auto_port:
                self.port = free_port(self._host)
            try:
                self._start_once()
                break
            except ServerStartError as exc:
                # a free port can be taken by another process before the server binds it; a
                # port this object chose is chosen again, a port the user gave is an error
                if not (auto_port and exc.port_taken) or attempt == _PORT_ATTEMPTS:
                    if auto_port:
                        self.port = 0
                    raise
                logger.info("port %d was taken before the server bound it; trying another",
                            self.port)
        logger.info("inference server %r is ready at %s", self.name, self.endpoint)

    def _start_once(self) -> None:
        atexit.register(self.stop)
        impl = self._backend_impl = self._create_backend()
        self._started = True
        _active_servers.add(self.name)
        try:
            impl.start()
            self._wait_for_healthy()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (idempotent). A server this object did not start is never touched."""
        if not self._started:
            return
        try:
            if self._backend_impl is not None:
                self._backend_impl.stop()
        finally:
            self._backend_impl = None
            _active_servers.discard(self.name)
            self._started = False
            atexit.unregister(self.stop)

    @property
    def endpoint(self) -> str:
        """The OpenAI-compatible base URL (``http://host:port/v1``) to give clients."""
        return f"http://{self._host}:{self.port}/v1"

    base_url = endpoint

    @property
    def model_names(self) -> list[str]:
        """The names clients send as ``model=``."""
        return [m.resolved_model_name for m in self.models]

    @property
    def pid(self) -> int | None:
        """The server process id while it runs."""
        proc = getattr(self._backend_impl, "process", None)
        return proc.pid if proc is not None else None

    def _wait_for_healthy(self) -> None:
        expected = set(self.model_names)
        url = f"{self.endpoint}/models"
        deadline = time.monotonic() + self.health_check_timeout_s
        last = "no answer yet"
        while time.monotonic() < deadline:
            code = getattr(self._backend_impl, "exited", lambda: None)()
            if code is not None:
                tail = self._log_tail()
                raise ServerStartError(f"the model server exited with code {code} while "
                                       f"starting; its log ends:\n{tail}", tail)
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    body = json.loads(resp.read())
                ids = {m.get("id") for m in body.get("data", [])}
                if expected <= ids:
                    return
                last = f"serving {sorted(ids)}, waiting for {sorted(expected - ids)}"
            except (OSError, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(0.1)
        raise ServerStartError(f"the model server did not become ready within "
                               f"{self.health_check_timeout_s}s ({last}); its log ends:\n"
                               f"{self._log_tail()}")

    def _log_tail(self) -> str:
        tail = getattr(self._backend_impl, "log_tail", None)
        return tail() if tail is not None else ""

    def __enter__(self) -> InferenceServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
