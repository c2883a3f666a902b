"""Models used by the image stages (loaded lazily from local directories)."""

from __future__ import annotations

import threading

__all__ = ["LOAD_LOCK"]

LOAD_LOCK = threading.RLock()
"""Held while importing torch/transformers and loading a model: worker threads that set up at
the same moment would otherwise race on torch's first import (a circular-import error)."""
