"""ClipTranscodingStage: cut every clip out of its video and encode it with PyAV."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video.decode import task_window
from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipTranscodingStage"]

_log = logging.getLogger(__name__)
# used when a hardware encoder cannot be opened on this machine (no NVENC GPU)
_SOFTWARE_FALLBACK = ("libx264", "mpeg4")


def _encoder_opens(encoder: str) -> bool:
    """Whether FFmpeg can open ``encoder`` here (a hardware encoder needs its device)."""
    from fractions import Fraction

    import av
    try:
        ctx = av.CodecContext.create(encoder, "w")
        ctx.width, ctx.height, ctx.pix_fmt = 64, 64, "yuv420p"
        ctx.time_base = Fraction(1, 25)
        ctx.open()
    except Exception:  # any failure means: not usable on this machine
        return False
    return True


@dataclass
class ClipTranscodingStage(ProcessingStage[VideoTask, VideoTask]):
    """Decodes each video once with PyAV and encodes every clip's frames into an MP4 stored in
    ``clip.encoded_data`` (overlapping clips each get their frames). A video that fails to
    decode or encode is rejected with its error.

    Args:
        encoder: FFmpeg video encoder (``libx264``, ``mpeg4`` …).
        bit_rate: target bit rate in bits/s (``None``: the encoder's default / ``crf``).
        crf: constant rate factor for ``libx264`` when ``bit_rate`` is ``None``.
        target_res: ``(width, height)`` of the output (``None``: the source size; made even).
        encoder_threads: encoder threads per clip.
        preset: ``libx264`` preset.
        use_hwaccel: NeMo's hardware (NVDEC) decoding. Curator decodes with PyAV in software; a
            warning says so. As in NeMo, not valid with ``encoder="libvpx-vp9"``.
        use_input_bit_rate: encode at the source video's bit rate
            (``video.metadata.bit_rate``) when it is known, instead of ``bit_rate``/``crf``.
        num_cpus_per_worker: CPUs reserved per worker (NeMo's name; ``None``: one).
        encode_batch_size, nb_streams_per_gpu, num_clips_per_chunk, ray_data_num_cpus:
            accepted for NeMo compatibility; Curator encodes every clip of a video while
            decoding it once (only the encoders of clips overlapping the current frame are
            open) and keeps one task per video.
        verbose, ffmpeg_verbose: log what the stage does / FFmpeg's own messages.

    A hardware encoder (``h264_nvenc`` …) that cannot be opened on this machine (no NVENC GPU)
    falls back to ``libx264`` with a warning, as NeMo's docs recommend a CPU encoder there.
    """

    encoder: str = "libx264"
    bit_rate: int | None = None
    crf: int = 23
    target_res: tuple[int, int] | None = None
    encoder_threads: int = 1
    preset: str = "veryfast"
    use_hwaccel: bool = False
    use_input_bit_rate: bool = False
    num_cpus_per_worker: float | None = None
    encode_batch_size: int = 16
    nb_streams_per_gpu: int = 3
    num_clips_per_chunk: int = 32
    ray_data_num_cpus: float | None = None
    verbose: bool = False
    ffmpeg_verbose: bool = False
    name: str = "ClipTranscodingStage"
    modality: ClassVar[str] = "video"

    def __post_init__(self) -> None:
        if self.use_hwaccel and self.encoder == "libvpx-vp9":
            raise ConfigError(f"{self.name}: use_hwaccel is not supported with libvpx-vp9 (a CPU "
                              f"encoder); drop use_hwaccel or pick encoder='h264_nvenc'")
        if self.num_cpus_per_worker is not None:
            from curator.resources import Resources
            self.resources = Resources(cpus=float(self.num_cpus_per_worker))
        if self.target_res is not None and (len(self.target_res) != 2 or min(self.target_res) < 2):
            raise ConfigError(f"{self.name}: target_res must be (width, height), got "
                              f"{self.target_res}")
        if self.bit_rate is not None and self.bit_rate <= 0:
            raise ConfigError(f"{self.name}: bit_rate must be > 0 or None")

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        import av
        self._encoder_here()
        if self.ffmpeg_verbose:
            av.logging.set_level(av.logging.VERBOSE)

    def _encoder_here(self) -> str:
        """The encoder this worker uses: ``encoder``, or a software one in place of a hardware
        encoder this machine cannot open (warned once per worker)."""
        chosen = self.__dict__.get("_encoder")
        if chosen is not None:
            return chosen
        import av
        if self.use_hwaccel:
            _log.warning("%s: use_hwaccel=True: Curator decodes with PyAV in software (no NVDEC "
                         "decoding); encoding uses %r", self.name, self.encoder)
        chosen = self.encoder
        hardware = any(tag in self.encoder for tag in ("nvenc", "_qsv", "_vaapi", "videotoolbox"))
        if hardware and not _encoder_opens(self.encoder):
            chosen = next(e for e in _SOFTWARE_FALLBACK if e in av.codecs_available)
            _log.warning("%s: encoder %r cannot be opened on this machine (it needs its GPU); "
                         "encoding with %r instead", self.name, self.encoder, chosen)
        elif chosen not in av.codecs_available:
            raise RuntimeError(f"{self.name}: encoder {self.encoder!r} is not in this FFmpeg "
                               f"build; pick one of av.codecs_available (e.g. 'mpeg4')")
        self.__dict__["_encoder"] = chosen
        return chosen

    def inputs(self):
        return ["data"], ["clips"]

    def outputs(self):
        return ["data"], ["clips", "encoded_data"]

    def process(self, task: VideoTask) -> VideoTask | None:
        video = task.data
        if not video.clips:
            return task
        import av  # noqa: F401 - a missing library fails the task, it is not a bad file
        from curator.heap import keep_big_blocks_mapped, trim_heap

        self._encoder_here()  # an encoder missing from this build fails the stage, not a video
        keep_big_blocks_mapped()
        try:
            self._bit_rate = self.bit_rate
            if self.use_input_bit_rate and video.metadata.bit_rate:
                self._bit_rate = int(video.metadata.bit_rate)
            self._transcode(video.input_path, video.metadata.fps, video.clips,
                            seek=task_window(task) is not None)
            if self.verbose:
                _log.info("%s: %s: encoded %d clips", self.name, video.input_path,
                          len(video.clips))
        except Exception as exc:
            self.reject(task, "transcoding failed", record={"path": video.input_path},
                        error=exc, source=video.input_path)
            return None
        finally:
            trim_heap()  # FFmpeg's frame threads leave their freed buffers in their arenas
        return task

    def _transcode(self, path: str, fps: float, clips: list[Clip], seek: bool = False) -> None:
        """Encode every clip while decoding the video once; a clip's encoder is flushed and
        closed as soon as the decoded time passes its end, and decoding stops after the last
        clip, so at most the encoders of the clips overlapping the current frame are open.
        ``seek``: start at the key frame before the first clip (a window of a long video)."""
        import av
        import fsspec

        outs: dict[str, tuple[Any, Any, io.BytesIO]] = {}
        counts: dict[str, int] = {}
        pending = sorted(clips, key=lambda c: c.span[1])
        last_end = pending[-1].span[1]
        with fsspec.open(path, "rb") as fh, av.open(fh) as src:
            stream = src.streams.video[0]
            stream.thread_type = "AUTO"
            w, h = self.target_res or (stream.codec_context.width, stream.codec_context.height)
            w, h = w - w % 2, h - h % 2
            start = min(c.span[0] for c in clips)
            if seek and start > 0:
                src.seek(int(start / stream.time_base), stream=stream, backward=True,
                         any_frame=False)
            for frame in src.decode(stream):
                t = float(frame.pts * stream.time_base) if frame.pts is not None else 0.0
                while pending and t >= pending[0].span[1] - 1e-6:
                    self._finish(pending.pop(0), outs, path)
                if t >= last_end - 1e-6:
                    break
                for clip in clips:
                    if clip.span[0] - 1e-6 <= t < clip.span[1] - 1e-6:
                        if clip.uuid not in outs:
                            outs[clip.uuid] = self._open(w, h, fps)
                        container, ostream, _ = outs[clip.uuid]
                        img = frame.reformat(width=w, height=h, format="yuv420p")
                        img.pts = counts[clip.uuid] = counts.get(clip.uuid, -1) + 1
                        img.time_base = ostream.codec_context.time_base
                        for packet in ostream.encode(img):
                            container.mux(packet)
        for clip in pending:
            self._finish(clip, outs, path)

    @staticmethod
    def _finish(clip: Clip, outs: dict[str, tuple[Any, Any, io.BytesIO]], path: str) -> None:
        """Flush and close ``clip``'s encoder into ``clip.encoded_data``."""
        if clip.uuid not in outs:
            raise ValueError(f"clip {clip.uuid} {clip.span} has no frames in {path}")
        container, ostream, buf = outs.pop(clip.uuid)
        for packet in ostream.encode():
            container.mux(packet)
        container.close()
        clip.encoded_data = buf.getvalue()

    def _open(self, w: int, h: int, fps: float) -> tuple[Any, Any, io.BytesIO]:
        from fractions import Fraction

        import av

        buf = io.BytesIO()
        container = av.open(buf, mode="w", format="mp4")
        rate = Fraction(fps).limit_denominator(1001)
        encoder = self._encoder_here()
        bit_rate = self.__dict__.get("_bit_rate", self.bit_rate)
        stream = container.add_stream(encoder, rate=rate)
        stream.codec_context.time_base = 1 / rate
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.thread_count = self.encoder_threads
        if bit_rate is not None:
            stream.bit_rate = int(bit_rate)
        if encoder == "libx264":
            opts = {"preset": self.preset}
            if bit_rate is None:
                opts["crf"] = str(self.crf)
            stream.options = opts
        return container, stream, buf
