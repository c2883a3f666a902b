"""Fixtures for the image tests: tiny random-weight models and generated WebDataset shards."""

from __future__ import annotations

import io
import os
import tarfile

import pytest
from curator_image.testing import (
    TINY_CLIP_EMBED_DIM,
    encode_image,
    make_image,
    make_tiny_aesthetic_model,
    make_tiny_clip_model,
    make_tiny_nsfw_model,
    make_webdataset_shards,
)

os.environ.setdefault("CURATOR_SUMMARY", "0")


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("image_models"))


@pytest.fixture(scope="session")
def clip_dir(models_dir) -> str:
    return make_tiny_clip_model(os.path.join(models_dir, "clip"))


@pytest.fixture(scope="session")
def aesthetic_dir(models_dir) -> str:
    return make_tiny_aesthetic_model(os.path.join(models_dir, "aesthetic"), TINY_CLIP_EMBED_DIM)


@pytest.fixture(scope="session")
def nsfw_dir(models_dir) -> str:
    return make_tiny_nsfw_model(os.path.join(models_dir, "nsfw"), TINY_CLIP_EMBED_DIM)


@pytest.fixture
def shards(tmp_path) -> list[str]:
    """Two shards of 6 samples; the last sample of each repeats the first one's bytes."""
    return make_webdataset_shards(str(tmp_path / "shards"), n_shards=2, per_shard=6,
                                  duplicates=1)


def add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def make_tar(tmp_path):
    """Write a tar of ``[(member name, bytes)]``; returns its path."""

    def _make(name: str, members: list[tuple[str, bytes]]) -> str:
        path = tmp_path / "custom" / name
        path.parent.mkdir(exist_ok=True)
        with tarfile.open(path, "w") as tar:
            for member, data in members:
                add_member(tar, member, data)
        return str(path)

    return _make


def jpg(seed: int) -> bytes:
    return encode_image(make_image(seed))
