"""``python -m curator_llm.serve.llamacpp_main ARGS``: llama.cpp's OpenAI server
(``python -m llama_cpp.server ARGS``) with llama.cpp's extra CPU weight buffers (AMX / repacked
layouts) off unless ``CURATOR_LLAMACPP_EXTRA_BUFFERS=1``.

Why: on CPUs that report AMX inside a VM (the Firecracker machines Curator is built on),
llama.cpp 0.3.36's AMX matrix multiply crashes the server with SIGSEGV on the first request;
the plain CPU kernels answer correctly. ``llama-cpp-python`` exposes the switch
(``llama_model_params.use_extra_bufts``) only in its low-level API, so it is set here before the
server loads its models.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]

# the same name as curator_llm.serve.constants.EXTRA_BUFFERS_ENV (not imported: this module runs
# as __main__ before the package is loaded)
EXTRA_BUFFERS_ENV = "CURATOR_LLAMACPP_EXTRA_BUFFERS"


def _without_extra_buffers() -> None:
    import llama_cpp.llama_cpp as low

    default = low.llama_model_default_params

    def params():  # the structure llama_cpp.Llama starts from
        p = default()
        p.use_extra_bufts = False
        return p

    low.llama_model_default_params = params


def main() -> None:
    if os.environ.get(EXTRA_BUFFERS_ENV, "0") != "1":
        _without_extra_buffers()
    from llama_cpp.server.__main__ import main as server_main

    sys.argv = ["llama_cpp.server", *sys.argv[1:]]
    server_main()


if __name__ == "__main__":
    main()
