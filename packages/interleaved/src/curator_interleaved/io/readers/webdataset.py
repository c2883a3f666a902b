"""InterleavedWebdatasetReaderStage: MINT-1T style WebDataset tar shards -> InterleavedBatch.

A shard holds one ``{key}.json`` per document with parallel lists ``texts`` and ``images`` (at
index ``i`` a text, an image token, or ``None``) and any other fields, plus the image members.
Each document becomes a metadata row (``position -1``, the JSON's other fields as user columns)
and one row per non-null entry at its list index. An image token that names a member points at
it; otherwise the document's default member is used (``image_member_field``, the first token
that is a member, or ``{key}{ext}``); successive tokens of one multi-frame TIFF get successive
``frame_index`` values. Image bytes are not read unless ``materialize_on_read``: the row's
``source_ref`` holds the member's byte range in the (uncompressed) shard.

Bad input never stops the reader: a JSON member that does not parse, a document whose ``texts``
and ``images`` are both non-empty but of different lengths, or whose ``texts`` / ``images`` is
not a list, and a shard that ends early (truncated or corrupt) each go to the rejected sink with
their reason; the documents read before are kept. An image token with no member in the shard
keeps its row with ``materialize_error`` set, so the stage that needs its bytes rejects it.
"""

from __future__ import annotations

import functools
import json
import logging
import mimetypes
import tarfile
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from curator import FileGroupTask

from curator_interleaved.io.readers.base import BaseInterleavedReader
from curator_interleaved.tasks import INTERLEAVED_SCHEMA, RESERVED_COLUMNS, InterleavedBatch
from curator_interleaved.utils.constants import DEFAULT_IMAGE_EXTENSIONS, DEFAULT_JSON_EXTENSIONS
from curator_interleaved.utils.materialization import (
    extract_tiff_frame,
    is_local_filesystem,
)
from curator_interleaved.utils.validation_utils import validate_and_project_source_fields

__all__ = ["InterleavedWebdatasetReaderStage", "RowColumns"]

log = logging.getLogger(__name__)

_COMPRESSED = (".gz", ".tgz", ".bz2", ".xz", ".zst")


class RowColumns:
    """Rows of an interleaved table gathered column by column (cheaper than a dict per row):
    the reserved columns, then user columns in first-seen order, ``None`` where a row has
    none."""

    def __init__(self) -> None:
        self.n = 0
        self.cols: dict[str, list[Any]] = {name: [] for name in INTERLEAVED_SCHEMA.names}
        self.extra: dict[str, list[Any]] = {}

    def add(self, sample_id: str, position: int, modality: str, content_type: str | None,
            text: str | None = None, binary: bytes | None = None, source_ref: str | None = None,
            error: str | None = None, user: dict[str, Any] | None = None) -> None:
        c = self.cols
        c["sample_id"].append(sample_id)
        c["position"].append(position)
        c["modality"].append(modality)
        c["content_type"].append(content_type)
        c["text_content"].append(text)
        c["binary_content"].append(binary)
        c["source_ref"].append(source_ref)
        c["materialize_error"].append(error)
        if user:
            for k, v in user.items():
                col = self.extra.get(k)
                if col is None:
                    col = self.extra[k] = [None] * self.n
                col.append(v)
        self.n += 1
        for col in self.extra.values():
            if len(col) < self.n:
                col.append(None)

    def table(self, extra_names: tuple[str, ...] = ()) -> pa.Table:
        arrays = [pa.array(self.cols[f.name], type=f.type) for f in INTERLEAVED_SCHEMA]
        fields = list(INTERLEAVED_SCHEMA)
        for name in extra_names:
            self.extra.setdefault(name, [None] * self.n)
        for name, values in self.extra.items():
            arr = pa.array(values)
            arrays.append(arr)
            fields.append(pa.field(name, arr.type))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


@dataclass
class _Shard:
    path: str
    members: dict[str, tarfile.TarInfo]
    ranged: bool  # byte offsets are valid in the file (uncompressed, not truncated there)
    size: int


