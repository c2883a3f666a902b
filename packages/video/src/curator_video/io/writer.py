"""ClipWriterStage: write every clip, its metadata record and an optional thumbnail."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from curator import FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import atomic_write
from curator.output_dir import DEFAULT_MODE, ManagedOutput, SaveMode, check_mode

from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipWriterStage", "clip_record", "EMBEDDINGS_PARQUET"]

EMBEDDINGS_PARQUET = "embeddings_parquet"
"""Sub-directory of the per-video embedding tables (``id`` = clip uuid, ``embedding``): the
input of ``ClipSemanticDeduplicationWorkflow``."""


def clip_record(task: VideoTask, clip: Clip) -> dict[str, Any]:
    """The metadata record written for one clip (JSON-serialisable)."""
    meta = task.data.metadata
    return {"clip_uuid": clip.uuid, "source_video": clip.source_video, "task_id": task.task_id,
            "span_start": clip.span[0], "span_end": clip.span[1], "duration": clip.duration,
            "video_fps": meta.fps, "video_width": meta.width, "video_height": meta.height,
            "video_codec": meta.codec, "scores": {k: float(v) for k, v in clip.scores.items()},
            "num_frames": len(clip.frame_indices), "has_embedding": clip.embedding is not None,
            "caption": clip.caption}


@dataclass
class ClipWriterStage(ManagedOutput, ProcessingStage[VideoTask, FileGroupTask]):
    """Writes each kept clip under ``output_path``: ``clips/{uuid}.mp4`` (needs
    ``ClipTranscodingStage``), ``metas/{uuid}.json``, optional ``embeddings/{uuid}.npy`` and
    ``previews/{uuid}.jpg`` (the clip's middle extracted frame), plus one
    ``metadata/{task_id}.parquet`` table per video and, with embeddings, one
    ``embeddings_parquet/{task_id}.parquet`` (``id``, ``embedding``) per video for run-wide
    semantic dedup (``ClipSemanticDeduplicationWorkflow``). Every file is written atomically with a
    deterministic name, so a re-run overwrites. Returns the list of written files.

    Args:
        output_path: directory or fsspec URL to write to.
        write_clips: write the encoded MP4s (clips without ``encoded_data`` are skipped).
        write_embeddings: write clip embeddings (``.npy`` per clip, Parquet per video).
        generate_previews: write a JPEG thumbnail per clip (from its extracted frames).
        metadata_format: ``"json"``, ``"parquet"`` or ``"both"``.
        mode: NeMo Curator's save modes: ``"ignore"`` (default: write into the directory,
            replacing same-named files), ``"overwrite"`` (first delete the files earlier
            Curator runs wrote there; other files stay), ``"append"`` (keep earlier files) or
            ``"error"`` (refuse a directory holding other files); see
            :mod:`curator.output_dir`.
    """

    output_path: str = ""
    write_clips: bool = True
    write_embeddings: bool = True
    generate_previews: bool = False
    metadata_format: str = "both"
    mode: SaveMode = DEFAULT_MODE
    name: str = "ClipWriterStage"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "writer"
    output_dir_field: ClassVar[str] = "output_path"

    def __post_init__(self) -> None:
        if not self.output_path:
            raise ConfigError(f"{self.name}: output_path is required")
        if self.metadata_format not in ("json", "parquet", "both"):
            raise ConfigError(f"{self.name}: metadata_format must be 'json', 'parquet' or 'both', "
                              f"got {self.metadata_format!r}")
        check_mode(self.mode, self.name)

    def inputs(self):
        return ["data"], ["clips"]

    def outputs(self):
        return ["data"], []

    # NeMo Curator's path helpers, answering with the directories this writer really uses
    @staticmethod
    def _get_output_path(output_path: str, extra: str) -> str:
        return output_path.rstrip("/") + "/" + extra.strip("/")

    @staticmethod
    def get_output_path_clips(output_path: str, *, filtered: bool = False) -> str:
        """Directory of the clip MP4s (``clips``). ``filtered=True``: NeMo's ``filtered_clips``
        directory, which Curator leaves empty: removed clips stay in ``video.filtered_clips``
        and, with a filter's ``split=True``, go to the rejected sink."""
        return ClipWriterStage._get_output_path(output_path,
                                                "filtered_clips" if filtered else "clips")

    @staticmethod
    def get_output_path_previews(output_path: str) -> str:
        """Directory of the clip thumbnails (``previews/{uuid}.jpg``)."""
        return ClipWriterStage._get_output_path(output_path, "previews")

    @staticmethod
    def get_output_path_metas(output_path: str, version: str = "") -> str:
        """Directory of the per-clip JSON records (``metas/{uuid}.json``). Curator does not
        version this directory: ``version`` is accepted for NeMo compatibility and not used."""
        return ClipWriterStage._get_output_path(output_path, "metas")

    @staticmethod
    def get_output_path_ce1_embd(output_path: str) -> str:
        """Directory of the per-clip embeddings (``embeddings/{uuid}.npy``), whichever model
        made them."""
        return ClipWriterStage._get_output_path(output_path, "embeddings")

    @staticmethod
    def get_output_path_ce1_embd_parquet(output_path: str) -> str:
        """Directory of the per-video embedding tables (``embeddings_parquet/{task_id}.parquet``,
        columns ``id`` and ``embedding``)."""
        return ClipWriterStage._get_output_path(output_path, EMBEDDINGS_PARQUET)

    @staticmethod
    def get_output_path_processed_videos(output_path: str) -> str:
        """Directory of the per-video records: Curator's ``metadata/{task_id}.parquet`` tables
        (one row per clip) take the place of NeMo's ``processed_videos`` JSON files."""
        return ClipWriterStage._get_output_path(output_path, "metadata")

    @staticmethod
    def get_output_path_processed_clip_chunks(output_path: str) -> str:
        """Curator keeps one task per video (no clip chunks): the same per-video
        ``metadata`` tables as :meth:`get_output_path_processed_videos`."""
        return ClipWriterStage._get_output_path(output_path, "metadata")

    @staticmethod
    def calculate_sha256(buffer: bytes) -> str:
        """The SHA-256 hex digest of ``buffer``."""
        return hashlib.sha256(buffer).hexdigest()

    def process(self, task: VideoTask) -> FileGroupTask:
        written: list[str] = []
        records = []
        for clip in task.data.clips:
            rec = clip_record(task, clip)
            if self.write_clips and clip.encoded_data:
                written.append(self._write(f"clips/{clip.uuid}.mp4", clip.encoded_data))
            if self.write_embeddings and clip.embedding is not None:
                written.append(self._write(f"embeddings/{clip.uuid}.npy", _npy(clip.embedding)))
            if self.generate_previews and clip.frames is not None and len(clip.frames):
                written.append(self._write(f"previews/{clip.uuid}.jpg",
                                           _jpeg(clip.frames[len(clip.frames) // 2])))
            if self.metadata_format in ("json", "both"):
                written.append(self._write(f"metas/{clip.uuid}.json",
                                           json.dumps(rec, sort_keys=True).encode()))
            records.append(rec)
        if records and self.metadata_format in ("parquet", "both"):
            written.append(self._write(f"metadata/{task.task_id}.parquet", _parquet(records)))
        embedded = [c for c in task.data.clips if c.embedding is not None]
        if self.write_embeddings and embedded:
            written.append(self._write(f"{EMBEDDINGS_PARQUET}/{task.task_id}.parquet",
                                       _embedding_parquet(embedded)))
        out = task.derive(written, cls=FileGroupTask)
        out.metadata["source_files"] = [task.data.input_path]
        return out

    def _write(self, rel: str, payload: bytes) -> str:
        path = self.output_file(rel)
        with atomic_write(path, "wb") as fh:
            fh.write(payload)
        return path


def _npy(arr: Any) -> bytes:
    import io

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.asarray(arr, dtype=np.float32))
    return buf.getvalue()


def _jpeg(frame: Any) -> bytes:
    import io

    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(frame).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _parquet(records: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rows = [{**r, "scores": json.dumps(r["scores"], sort_keys=True)} for r in records]
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue().to_pybytes()


def _embedding_parquet(clips: list[Clip]) -> bytes:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    emb = np.stack([np.asarray(c.embedding, dtype=np.float32).ravel() for c in clips])
    table = pa.table({"id": pa.array([c.uuid for c in clips], pa.string()),
                      "embedding": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()),
                                                                     emb.shape[1])})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()
