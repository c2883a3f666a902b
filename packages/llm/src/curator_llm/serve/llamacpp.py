"""The llama.cpp backend: ``python -m llama_cpp.server`` (from ``llama-cpp-python[server]``,
the ``curator-llm[llamacpp]`` extra) serving GGUF models on CPU with OpenAI's API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from curator.child_process import die_with_parent

from curator_llm.serve.base import BaseModelConfig, BaseServerConfig, InferenceBackend
from curator_llm.serve.constants import EXTRA_BUFFERS_ENV, SIGKILL_WAIT_S, SIGTERM_WAIT_S

if TYPE_CHECKING:
    from curator_llm.serve.server import InferenceServer

__all__ = ["LlamaCppModelConfig", "LlamaCppServerConfig", "LlamaCppBackend",
           "die_with_parent"]


@dataclass
class LlamaCppModelConfig(BaseModelConfig):
    """A GGUF model: ``model_identifier`` is the ``.gguf`` path; ``model_name`` the name clients
    send (default: the file name without ``.gguf``); ``n_ctx`` the context length;
    ``chat_format`` llama.cpp's chat template name (None: the one in the GGUF file);
    ``settings`` any other ``llama_cpp.server`` model setting (e.g. ``{"n_batch": 256}``)."""

    n_ctx: int = 2048
    chat_format: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def resolved_model_name(self) -> str:
        if self.model_name:
            return self.model_name
        base = os.path.basename(self.model_identifier)
        return base[:-5] if base.endswith(".gguf") else base

    def server_settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": os.path.abspath(self.model_identifier),
                               "model_alias": self.resolved_model_name, "n_ctx": self.n_ctx}
        if self.chat_format:
            out["chat_format"] = self.chat_format
        return {**out, **self.settings}


@dataclass
class LlamaCppServerConfig(BaseServerConfig):
    """The llama.cpp server: ``n_threads`` per model (None: llama.cpp's default),
    ``host`` (loopback by default: the server has no key), ``python`` the interpreter that has
    ``llama_cpp`` (default: this one), ``extra_settings`` more server settings.
    ``extra_buffers``: llama.cpp's AMX / repacked CPU weight buffers — off by default because
    llama.cpp 0.3.36's AMX kernel crashes on AMX CPUs in VMs (see
    :mod:`curator_llm.serve.llamacpp_main`); turn on for speed where it works."""

    model_configs: ClassVar[tuple[type[BaseModelConfig], ...]] = (LlamaCppModelConfig,)
    n_threads: int | None = None
    host: str = "127.0.0.1"
    python: str | None = None
    extra_settings: dict[str, Any] = field(default_factory=dict)
    extra_buffers: bool = False


class LlamaCppBackend(InferenceBackend):
    """Runs one ``llama_cpp.server`` process for all the server's models (its config file
    lists them) in its own session (a Ctrl-C in the terminal reaches the driver, which stops
    the server in order) with PR_SET_PDEATHSIG (it dies if the driver is killed)."""

    def __init__(self, server: InferenceServer) -> None:
        self.server = server
        self.process: subprocess.Popen | None = None
        self.workdir: str | None = None
        self.log_path: str | None = None

    def command(self, config_file: str) -> list[str]:
        python = self.server.backend.python or sys.executable
        if self.server.backend.python:  # another interpreter may not have curator_llm
            return [python, "-m", "llama_cpp.server", "--config_file", config_file]
        return [python, "-m", "curator_llm.serve.llamacpp_main", "--config_file", config_file]

    def _check_installed(self) -> None:
        if self.server.backend.python:
            return
        import importlib.util

        if importlib.util.find_spec("llama_cpp") is None:
            raise RuntimeError("InferenceServer's llama.cpp backend needs llama-cpp-python's "
                               "server: pip install 'curator-llm[llamacpp]' (builds llama.cpp "
                               "with a C compiler), or pass "
                               "LlamaCppServerConfig(python=<an interpreter that has it>)")
        for name in ("uvicorn", "fastapi", "sse_starlette", "pydantic_settings"):
            if importlib.util.find_spec(name) is None:
                raise RuntimeError(f"llama-cpp-python is installed without its server extra "
                                   f"({name} is missing): pip install "
                                   f"'llama-cpp-python[server]'")

    def start(self) -> None:
        server, backend = self.server, self.server.backend
        for m in server.models:
            if not os.path.isfile(m.model_identifier):
                raise FileNotFoundError(f"GGUF model file {m.model_identifier!r} not found "
                                        f"(LlamaCppModelConfig.model_identifier must be a local "
                                        f".gguf path)")
        self._check_installed()
        self.workdir = tempfile.mkdtemp(prefix="curator-llamacpp-")
        settings: dict[str, Any] = {"host": backend.host, "port": server.port,
                                    **backend.extra_settings}
        models = []
        for m in server.models:
            ms = m.server_settings()
            if backend.n_threads is not None:
                ms.setdefault("n_threads", backend.n_threads)
                ms.setdefault("n_threads_batch", backend.n_threads)
            ms.setdefault("verbose", server.verbose)
            models.append(ms)
        settings["models"] = models
        config_file = os.path.join(self.workdir, "config.json")
        with open(config_file, "w", encoding="utf-8") as fh:
            json.dump(settings, fh)
        self.log_path = os.path.join(self.workdir, "server.log")
        log = open(self.log_path, "ab")
        env = {**os.environ, EXTRA_BUFFERS_ENV: "1" if backend.extra_buffers else "0"}
        # OpenMP's spinning workers starve each other on a busy machine (a 12-token answer took
        # 70 s instead of 1 s with 2 threads on 2 loaded cores); they sleep instead
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            self.process = subprocess.Popen(
                self.command(config_file), env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=die_with_parent, close_fds=True)
        finally:
            log.close()

    def log_tail(self, n: int = 4000) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - n))
            return fh.read().decode("utf-8", "replace")

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(SIGTERM_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                try:
                    proc.wait(SIGKILL_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
        if self.workdir is not None:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
