"""Defaults of :class:`~curator_llm.serve.InferenceServer` (NeMo Curator's names)."""

__all__ = ["DEFAULT_SERVE_PORT", "DEFAULT_SERVE_HEALTH_TIMEOUT_S", "SIGTERM_WAIT_S",
           "SIGKILL_WAIT_S", "EXTRA_BUFFERS_ENV"]

#: NeMo's default port; ``InferenceServer(port=0)`` picks a free one instead
DEFAULT_SERVE_PORT = 8000
DEFAULT_SERVE_HEALTH_TIMEOUT_S = 300
#: seconds a stopped server gets to exit after SIGTERM before SIGKILL
SIGTERM_WAIT_S = 10
SIGKILL_WAIT_S = 5
#: set to "1" by LlamaCppServerConfig(extra_buffers=True) for the server process
EXTRA_BUFFERS_ENV = "CURATOR_LLAMACPP_EXTRA_BUFFERS"
