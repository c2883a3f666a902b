"""Image decoding for the interleaved filters."""

from __future__ import annotations

import logging
from collections.abc import Hashable

import numpy as np

__all__ = ["image_bytes_to_array", "image_size"]

log = logging.getLogger(__name__)


def image_bytes_to_array(image_bytes: bytes, *, row_index: Hashable | None = None
                         ) -> np.ndarray | None:
    """HxWx3 uint8 RGB array of encoded image bytes (OpenCV's decoder, as NeMo Curator), or
    ``None`` when they do not decode."""
    import cv2

    try:
        arr = np.frombuffer(image_bytes, dtype=np.uint8)
        image = cv2.imdecode(arr, cv2.IMREAD_COLOR)
        if image is None:
            return _pil_rgb(image_bytes)  # formats OpenCV lacks (GIF, multi-page TIFF frames)
        return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    except cv2.error as e:
        log.debug("image decode failed (row %s): %s", row_index, e)
        return None


def _pil_rgb(image_bytes: bytes) -> np.ndarray | None:
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(image_bytes)) as img:
            return np.asarray(img.convert("RGB"))
    except (OSError, SyntaxError, ValueError):
        return None


def image_size(image_bytes: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the image header (no pixel decode), or ``None`` when the bytes
    are not an image PIL can open."""
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(image_bytes)) as img:
            return img.size
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return None


def __getattr__(name: str) -> object:
    # NeMo Curator's module imports cv2 at the top (code patches ``image_utils.cv2.imdecode``);
    # here OpenCV loads only when asked for, and it is the same module the functions use
    if name == "cv2":
        import cv2

        return cv2
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
