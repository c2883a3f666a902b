"""AudioDataFilterStage: NeMo Curator's composite for clean single-speaker segments."""

from __future__ import annotations

import copy
import logging
import os
from typing import Any

from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import CompositeStage, ProcessingStage

from curator_audio.decode import STREAM_ABOVE_SEC, STREAM_BLOCK_SEC
from curator_audio.stages.band import HF_MODEL_FILENAME, BandFilterStage
from curator_audio.stages.mos import SIGMOS_MODEL_FILENAME, SIGMOSFilterStage, UTMOSFilterStage
from curator_audio.stages.preprocessing import MonoConversionStage, SegmentConcatenationStage
from curator_audio.stages.timestamp_mapper import TimestampMapperStage
from curator_audio.stages.vad_segmentation import VADSegmentationStage
from curator_audio.tasks import AudioBatch

__all__ = ["AudioDataFilterStage", "DEFAULT_CONFIG", "load_config", "NOT_OFFERED_STAGES"]

logger = logging.getLogger(__name__)

DEFAULT_CONFIG: dict[str, Any] = {
    "mono_conversion": {"output_sample_rate": 48000, "strict_sample_rate": True, "cpus": 1.0,
                        "stream_above_sec": STREAM_ABOVE_SEC},
    "vad": {"enable": True, "min_duration_sec": 2.0, "max_duration_sec": 60.0, "threshold": 0.5,
            "min_interval_ms": 500, "speech_pad_ms": 300, "cpus": 1.0, "gpus": 0.0,
            "stream_block_sec": STREAM_BLOCK_SEC},
    "band_filter": {"enable": True, "band_value": "full_band", "model_path": None,
                    "cache_dir": None, "cpus": 1.0, "gpus": 0.0},
    "utmos": {"enable": True, "mos_threshold": 3.4, "model_dir": None, "cpus": 1.0,
              "gpus": 0.0},
    "sigmos": {"enable": True, "noise_threshold": 4.0, "ovrl_threshold": 3.5,
               "sig_threshold": None, "col_threshold": None, "disc_threshold": None,
               "loud_threshold": None, "reverb_threshold": None, "model_path": None,
               "model_dir": None, "cpus": 1.0, "gpus": 0.0},
    "concatenation": {"silence_duration_sec": 0.5, "cpus": 1.0},
    "speaker_separation": {"enable": True, "exclude_overlaps": True, "min_duration": 0.8,
                           "gap_threshold": 0.1, "buffer_time": 0.5, "cpus": 1.0, "gpus": 0.0},
    "timestamp_mapper": {"passthrough_keys": None, "cpus": 1.0},
    "split": False,
}
"""NeMo's ``default_config.yaml`` values, plus where the models are (``model_path`` /
``model_dir`` / ``cache_dir``), ``split`` (filtered segments to the rejected sink) and how long
recordings stream (``mono_conversion.stream_above_sec``: longer audio is read block by block,
``vad.stream_block_sec`` at a time, never held whole). GPUs are
0 here (NeMo asks for fractions of one): set ``gpus`` per section to use one."""

