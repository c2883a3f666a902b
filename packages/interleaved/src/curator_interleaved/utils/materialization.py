"""Lazy materialisation: image bytes fetched from their ``source_ref`` only when a stage needs
them.

Each pending image row is read by the cheapest route its locator allows:

* **byte range** (``path`` + ``byte_offset`` + ``byte_size``): one batched ``cat_ranges`` per
  filesystem, identical ranges fetched once;
* **tar member** (``path`` + ``member``, no range): the tar is opened once and scanned for the
  members asked;
* **whole file** (``path`` alone): a local path, any fsspec URL, or ``http(s)://`` (read with
  the standard library, a 30 s timeout), each file read once.

``frame_index`` then picks one frame of a multi-frame TIFF. A row whose bytes cannot be had keeps
``binary_content`` null and gets the reason in ``materialize_error``; nothing raises. Whether such
a row is rejected is the caller's decision (a stage that needed the bytes sends it to the
rejected sink).
"""

from __future__ import annotations

import io
import logging
import tarfile
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.validation_utils import resolve_storage_options

__all__ = ["fetch_bytes", "materialize_table", "materialize_task_binary_content",
           "extract_tiff_frame", "is_local_filesystem", "replace_rows", "HTTP_TIMEOUT_S"]

log = logging.getLogger(__name__)

HTTP_TIMEOUT_S = 30.0


def extract_tiff_frame(data: bytes, frame_index: int) -> bytes | None:
    """Frame ``frame_index`` of a multi-frame TIFF as a single-frame TIFF (lossless); other
    formats are returned unchanged; ``None`` when the frame does not exist or cannot be read."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.format != "TIFF":
                return data
            if frame_index >= getattr(img, "n_frames", 1) or frame_index < 0:
                return None
            img.seek(frame_index)
            frame = img.copy()  # decoded before the source closes
        out = io.BytesIO()
        frame.save(out, format="TIFF")  # never the source's lossy codec: RGBA survives
        return out.getvalue()
    except (OSError, SyntaxError, ValueError):
        return None


_extract_tiff_frame = extract_tiff_frame  # NeMo Curator's (private) name


def _is_http(path: str) -> bool:
    return path.startswith(("http://", "https://"))


def _read_http(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as resp:
        return resp.read()


def fetch_bytes(refs: Sequence[dict[str, Any]], storage_options: dict[str, Any] | None = None
                ) -> tuple[list[bytes | None], list[str | None]]:
    """The bytes each parsed locator in ``refs`` names, and for each failure its reason
    (``(payloads, errors)``, aligned with ``refs``)."""
    import fsspec

    options = storage_options or {}
    n = len(refs)
    payloads: list[bytes | None] = [None] * n
    errors: list[str | None] = [None] * n
    ranges: dict[str, list[tuple[int, int, int]]] = {}
    members: dict[str, list[tuple[int, str]]] = {}
    whole: dict[str, list[int]] = {}
    for i, ref in enumerate(refs):
        path = ref.get("path")
        if not path:
            errors[i] = "missing path"
            continue
        member, off, size = ref.get("member"), ref.get("byte_offset"), ref.get("byte_size")
        if off is not None and size is not None and int(size) > 0:
            ranges.setdefault(path, []).append((i, int(off), int(size)))
        elif member:
            members.setdefault(path, []).append((i, str(member)))
        else:
            whole.setdefault(path, []).append(i)

    if ranges:
        _read_ranges(ranges, refs, options, payloads, errors, fsspec)
    for path, wanted in members.items():
        _read_members(path, wanted, options, payloads, errors, fsspec)
    for path, rows in whole.items():
        try:
            if _is_http(path):
                data = _read_http(path)
            else:
                with fsspec.open(path, "rb", **options) as fh:
                    data = fh.read()
            for i in rows:
                payloads[i] = data
        except Exception as e:
            for i in rows:
                errors[i] = f"failed to read {path}: {type(e).__name__}: {e}"

    for i, ref in enumerate(refs):  # frames of multi-frame TIFFs
        frame = ref.get("frame_index")
        if frame is not None and payloads[i] is not None:
            out = extract_tiff_frame(payloads[i], int(frame))
            if out is None:
                payloads[i] = None
                errors[i] = f"failed to extract frame {frame} from '{ref.get('member') or ref['path']}'"
            else:
                payloads[i] = out
    return payloads, errors


def _read_ranges(groups: dict[str, list[tuple[int, int, int]]], refs: Sequence[dict[str, Any]],
                 options: dict[str, Any], payloads: list, errors: list, fsspec: Any) -> None:
    by_fs: dict[int, tuple[Any, dict[tuple[str, int, int], list[int]]]] = {}
    for path, entries in groups.items():
        try:
            fs, inner = fsspec.core.url_to_fs(path, **options)
        except Exception as e:
            for i, _, _ in entries:
                errors[i] = f"failed to resolve filesystem for {path}: {e}"
            continue
        unique = by_fs.setdefault(id(fs), (fs, {}))[1]
        for i, off, size in entries:
            unique.setdefault((inner, off, size), []).append(i)
    for fs, unique in by_fs.values():
        keys = list(unique)
        if is_local_filesystem(fs):
            blobs = _read_local_ranges(keys)
        else:
            try:
                blobs = fs.cat_ranges([k[0] for k in keys], [k[1] for k in keys],
                                      [k[1] + k[2] for k in keys], on_error="return")
            except Exception as e:
                blobs = [e] * len(keys)
        for key, blob in zip(keys, blobs, strict=True):
            rows = unique[key]
            if isinstance(blob, BaseException):
                reason = f"range read error: {type(blob).__name__}: {blob}"
            elif blob is None or len(blob) != key[2]:
                got = 0 if blob is None else len(blob)
                reason = (f"short range read: {got} of {key[2]} bytes at offset {key[1]} "
                          f"(truncated file?)")
            else:
                data = bytes(blob)
                for i in rows:
                    payloads[i] = data
                continue
            for i in rows:
                member = refs[i].get("member")
                errors[i] = f"{reason}" + (f" for member '{member}'" if member else "")


def is_local_filesystem(fs: Any) -> bool:
    """Whether ``fs`` (an fsspec filesystem, or ``curator.local_fs``'s) is the local disk."""
    from curator.local_fs import LocalFileSystem as CuratorLocal
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem | CuratorLocal)


