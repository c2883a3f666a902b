"""The long-form ALM pretraining pipeline (NeMo Curator's ``stages/audio/alm/pretrain``
``pipeline.py`` and ``finalize.py``): build it, then merge its per-task shards into the three
files a user reads: the snippet manifest (JSONL), the metrics summary (JSON) and the audio tar.

The writers put one shard per task beside each output, ``<path>.shard-<task_id>.<ext>``,
written whole and replaced when the task runs again (that is what makes a resume exact).
:func:`finalize_audio_pretrain_outputs` merges whatever shards are there, atomically, and keeps
them unless asked to delete them, so a resumed run can be finalized again.
"""

from __future__ import annotations

import io
import json
import logging
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from curator import Pipeline
from curator.io import atomic_write, get_fs
from curator.output_dir import check_mode

from curator_audio.stages.alm_pretrain.output import (
    PretrainMetricsAggregatorStage,
    SnippetExtractionStage,
    SnippetManifestWriterStage,
)
from curator_audio.stages.alm_pretrain.planning import (
    MAX_FILTERED_TEXT_EXAMPLES,
    OverlapFilterStage,
    SnippetCutPlannerStage,
    SnippetRepetitionFilterStage,
)
from curator_audio.stages.alm_pretrain.reader import ReadLongFormManifestStage

__all__ = ["build_audio_pretrain_pipeline", "prepare_audio_pretrain_outputs",
           "finalize_audio_pretrain_outputs", "AudioPretrainFinalizeSummary", "histogram_30s"]

logger = logging.getLogger(__name__)

_HISTOGRAM_BIN_SEC = 30


def build_audio_pretrain_pipeline(
    *,
    input_manifest: str,
    audio_dir: str,
    output_dir: str,
    output_manifest_path: str,
    output_audio_tar_path: str,
    metrics_path: str,
    max_duration_sec: float,
    tokenizer_path: str,
    min_duration_sec: float = 0.5,
    min_overlap_sec: float = 0.5,
    max_segment_gap_in_snippet: float = 30.0,
    ngram_n: int = 10,
    ngram_max_count: int = 3,
    tokenizer_cache_dir: str | None = None,
    hf_token: str | None = None,
    target_sample_rate: int = 16000,
    output_format: str = "flac",
    audio_filepath_key: str = "audio_filepath",
    audio_path_resolution: str = "basename",
    dataset_name: str = "long_form_audio",
    dry_run: bool = False,
    records_per_task: int = 100,
) -> Pipeline:
    """The long-form audio cutting pipeline for ALM pretraining, NeMo Curator's keywords and
    defaults: :class:`ReadLongFormManifestStage` → :class:`OverlapFilterStage` →
    :class:`SnippetCutPlannerStage` → :class:`SnippetRepetitionFilterStage` →
    :class:`SnippetExtractionStage` → :class:`SnippetManifestWriterStage` →
    :class:`PretrainMetricsAggregatorStage`.

    Run it, then call :func:`finalize_audio_pretrain_outputs` with the same three paths to get
    ``output_manifest_path`` (one JSONL row per snippet, its audio path the tar member name),
    ``output_audio_tar_path`` (``<snippet_id>.<output_format>`` at the tar root, sorted) and
    ``metrics_path`` (counts, dropped-segment breakdown, 30 s duration histogram). Until then
    the outputs are per-task shards ``<path>.shard-<task_id>.<ext>``.

    Parameters (as in NeMo Curator unless said):
        input_manifest: JSONL, one row per long-form recording (``id``, audio path,
            diarized ``segments``).
        audio_dir: folder of the source audio; each row's path is re-anchored there by
            ``audio_path_resolution`` (``"basename"``, ``"relative"``, ``"as_is"``).
        output_dir, output_manifest_path, output_audio_tar_path, metrics_path: where the
            outputs go (their shards beside them).
        max_duration_sec, min_duration_sec, max_segment_gap_in_snippet: snippet packing
            (:class:`SnippetCutPlannerStage`).
        min_overlap_sec: two segments overlapping at least this long (or one inside the other)
            are both dropped.
        tokenizer_path: a **local directory** holding a Hugging Face fast tokenizer (NeMo also
            takes a Hub repo id and downloads it; Curator does not download at run time — save
            it once with ``save_pretrained``). ``tokenizer_cache_dir`` and ``hf_token`` are
            accepted for NeMo's signature and unused.
        ngram_n, ngram_max_count: a snippet whose joined text repeats a token ``ngram_n``-gram
            more than ``ngram_max_count`` times is dropped.
        target_sample_rate, output_format: snippet audio (mono; ``"wav"``, ``"flac"``,
            ``"ogg"``).
        audio_filepath_key: the rows' audio-path field.
        dataset_name: stamped on the tasks.
        dry_run: as in NeMo: no audio is read or written (no tar shards), the manifest and the
            metrics are still written, with the planned snippet durations.
        records_per_task: recordings per task (Curator only; NeMo has one per task). A task is
            the unit of the shards and of resume.
    """
    return Pipeline(
        name="audio_pretrain_long_form_cut",
        description="Long-form diarized audio -> mono resampled snippets for audio LLM "
                    "pretraining",
        stages=[
            ReadLongFormManifestStage(
                input_manifest=input_manifest, audio_dir=audio_dir,
                audio_filepath_key=audio_filepath_key,
                audio_path_resolution=audio_path_resolution, dataset_name=dataset_name,
                records_per_task=records_per_task),
            OverlapFilterStage(min_overlap_sec=min_overlap_sec),
            SnippetCutPlannerStage(
                max_duration_sec=max_duration_sec, min_duration_sec=min_duration_sec,
                max_segment_gap_in_snippet=max_segment_gap_in_snippet),
            SnippetRepetitionFilterStage(
                tokenizer_path=tokenizer_path, ngram_n=ngram_n, ngram_max_count=ngram_max_count,
                cache_dir=tokenizer_cache_dir, hf_token=hf_token),
            SnippetExtractionStage(
                output_dir=output_dir, output_audio_tar_path=output_audio_tar_path,
                target_sample_rate=target_sample_rate, output_format=output_format,
                audio_filepath_key=audio_filepath_key, dry_run=dry_run),
            SnippetManifestWriterStage(output_path=output_manifest_path),
            PretrainMetricsAggregatorStage(output_path=metrics_path),
        ],
    )


