"""Default file extensions of the interleaved readers (NeMo Curator's)."""

from __future__ import annotations

__all__ = ["DEFAULT_IMAGE_EXTENSIONS", "DEFAULT_JSON_EXTENSIONS", "DEFAULT_WEBDATASET_EXTENSIONS"]

DEFAULT_WEBDATASET_EXTENSIONS = (".tar", ".tar.gz", ".tgz")
DEFAULT_JSON_EXTENSIONS = (".json",)
DEFAULT_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp", ".bmp", ".gif")