def _read_local_ranges(keys: list[tuple[str, int, int]]) -> list[bytes | BaseException]:
    """``(path, offset, size)`` ranges of local files: each file opened once and read in offset
    order (``cat_ranges`` of a local filesystem opens the file again for every range)."""
    import os

    blobs: list[bytes | BaseException] = [b""] * len(keys)
    by_path: dict[str, list[int]] = {}
    for k, key in enumerate(keys):
        by_path.setdefault(key[0], []).append(k)
    for path, ks in by_path.items():
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            for k in ks:
                blobs[k] = e
            continue
        try:
            for k in sorted(ks, key=lambda k: keys[k][1]):
                try:
                    blobs[k] = _pread_full(fd, keys[k][2], keys[k][1])
                except OSError as e:
                    blobs[k] = e
        finally:
            os.close(fd)
    return blobs


def _pread_full(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset``, fewer only at the end of the file."""
    import os

    data = os.pread(fd, size, offset)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, offset + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _read_members(path: str, wanted: list[tuple[int, str]], options: dict[str, Any],
                  payloads: list, errors: list, fsspec: Any) -> None:
    names = {m for _, m in wanted}
    found: dict[str, bytes] = {}
    try:
        with fsspec.open(path, "rb", **options) as fh, \
                tarfile.open(fileobj=fh, mode="r:*") as tf:
            for info in tf:
                if info.name in names and info.isfile():
                    f = tf.extractfile(info)
                    if f is not None:
                        found[info.name] = f.read()
                    if len(found) == len(names):
                        break
    except Exception as e:
        for i, m in wanted:
            if m not in found:
                errors[i] = f"failed to read member '{m}' of {path}: {type(e).__name__}: {e}"
    for i, m in wanted:
        if m in found:
            payloads[i] = found[m]
        elif errors[i] is None:
            errors[i] = f"missing member '{m}'"


def _pending_rows(table: pa.Table, only_missing_binary: bool,
                  image_content_types: tuple[str, ...] | None) -> list[int]:
    if table.num_rows == 0 or "modality" not in table.column_names:
        return []
    mask = pc.fill_null(pc.equal(table["modality"], "image"), False)
    if image_content_types is not None and "content_type" in table.column_names:
        mask = pc.and_(mask, pc.fill_null(pc.is_in(table["content_type"],
                                                   pa.array(image_content_types)), False))
    if only_missing_binary and "binary_content" in table.column_names:
        mask = pc.and_(mask, pc.is_null(table["binary_content"]))
    return pc.indices_nonzero(mask).to_pylist()


def materialize_table(table: pa.Table, rows: Sequence[int] | None = None, *,
                      storage_options: dict[str, Any] | None = None,
                      only_missing_binary: bool = True,
                      image_content_types: tuple[str, ...] | None = None) -> pa.Table:
    """``table`` with ``binary_content`` / ``materialize_error`` filled for ``rows`` (default:
    the image rows still without bytes). Other columns are kept as they are; with nothing to
    fetch the table is returned as it is (the bytes it holds are not copied)."""
    if rows is None:
        rows = _pending_rows(table, only_missing_binary, image_content_types)
    rows = list(rows)
    n = table.num_rows
    names = table.column_names
    if not rows and "binary_content" in names and "materialize_error" in names:
        return table
    binary = table["binary_content"] if "binary_content" in names \
        else pa.nulls(n, pa.large_binary())
    errs = table["materialize_error"] if "materialize_error" in names else pa.nulls(n, pa.string())
    if rows:
        take = pa.array(rows, pa.int64())
        if "source_ref" in names:
            ref_values = table["source_ref"].take(take).to_pylist()
        else:
            ref_values = [None] * len(rows)
        refs = [InterleavedBatch.parse_source_ref(v) for v in ref_values]
        payloads, errors = fetch_bytes(refs, storage_options)
        before = errs.take(take).to_pylist()
        # a reader's reason (e.g. no such member) says more than "missing path"
        new_errs = [None if data is not None else (old or err)
                    for data, err, old in zip(payloads, errors, before, strict=True)]
        binary = replace_rows(binary, rows, payloads, pa.large_binary())
        errs = replace_rows(errs, rows, new_errs, pa.string())
    out = table
    for name, values, typ in (("binary_content", binary, pa.large_binary()),
                              ("materialize_error", errs, pa.string())):
        if values.type != typ:
            values = values.cast(typ)
        idx = out.schema.get_field_index(name)
        field = pa.field(name, typ)
        out = out.set_column(idx, field, values) if idx >= 0 else out.append_column(field, values)
    return out


def replace_rows(column: pa.Array | pa.ChunkedArray, rows: Sequence[int], values: Sequence[Any],
                 typ: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``column`` with ``values[k]`` at row ``rows[k]`` (a repeated row: the last value). The
    other rows, and their buffers, are kept as they are; in a binary column each new ``bytes``
    value becomes a one-row chunk over the Python object's own memory, so image bytes are never
    copied into a freshly allocated Arrow buffer (on this path the page faults of that copy cost
    more than the copy)."""
    if not rows:
        return column
    if column.type != typ:
        column = column.cast(typ)
    by_row = dict(zip((int(r) for r in rows), values, strict=True))
    at = sorted(by_row)
    n = len(column)
    if not (pa.types.is_binary(typ) or pa.types.is_large_binary(typ)):
        if column.null_count == n:  # nothing to keep: one small array
            return pa.array([by_row.get(r) for r in range(n)], type=typ)
        mask = np.zeros(n, dtype=bool)
        mask[at] = True
        return pc.replace_with_mask(column, pa.array(mask),
                                    pa.array([by_row[r] for r in at], type=typ))
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column], type=typ)
    chunks: list[pa.Array] = []
    done = 0
    for r in at:
        if r > done:
            chunks.extend(column.slice(done, r - done).chunks)
        chunks.append(_one_binary(by_row[r], typ))
        done = r + 1
    if done < n:
        chunks.extend(column.slice(done).chunks)
    return pa.chunked_array(chunks, type=typ)