def _shards(output_path: str, ext: str) -> list[str]:
    """The shards beside ``output_path`` (sorted), as the filesystem names them."""
    fs, path = get_fs(output_path)
    found = sorted(fs.glob(f"{path}.shard-*.{ext}"))
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if protocol in ("file", "local"):
        return found
    return [fs.unstrip_protocol(p) for p in found]


def _shard_task_id(shard: str, output_path: str, ext: str) -> str:
    name = shard.rsplit("/", 1)[-1]
    prefix = output_path.rsplit("/", 1)[-1] + ".shard-"
    return name[len(prefix):-(len(ext) + 1)] if name.startswith(prefix) else name


def prepare_audio_pretrain_outputs(output_manifest_path: str, metrics_path: str,
                                   output_audio_tar_path: str, *, mode: str = "ignore"
                                   ) -> dict[str, int]:
    """Before a run, on the driver: what to do with shards an earlier run left beside the
    three outputs. ``mode`` (Curator's save modes):

    - ``"ignore"`` (default) / ``"append"``: keep them. A task this run writes replaces its own
      shards; the others (the tasks a resumed run skips) stay and are merged by
      :func:`finalize_audio_pretrain_outputs`.
    - ``"overwrite"``: delete them all (a fresh run; NeMo Curator always does this, which is
      why its runs cannot resume).
    - ``"error"``: raise :class:`FileExistsError` if there are any.

    Returns ``{"manifest": n, "metrics": n, "tar": n}``: the shards found (deleted when
    ``mode="overwrite"``)."""
    check_mode(mode, "prepare_audio_pretrain_outputs")
    found = {"manifest": _shards(output_manifest_path, "jsonl"),
             "metrics": _shards(metrics_path, "jsonl"),
             "tar": _shards(output_audio_tar_path, "tar")}
    total = sum(map(len, found.values()))
    if total and mode == "error":
        raise FileExistsError(
            f"prepare_audio_pretrain_outputs: {total} shard(s) of an earlier run are there "
            f"(e.g. {next(p for ps in found.values() for p in ps)}); pass mode='overwrite' to "
            f"delete them or mode='ignore' to resume")
    if total and mode == "overwrite":
        for paths in found.values():
            for path in paths:
                fs, inner = get_fs(path)
                fs.rm(inner)
        logger.info("prepare_audio_pretrain_outputs: removed %d stale shard(s)", total)
    return {kind: len(paths) for kind, paths in found.items()}


