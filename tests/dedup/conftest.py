"""Fixtures of the dedup tests: runs print no summary; one shared corpus per module."""

from __future__ import annotations

import pytest

from tests.dedup.corpus import make_corpus


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("CURATOR_SUMMARY", "0")


@pytest.fixture(scope="module")
def corpus():
    return make_corpus()
