"""Decode encoded image bytes into RGB arrays with a pixel limit (decompression bombs)."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["IMAGE_EXTENSIONS", "DEFAULT_MAX_PIXELS", "ImageTooLarge", "decode_image"]

IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "bmp", "gif", "tif", "tiff")
DEFAULT_MAX_PIXELS = 89_478_485  # Pillow's own decompression-bomb limit


class ImageTooLarge(ValueError):
    """The image has more pixels than the decoder's limit (possible decompression bomb)."""


def decode_image(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS,
                 resize: tuple[int, int] | None = None) -> np.ndarray:
    """HxWx3 uint8 RGB array of ``data``; ``resize`` is ``(width, height)``.

    Raises :class:`ImageTooLarge` above ``max_pixels`` before decoding the pixels, and Pillow's
    errors for corrupt data.
    """
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:  # reads the header only
        w, h = img.size
        if w * h > max_pixels:
            raise ImageTooLarge(f"{w}x{h} = {w * h} pixels is above max_image_pixels={max_pixels}")
        img.load()
        rgb = img if img.mode == "RGB" else img.convert("RGB")  # convert() copies even then
        if resize is not None:
            rgb = rgb.resize(resize, Image.Resampling.BILINEAR)
        return np.asarray(rgb, dtype=np.uint8).copy()