@dataclass
class AudioPretrainFinalizeSummary:
    """What :func:`finalize_audio_pretrain_outputs` merged and what did not fit together.

    ``rows_without_member``: snippet ids whose tar member is missing (left out of the merged
    manifest, counted as ``dropped.missing_audio``); ``unreadable_members``: members whose audio
    header does not read or has no frames (their rows left out, ``dropped.corrupted_audio``);
    ``members_without_row``: tar members no manifest row names (kept in the tar);
    ``duplicate_rows`` / ``duplicate_members``: snippet ids / member names found in more than one
    shard (kept once); ``malformed_lines``: shard lines that are not JSON (``shard:line``)."""

    manifest_rows: int = 0
    tar_members: int = 0
    tar_written: bool = False
    shards: dict[str, int] = field(default_factory=dict)
    rows_without_member: list[str] = field(default_factory=list)
    unreadable_members: list[str] = field(default_factory=list)
    members_without_row: list[str] = field(default_factory=list)
    duplicate_rows: list[str] = field(default_factory=list)
    duplicate_members: list[str] = field(default_factory=list)
    malformed_lines: list[str] = field(default_factory=list)
    shards_deleted: bool = False

    @property
    def ok(self) -> bool:
        """Every row has its readable member and every member its row, nothing duplicated."""
        return not (self.rows_without_member or self.unreadable_members
                    or self.members_without_row or self.duplicate_rows
                    or self.duplicate_members or self.malformed_lines)

    def __str__(self) -> str:
        text = (f"{self.manifest_rows} manifest row(s), {self.tar_members} tar member(s) "
                f"from {self.shards} shard(s)")
        for name in ("rows_without_member", "unreadable_members", "members_without_row",
                     "duplicate_rows", "duplicate_members", "malformed_lines"):
            items = getattr(self, name)
            if items:
                text += f"; {len(items)} {name.replace('_', ' ')} (e.g. {items[0]!r})"
        return text