def _one_binary(value: Any, typ: pa.DataType) -> pa.Array:
    """A one-row binary array of ``value``: over the ``bytes`` object itself (immutable, kept
    alive by the array), a copy of any other buffer, or a null."""
    if value is None:
        return pa.nulls(1, typ)
    if type(value) is not bytes:
        value = bytes(value)
    offsets = np.array([0, len(value)],
                       dtype=np.int64 if pa.types.is_large_binary(typ) else np.int32)
    return pa.Array.from_buffers(typ, 1, [None, pa.py_buffer(offsets), pa.py_buffer(value)])


def materialize_task_binary_content(task: InterleavedBatch, *,
                                    io_kwargs: dict[str, object] | None = None,
                                    only_missing_binary: bool = True,
                                    image_content_types: tuple[str, ...] | None = None
                                    ) -> InterleavedBatch:
    """``task`` with the bytes of its image rows fetched from their ``source_ref`` (NeMo
    Curator's function; see the module doc). ``only_missing_binary=False`` fetches rows that
    already have bytes again; ``image_content_types`` limits it to those MIME types."""
    table = task.to_pyarrow()
    rows = _pending_rows(table, only_missing_binary, image_content_types)
    if not rows:
        return task
    out = materialize_table(table, rows,
                            storage_options=resolve_storage_options(task, io_kwargs))
    return task.derive(out)  # type: ignore[return-value]