NOT_OFFERED_STAGES = {
    "speaker_separation": "SpeakerSeparationStage (NeMo's SortFormer diarization model needs the "
                          "NeMo toolkit, which Curator does not offer)",
}


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(config_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """:data:`DEFAULT_CONFIG` with the sections of the YAML file ``config_path`` merged in."""
    if config_path is None:
        return copy.deepcopy(DEFAULT_CONFIG)
    import yaml

    with open(config_path, encoding="utf-8") as fh:
        loaded = yaml.safe_load(fh) or {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"AudioDataFilterStage: {config_path} must hold a mapping of sections")
    return _deep_merge(DEFAULT_CONFIG, loaded)


class AudioDataFilterStage(CompositeStage[AudioBatch, AudioBatch]):
    """The audio filter pipeline in NeMo's order: mono at 48 kHz → VAD → band filter → UTMOS →
    SigMOS → segment concatenation → speaker separation → VAD → the filters again → timestamp
    mapping. Each section of the config (NeMo's keys; see :data:`DEFAULT_CONFIG`) sets a stage;
    ``enable: false`` leaves it out, with NeMo's four topologies for VAD and speaker separation
    on or off. Speaker separation is not offered: left enabled, it is skipped with a warning that
    names it and the rest runs in the same order.

    The band classifier, UTMOS and SigMOS load from local files named in the config
    (``band_filter.model_path``, ``utmos.model_dir``, ``sigmos.model_path``); an enabled filter
    without its model is a configuration error at build time.

    Args:
        config_path: a YAML file of sections (``None``: the defaults).
        config: sections that override the file's.
        name: the composite's name.
    """

    def __init__(self, config_path: str | os.PathLike | None = None,
                 config: dict[str, Any] | None = None, name: str = "AudioDataFilter") -> None:
        self.name = name
        self.config_path = config_path
        self.config = config
        self._cfg = _deep_merge(load_config(config_path), config or {})

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], ["original_file", "original_start_ms", "original_end_ms", "duration"]

    def skipped_stages(self) -> list[str]:
        """The enabled stages that are not offered (skipped with a warning)."""
        return [NOT_OFFERED_STAGES[k] for k in NOT_OFFERED_STAGES
                if self._cfg.get(k, {}).get("enable", True)]

    def decompose(self) -> list[ProcessingStage]:
        cfg = self._cfg
        vad_on = cfg["vad"].get("enable", True)
        speaker_on = cfg["speaker_separation"].get("enable", True)
        for what in self.skipped_stages():
            logger.warning("%s: skipping %s; the other stages run in NeMo's order "
                           "(set speaker_separation.enable: false to silence this)",
                           self.name, what)
        stages: list[ProcessingStage] = [self._mono()]
        if vad_on and speaker_on:
            stages.append(self._vad("", nested=True))
            stages += self._filters("")
            conc = cfg["concatenation"]
            stages.append(SegmentConcatenationStage(
                silence_duration_sec=conc.get("silence_duration_sec", 0.5), name="SegmentConcat",
                resources=Resources(cpus=conc.get("cpus", 1.0))))
            stages.append(self._vad("_Speaker", nested=False))
            stages += self._filters("_Speaker")
        elif vad_on:
            stages.append(self._vad("", nested=False))
            stages += self._filters("")
        elif speaker_on:
            stages += self._filters("")
            stages += self._filters("_Speaker")
        else:
            stages += self._filters("")
        ts = cfg["timestamp_mapper"]
        stages.append(TimestampMapperStage(passthrough_keys=ts.get("passthrough_keys"),
                                           name="TimestampMapper",
                                           resources=Resources(cpus=ts.get("cpus", 1.0))))
        return stages

    @staticmethod
    def _section_resources(section: dict[str, Any]) -> Resources:
        return Resources(cpus=section.get("cpus", 1.0), gpus=section.get("gpus", 0.0) or 0.0)

    def _mono(self) -> MonoConversionStage:
        mc = self._cfg["mono_conversion"]
        return MonoConversionStage(output_sample_rate=mc.get("output_sample_rate", 48000),
                                   strict_sample_rate=mc.get("strict_sample_rate", True),
                                   stream_above_sec=mc.get("stream_above_sec", STREAM_ABOVE_SEC),
                                   name="MonoConversion",
                                   resources=Resources(cpus=mc.get("cpus", 1.0)))

    def _vad(self, suffix: str, nested: bool) -> VADSegmentationStage:
        v = self._cfg["vad"]
        return VADSegmentationStage(
            min_duration_sec=v.get("min_duration_sec", 2.0),
            max_duration_sec=v.get("max_duration_sec", 60.0), threshold=v.get("threshold", 0.5),
            min_interval_ms=v.get("min_interval_ms", 500),
            speech_pad_ms=v.get("speech_pad_ms", 300), nested=nested, name=f"VAD{suffix}",
            stream_block_sec=v.get("stream_block_sec", STREAM_BLOCK_SEC),
            resources=self._section_resources(v))

    def _require(self, section: str, *paths: str | None, what: str, key: str) -> None:
        if not any(p and os.path.exists(p) for p in paths):
            raise ConfigError(f"{self.name}: {section} is enabled but {what} was not found at "
                              f"{[p for p in paths if p] or 'no path'}; set {section}.{key} to "
                              f"the downloaded model, or {section}.enable: false")

    def _filters(self, suffix: str) -> list[ProcessingStage]:
        cfg, split = self._cfg, bool(self._cfg.get("split", False))
        out: list[ProcessingStage] = []
        band, utmos, sigmos = cfg["band_filter"], cfg["utmos"], cfg["sigmos"]
        if band.get("enable", True):
            cache = band.get("cache_dir")
            self._require("band_filter", band.get("model_path"),
                          os.path.join(cache, HF_MODEL_FILENAME) if cache else None,
                          what="the band classifier (.joblib)", key="model_path")
            out.append(BandFilterStage(model_path=band.get("model_path"), cache_dir=cache,
                                       band_value=band.get("band_value", "full_band"),
                                       split=split, name=f"BandFilter{suffix}",
                                       resources=self._section_resources(band)))
        if utmos.get("enable", True):
            mdir = utmos.get("model_dir")
            self._require("utmos", os.path.join(mdir, "hubconf.py") if mdir else None,
                          what="a local tarepan/SpeechMOS checkout", key="model_dir")
            out.append(UTMOSFilterStage(mos_threshold=utmos.get("mos_threshold", 3.5),
                                        model_dir=mdir, split=split, name=f"UTMOS{suffix}",
                                        resources=self._section_resources(utmos)))
        if sigmos.get("enable", True):
            stage = SIGMOSFilterStage(
                **{k: sigmos[k] for k in ("model_path", "model_dir") if sigmos.get(k)},
                **{f"{k}_threshold": sigmos.get(f"{k}_threshold")
                   for k in ("noise", "ovrl", "sig", "col", "disc", "loud", "reverb")},
                split=split, name=f"SIGMOS{suffix}", resources=self._section_resources(sigmos))
            self._require("sigmos", stage.model_path,
                          os.path.join(stage.model_dir, SIGMOS_MODEL_FILENAME),
                          what="the SigMOS ONNX model", key="model_path")
            out.append(stage)
        return out