def _jsonl(shard: str, malformed: list[str]) -> Iterator[dict[str, Any]]:
    fs, inner = get_fs(shard)
    with fs.open(inner, "r", encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                malformed.append(f"{shard}:{lineno}")


def histogram_30s(durations: list[float]) -> dict[str, int]:
    """Snippet durations in 30 s bins ``{"0-30": n, "30-60": n, ...}``, every bin from 0 to the
    longest (dense, as NeMo Curator's); ``{}`` for none."""
    if not durations:
        return {}
    counts = [0] * (max(int(d // _HISTOGRAM_BIN_SEC) for d in durations) + 1)
    for d in durations:
        counts[int(d // _HISTOGRAM_BIN_SEC)] += 1
    return {f"{i * _HISTOGRAM_BIN_SEC}-{(i + 1) * _HISTOGRAM_BIN_SEC}": n
            for i, n in enumerate(counts)}


def _audio_ok(payload: bytes) -> bool:
    import soundfile as sf

    try:
        info = sf.info(io.BytesIO(payload))
    except Exception:  # any decoder error means unreadable
        return False
    return info.frames > 0 and info.samplerate > 0


def _merge_tar(tar_shards: list[str], tar_path: str, wanted: set[str],
               summary: AudioPretrainFinalizeSummary) -> set[str]:
    """Write every member of ``tar_shards`` once, sorted by name, at the tar root; returns the
    names written whose audio reads (only those in ``wanted`` are checked)."""
    index: dict[str, tuple[str, tarfile.TarInfo]] = {}
    for shard in tar_shards:
        fs, inner = get_fs(shard)
        with fs.open(inner, "rb") as fh, tarfile.open(fileobj=fh, mode="r") as tar:
            for info in tar:
                if not info.isreg():
                    continue
                if info.name in index:
                    summary.duplicate_members.append(info.name)
                    continue
                index[info.name] = (shard, info)
    good: set[str] = set()
    opened: dict[str, tuple[Any, tarfile.TarFile]] = {}
    try:
        with atomic_write(tar_path) as out, tarfile.open(fileobj=out, mode="w") as merged:
            for name in sorted(index):
                shard, info = index[name]
                if shard not in opened:
                    fs, inner = get_fs(shard)
                    fh = fs.open(inner, "rb")
                    opened[shard] = (fh, tarfile.open(fileobj=fh, mode="r"))
                member = opened[shard][1].extractfile(info)
                payload = member.read() if member is not None else b""
                if name in wanted and _audio_ok(payload):
                    good.add(name)
                elif name in wanted:
                    summary.unreadable_members.append(name)
                entry = tarfile.TarInfo(name=name.rsplit("/", 1)[-1])
                entry.size, entry.mtime, entry.mode = len(payload), info.mtime, 0o644
                merged.addfile(entry, io.BytesIO(payload))
    finally:
        for fh, tar in opened.values():
            tar.close()
            fh.close()
    summary.tar_members = len(index)
    summary.members_without_row = sorted(set(index) - wanted)
    return good


def _merge_metrics(metric_shards: list[str], rows: list[dict[str, Any]],
                   summary: AudioPretrainFinalizeSummary) -> dict[str, Any]:
    per_original: dict[str, dict[str, Any]] = {}
    examples: list[str] = []
    for shard in metric_shards:
        for line in _jsonl(shard, summary.malformed_lines):
            original_id = str(line.get("id") or "")
            if not original_id:
                continue
            if original_id not in per_original:  # input side: the same on every line of an id
                per_original[original_id] = {
                    "id": original_id, "in_segments": int(line.get("in_segments", 0)),
                    "in_duration_sec": float(line.get("in_duration_sec", 0.0)),
                    "dropped": {k: int(v) for k, v in (line.get("dropped") or {}).items()},
                    "out_snippets": 0, "out_segments": 0, "out_duration_sec": 0.0}
            room = MAX_FILTERED_TEXT_EXAMPLES - len(examples)
            if room > 0 and line.get("filtered_texts"):
                examples.extend(line["filtered_texts"][:room])
    # output side from the merged manifest: what a reader of the outputs actually gets
    durations = []
    for row in rows:
        entry = per_original.get(str(row.get("id") or ""))
        duration = float(row.get("duration", 0.0))
        durations.append(duration)
        if entry is not None:
            entry["out_snippets"] += 1
            entry["out_segments"] += len(row.get("segments") or [])
            entry["out_duration_sec"] += duration
    dropped: dict[str, int] = {}
    for entry in per_original.values():
        entry["in_duration_sec"] = round(entry["in_duration_sec"], 3)
        entry["out_duration_sec"] = round(entry["out_duration_sec"], 3)
        for key, value in entry["dropped"].items():
            dropped[key] = dropped.get(key, 0) + value
    if summary.rows_without_member:
        dropped["missing_audio"] = len(summary.rows_without_member)
    if summary.unreadable_members:
        dropped["corrupted_audio"] = len(summary.unreadable_members)
    ordered = [per_original[k] for k in sorted(per_original)]
    return {
        "num_input_audios": len(ordered),
        "num_output_snippets": len(rows),
        "input_total_segments": sum(e["in_segments"] for e in ordered),
        "input_total_duration_sec": round(sum(e["in_duration_sec"] for e in ordered), 3),
        "output_total_segments": sum(len(r.get("segments") or []) for r in rows),
        "output_total_duration_sec": round(sum(durations), 3),
        "dropped": dropped,
        "snippet_duration_histogram_30s": histogram_30s(durations),
        "dropped_repetition_examples": examples,
        "per_original": ordered,
    }


def finalize_audio_pretrain_outputs(output_manifest_path: str, metrics_path: str,
                                    output_audio_tar_path: str,
                                    audio_filepath_key: str = "audio_filepath", *,
                                    delete_shards: bool = False
                                    ) -> AudioPretrainFinalizeSummary:
    """After a successful run, on the driver: merge the shards beside the three outputs into
    them. Each final file is written to a temporary name beside it and renamed, so it is
    whole or absent (an earlier one stays until the new one is complete).

    - the manifest: every row once (by ``snippet_id``), sorted by ``snippet_id`` (the tar's
      order);
    - the audio tar: every member once, sorted by name, at the tar root (WebDataset /
      Energon layout); not written when there are no tar shards (``dry_run``);
    - the metrics JSON: NeMo Curator's summary (input side per recording from the metrics
      shards, output side counted from the merged manifest, ``dropped`` summed).

    Rows are checked against the tar as in NeMo: a row whose member is missing or whose audio
    does not read is left out of the manifest and counted (``dropped.missing_audio`` /
    ``dropped.corrupted_audio``); unlike NeMo it is also listed in the returned
    :class:`AudioPretrainFinalizeSummary` and logged, as are members no row names (kept).

    The shards are kept (a resumed run finalizes again) unless ``delete_shards=True`` and the
    summary is ``ok``. With no manifest shards at all nothing is written (an earlier merge is
    not replaced by an empty one) and the summary says so. Returns the summary.
    """
    summary = AudioPretrainFinalizeSummary()
    manifest_shards = _shards(output_manifest_path, "jsonl")
    metric_shards = _shards(metrics_path, "jsonl")
    tar_shards = _shards(output_audio_tar_path, "tar") if output_audio_tar_path else []
    summary.shards = {"manifest": len(manifest_shards), "metrics": len(metric_shards),
                      "tar": len(tar_shards)}
    if not manifest_shards:
        logger.warning("finalize_audio_pretrain_outputs: no shards beside %s; nothing merged "
                       "(did the pipeline run?)", output_manifest_path)
        return summary
    rows: dict[str, dict[str, Any]] = {}
    for shard in manifest_shards:
        for row in _jsonl(shard, summary.malformed_lines):
            key = str(row.get("snippet_id") or row.get(audio_filepath_key) or "")
            if key in rows:
                summary.duplicate_rows.append(key)
                continue
            rows[key] = row
    ordered = [rows[k] for k in sorted(rows)]
    if tar_shards:
        wanted = {str(r.get(audio_filepath_key)) for r in ordered}
        good = _merge_tar(tar_shards, output_audio_tar_path, wanted, summary)
        summary.tar_written = True
        kept = []
        for row in ordered:
            member = str(row.get(audio_filepath_key))
            if member in good:
                kept.append(row)
            elif member not in summary.unreadable_members:
                summary.rows_without_member.append(str(row.get("snippet_id") or member))
        ordered = kept
    elif ordered:
        logger.info("finalize_audio_pretrain_outputs: no tar shards beside %s (a dry run?): "
                    "no tar written, rows not checked against audio", output_audio_tar_path)
    with atomic_write(output_manifest_path, "w", encoding="utf-8") as fh:
        for row in ordered:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    summary.manifest_rows = len(ordered)
    metrics = _merge_metrics(metric_shards, ordered, summary)
    with atomic_write(metrics_path, "w", encoding="utf-8") as fh:
        json.dump(metrics, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    if summary.ok:
        logger.info("finalize_audio_pretrain_outputs: %s", summary)
    else:
        logger.warning("finalize_audio_pretrain_outputs: the outputs do not fit together: %s",
                       summary)
    if delete_shards and summary.ok:
        for shard in (*manifest_shards, *metric_shards, *tar_shards):
            fs, inner = get_fs(shard)
            fs.rm(inner)
        summary.shards_deleted = True
    elif delete_shards:
        logger.warning("finalize_audio_pretrain_outputs: shards kept (delete_shards=True, but "
                       "the merge found problems; see the summary)")
    return summary
