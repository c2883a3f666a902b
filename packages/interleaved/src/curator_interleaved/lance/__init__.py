"""Lance-backed interleaved readers."""

from __future__ import annotations

from curator_interleaved.lance.reader import InterleavedLanceReader, InterleavedLanceReaderStage

__all__ = ["InterleavedLanceReader", "InterleavedLanceReaderStage"]
