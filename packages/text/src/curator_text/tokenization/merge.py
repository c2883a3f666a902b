"""merge_file_prefixes: NeMo Curator's merge of Megatron-LM ``.bin`` + ``.idx`` pairs into one."""

from __future__ import annotations

import os
import shutil
import struct

import numpy as np
from curator.errors import ConfigError
from curator.io import atomic_write

from curator_text.tokenization.megatron import DTYPE_CODES, INDEX_HEADER

__all__ = ["merge_file_prefixes", "read_index"]

_CODE_DTYPES = {code: dtype for dtype, code in DTYPE_CODES.items()}


def read_index(idx_path: str) -> tuple[np.ndarray, np.ndarray, type]:
    """``(sequence lengths, document index, token dtype)`` of a Megatron-LM ``.idx`` file."""
    with open(idx_path, "rb") as fh:
        if fh.read(9) != INDEX_HEADER or struct.unpack("<Q", fh.read(8))[0] != 1:
            raise ConfigError(f"merge_file_prefixes: {idx_path} is not a version-1 Megatron-LM "
                              "index (MMIDIDX); pass a folder of .bin/.idx pairs")
        dtype = _CODE_DTYPES[struct.unpack("<B", fh.read(1))[0]]
        n_seq, n_doc = struct.unpack("<QQ", fh.read(16))
        sizes = np.frombuffer(fh.read(4 * n_seq), dtype="<i4")
        fh.seek(8 * n_seq, os.SEEK_CUR)  # byte offsets: recomputed from the sizes when merging
        docs = np.frombuffer(fh.read(8 * n_doc), dtype="<i8")
    return sizes, docs, dtype


def merge_file_prefixes(input_dir: str, output_prefix: str) -> None:
    """Merge every ``{prefix}.bin`` + ``{prefix}.idx`` pair in ``input_dir`` (sorted by prefix)
    into ``output_prefix.bin`` + ``.idx`` (each written atomically, ``.idx`` last), as NeMo
    Curator's ``nemo_curator.utils.merge_file_prefixes``. Raises when a pair is incomplete, none
    is found, or the token dtypes differ."""
    names = [n for n in os.listdir(input_dir) if os.path.isfile(os.path.join(input_dir, n))]
    prefixes = sorted({os.path.splitext(n)[0] for n in names
                       if os.path.splitext(n)[1] in (".bin", ".idx")})
    for prefix in prefixes:
        for ext in (".bin", ".idx"):
            if prefix + ext not in names:
                raise ConfigError(f"merge_file_prefixes: {os.path.join(input_dir, prefix + ext)} "
                                  "is missing; each prefix needs both its .bin and .idx")
    if not prefixes:
        raise ConfigError(f"merge_file_prefixes: no .bin/.idx pairs in {input_dir}")
    indexes = [read_index(os.path.join(input_dir, p + ".idx")) for p in prefixes]
    dtype = indexes[0][2]
    if any(ix[2] is not dtype for ix in indexes):
        raise ConfigError(f"merge_file_prefixes: the pairs in {input_dir} mix token dtypes "
                          f"{sorted({ix[2].__name__ for ix in indexes})}; merge one dtype at a time")
    sizes, docs, offset = [], [np.zeros(1, dtype=np.int64)], 0
    with atomic_write(output_prefix + ".bin", "wb") as out:
        for prefix, (seq_sizes, doc_index, _) in zip(prefixes, indexes, strict=True):
            with open(os.path.join(input_dir, prefix + ".bin"), "rb") as fh:
                shutil.copyfileobj(fh, out)
            sizes.append(seq_sizes)
            docs.append(doc_index[1:] + offset)  # Megatron-LM's add_index
            offset += len(seq_sizes)
    all_sizes = np.concatenate(sizes).astype("<i4")
    pointers = np.zeros(len(all_sizes), dtype="<i8")
    if len(all_sizes):
        pointers[1:] = np.cumsum(all_sizes[:-1], dtype=np.int64) * np.dtype(dtype).itemsize
    all_docs = np.concatenate(docs).astype("<i8")
    with atomic_write(output_prefix + ".idx", "wb") as out:
        out.write(INDEX_HEADER + struct.pack("<Q", 1) + struct.pack("<B", DTYPE_CODES[dtype]))
        out.write(struct.pack("<QQ", len(all_sizes), len(all_docs)))
        for arr in (all_sizes, pointers, all_docs):
            out.write(arr.tobytes(order="C"))
