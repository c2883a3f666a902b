"""Write WebDataset samples into a tar stream, laid out as ``webdataset.TarWriter`` does."""

from __future__ import annotations

import io
import tarfile
import time
from typing import Any, BinaryIO

__all__ = ["TarShardWriter"]


class TarShardWriter:
    """Writes samples (``{"__key__": key, ext: bytes or str, ...}``) to ``fileobj`` as the
    members ``{key}.{ext}`` in sorted extension order, mode ``0o444``, owner and group
    ``bigdata`` and the time of writing as mtime: byte for byte what ``webdataset.TarWriter``
    writes for such samples, without importing webdataset (it imports torch: half a GiB in
    every process that writes). Keys starting with ``_`` are not written."""

    def __init__(self, fileobj: BinaryIO) -> None:
        self._tar = tarfile.open(fileobj=fileobj, mode="w|")

    def write(self, sample: dict[str, Any]) -> None:
        key = sample["__key__"]
        for ext in sorted(sample):
            if ext.startswith("_"):
                continue
            data = sample[ext]
            if isinstance(data, str):
                data = data.encode("utf-8")
            info = tarfile.TarInfo(f"{key}.{ext}")
            info.size = len(data)
            info.mtime = time.time()
            info.mode = 0o444
            info.uname = info.gname = "bigdata"
            self._tar.addfile(info, io.BytesIO(data))

    def close(self) -> None:
        self._tar.close()