@dataclass
class InterleavedWebdatasetReaderStage(BaseInterleavedReader):
    """Reads MINT-1T style WebDataset shards (see the module doc) into an
    :class:`InterleavedBatch` per partition.

    Parameters:
        materialize_on_read: read image bytes now (default: lazily, when a stage needs them).
        max_batch_bytes: split a partition's rows into batches of about this size (never inside
            a document).
        json_extensions, image_extensions: member name endings of documents and images.
        sample_id_field: JSON field holding the document id (default: the member's stem).
        texts_field, images_field: the parallel lists' field names.
        image_member_field: JSON field naming the document's default image member.
        fields: user fields to keep (default: every non-reserved field of the JSON).
        per_image_fields, per_text_fields: JSON list fields spread one value per non-null image
            / text entry onto the content rows.
    """

    materialize_on_read: bool = False
    max_batch_bytes: int | None = None
    json_extensions: tuple[str, ...] = DEFAULT_JSON_EXTENSIONS
    image_extensions: tuple[str, ...] = field(default_factory=lambda: DEFAULT_IMAGE_EXTENSIONS)
    sample_id_field: str | None = None
    texts_field: str = "texts"
    images_field: str = "images"
    image_member_field: str | None = None
    fields: tuple[str, ...] | None = None
    per_image_fields: tuple[str, ...] = ()
    per_text_fields: tuple[str, ...] = ()
    name: str = "webdataset_reader"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.json_extensions = tuple(self.json_extensions)
        self.image_extensions = tuple(self.image_extensions)
        if self.fields is not None:
            self.fields = tuple(self.fields)
        self.per_image_fields = tuple(self.per_image_fields)
        self.per_text_fields = tuple(self.per_text_fields)

    # -- image member resolution (NeMo Curator's rules) ----------------------------------------
    def _resolve_default_image_member_name(self, sample_id: str, sample: dict[str, Any],
                                           images: list[Any] | None,
                                           member_names: Any) -> str | None:
        if self.image_member_field:
            name = sample.get(self.image_member_field)
            if isinstance(name, str) and name in member_names:
                return name
        for token in images or ():
            if isinstance(token, str) and token in member_names:
                return token
        return next((f"{sample_id}{ext}" for ext in self.image_extensions
                     if f"{sample_id}{ext}" in member_names), None)

    @staticmethod
    def _resolve_image_content_key(image_token: object, default_image_member_name: str | None,
                                   member_names: Any) -> str | None:
        if image_token is None:
            return None
        if isinstance(image_token, str) and image_token in member_names:
            return image_token
        return default_image_member_name

    def _excluded(self) -> set[str]:
        cached = self.__dict__.get("_excluded_fields")
        if cached is not None:
            return cached
        self.__dict__["_excluded_fields"] = cached = self._excluded_fields()
        return cached

    def _excluded_fields(self) -> set[str]:
        return set(RESERVED_COLUMNS) | {self.texts_field, self.images_field,
                                        *self.per_image_fields, *self.per_text_fields} | (
            {self.sample_id_field} if self.sample_id_field else set()) | (
            {self.image_member_field} if self.image_member_field else set())

    # -- one document --------------------------------------------------------------------------
    def _sample_rows(self, out: RowColumns, shard: _Shard, member: tarfile.TarInfo,
                     sample: dict[str, Any], tf: tarfile.TarFile,
                     task: FileGroupTask) -> bool:
        """Append one document's rows; ``False`` (and a rejected record) when it is malformed."""
        sid_value = sample.get(self.sample_id_field) if self.sample_id_field else None
        sample_id = str(sid_value) if sid_value is not None else _stem(member.name)
        texts = sample.get(self.texts_field)
        images = sample.get(self.images_field)
        record = {"sample_id": sample_id, "path": shard.path, "member": member.name}
        for label, value in ((self.texts_field, texts), (self.images_field, images)):
            if value is not None and not isinstance(value, list):
                self.reject(task, "malformed_document", record=record, source=shard.path,
                            error=f"{label!r} must be a list, got {type(value).__name__}")
                return False
        texts = texts or []
        images = images or []
        if texts and images and len(texts) != len(images):
            self.reject(task, "text_image_count_mismatch", record=record, source=shard.path,
                        error=f"{self.texts_field!r} has {len(texts)} entries, "
                              f"{self.images_field!r} has {len(images)}")
            return False
        per_image = self._per_modality(sample, self.per_image_fields)
        per_text = self._per_modality(sample, self.per_text_fields)
        passthrough = validate_and_project_source_fields(sample, self.fields, self._excluded())
        names = shard.members
        json_ref = self._ref(shard, member.name)
        out.add(sample_id, -1, "metadata", "application/json", source_ref=json_ref,
                user=passthrough)
        content: list[tuple[int, int, dict[str, Any]]] = []  # (position, text first, row)
        n_text = 0
        for idx, value in enumerate(texts):
            if value is None:
                continue
            user = {k: _jsonable(v[n_text]) if n_text < len(v) else None
                    for k, v in per_text.items()}
            n_text += 1
            content.append((idx, 0, dict(modality="text", content_type="text/plain",
                                         text=str(value), source_ref=json_ref, user=user)))
        default = self._resolve_default_image_member_name(sample_id, sample, images, names)
        frames: dict[str, int] = {}
        n_image = 0
        cache: dict[str, bytes | None] = {}
        for idx, token in enumerate(images):
            if token is None:
                continue
            key = self._resolve_image_content_key(token, default, names)
            ctype = _content_type(key or default or "")
            frame = None
            if key is not None and ctype == "image/tiff":
                frame = frames.get(key, 0)
                frames[key] = frame + 1
            user = {k: _jsonable(v[n_image]) if n_image < len(v) else None
                    for k, v in per_image.items()}
            n_image += 1
            error = None
            binary = None
            if key is None:
                ref = InterleavedBatch.build_source_ref(path=None, member=None)
                error = f"missing image member for token {token!r} in {shard.path}"
            else:
                ref = self._ref(shard, key, frame)
                if self.materialize_on_read:
                    binary, error = self._read_member(tf, shard, key, frame, cache)
            content.append((idx, 1, dict(modality="image", content_type=ctype or (
                "application/octet-stream" if default else None), binary=binary,
                source_ref=ref, error=error, user=user)))
        content.sort(key=lambda c: (c[0], c[1]))
        for idx, _, row in content:
            out.add(sample_id, idx, row["modality"], row["content_type"], text=row.get("text"),
                    binary=row.get("binary"), source_ref=row["source_ref"],
                    error=row.get("error"), user=row["user"])
        return True

    @staticmethod
    def _per_modality(sample: dict[str, Any], names: tuple[str, ...]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for name in names:
            if name not in sample:
                log.warning("per-modality field '%s' not found in source sample", name)
                continue
            value = sample[name]
            if not isinstance(value, list):
                raise TypeError(f"per-modality field '{name}' must be a list, got "
                                f"{type(value).__name__}")
            out[name] = value
        return out

    @staticmethod
    def _ref(shard: _Shard, member: str, frame: int | None = None) -> str:
        info = shard.members.get(member)
        off = size = None
        if info is not None and shard.ranged:
            off, size = info.offset_data, info.size
        return InterleavedBatch.build_source_ref(path=shard.path, member=member, byte_offset=off,
                                                 byte_size=size, frame_index=frame)

    @staticmethod
    def _read_member(tf: tarfile.TarFile, shard: _Shard, key: str, frame: int | None,
                     cache: dict[str, bytes | None]) -> tuple[bytes | None, str | None]:
        if key not in cache:
            try:
                f = tf.extractfile(shard.members[key])
                data = f.read() if f is not None else None
                if data is not None and len(data) != shard.members[key].size:
                    data = None
            except (KeyError, tarfile.TarError, OSError, EOFError):
                data = None
            cache[key] = data
        data = cache[key]
        if data is None:
            return None, f"missing or truncated member '{key}'"
        if frame is not None:
            one = extract_tiff_frame(data, frame)
            if one is None:
                return None, f"failed to extract frame {frame} from '{key}'"
            return one, None
        return data, None

    # -- one shard -----------------------------------------------------------------------------
    def _read_shard(self, path: str, out: RowColumns, task: FileGroupTask) -> None:
        import fsspec

        options = self._storage_options
        fs, inner = fsspec.core.url_to_fs(path, **options)
        size = int(fs.size(inner))
        compressed = path.lower().endswith(_COMPRESSED)
        try:
            # a local shard through the builtin file: tarfile's many small reads and seeks
            # skip fsspec's Python wrapper
            fh = open(inner, "rb") if is_local_filesystem(fs) else fs.open(inner, "rb")
        except OSError as e:
            self.reject(task, "unreadable_shard", record={"path": path}, source=path, error=e)
            return
        with fh:
            try:
                tf = tarfile.open(fileobj=fh, mode="r:*")
            except (tarfile.TarError, OSError, EOFError) as e:
                self.reject(task, "unreadable_shard", record={"path": path}, source=path,
                            error=e)
                return
            with tf:
                members: dict[str, tarfile.TarInfo] = {}
                order: list[tarfile.TarInfo] = []
                last = None
                try:
                    for info in tf:
                        if info.isfile():
                            members[info.name] = info
                            order.append(info)
                            last = info.name
                except (tarfile.TarError, OSError, EOFError) as e:
                    self.reject(task, "truncated_tar", source=path,
                                record={"path": path, "after_member": last},
                                error=f"{type(e).__name__}: {e} after member {last!r}; the "
                                      f"members before it are read")
                if not compressed and order:
                    end = order[-1].offset_data + order[-1].size
                    if end > size:
                        self.reject(task, "truncated_tar", source=path,
                                    record={"path": path, "member": order[-1].name},
                                    error=f"member {order[-1].name!r} ends at byte {end}, the "
                                          f"file has {size} bytes")
                shard = _Shard(path=path, members=members, ranged=not compressed, size=size)
                for info in order:
                    if not info.name.endswith(self.json_extensions):
                        continue
                    record = {"path": path, "member": info.name}
                    try:
                        if shard.ranged and not info.issparse():  # by offset: no file object
                            fh.seek(info.offset_data)
                            raw = fh.read(info.size)
                        else:
                            f = tf.extractfile(info)
                            raw = f.read() if f is not None else b""
                        if len(raw) != info.size:
                            raise EOFError(f"{len(raw)} of {info.size} bytes")
                    except (tarfile.TarError, OSError, EOFError) as e:
                        self.reject(task, "truncated_tar", record=record, source=path,
                                    error=f"document member {info.name!r}: {type(e).__name__}: "
                                          f"{e}")
                        continue
                    try:
                        sample = json.loads(raw)
                        if not isinstance(sample, dict):
                            raise ValueError(f"a JSON {type(sample).__name__}, not an object")
                    except ValueError as e:
                        self.reject(task, "malformed_json", record=record, source=path,
                                    error=f"member {info.name!r}: {e}")
                        continue
                    self._sample_rows(out, shard, info, sample, tf, task)

    def process(self, task: FileGroupTask) -> InterleavedBatch | list[InterleavedBatch]:
        out = RowColumns()
        for path in task.data:
            self._read_shard(str(path), out, task)
        extra = tuple(dict.fromkeys((*(self.fields or ()), *self.per_image_fields,
                                     *self.per_text_fields)))
        table = out.table(extra)
        if table.num_rows:
            table = self._align_output(table)
        elif self.schema is not None:
            table = self.schema.empty_table()
        return self._batches(task, table, self.max_batch_bytes)


@functools.lru_cache(maxsize=256)
def _type_of_suffix(suffix: str) -> str | None:
    return mimetypes.guess_type(f"member{suffix}")[0]


def _content_type(name: str) -> str | None:
    """The MIME type of a member name (``mimetypes``, by its last two suffixes, cached)."""
    if not name:
        return None
    base = name.rsplit("/", 1)[-1]
    if base.endswith("."):  # no suffix (``pathlib``'s rule)
        return _type_of_suffix("")
    parts = base.lstrip(".").split(".")[1:]
    return _type_of_suffix("".join(f".{p}" for p in parts[-2:]))


def _stem(name: str) -> str:
    """``PurePosixPath(name).stem`` of a member name, without building a path object."""
    base = name.rstrip("/").rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[:dot] if 0 < dot < len(base) - 1 else base


def _jsonable(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value
