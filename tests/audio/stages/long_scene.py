"""The long recording the streaming tests share: a ~40 s espeak-ng scene and a small streaming
window (12 s, blocks of 4 s) so one file spans many blocks."""

from curator_audio import AudioBatch

WINDOW, BLOCK = 12.0, 4.0
VAD_ARGS = {"speech_pad_ms": 0, "min_duration_sec": 0.5, "min_interval_ms": 300}
LAYOUT = [("silence", 1.3), ("speech", 0), ("noise", 2.1), ("speech", 1), ("silence", 3.4),
          ("speech", 2), ("noise", 1.7), ("silence", 2.2), ("speech", 1), ("noise", 2.6),
          ("speech", 2), ("silence", 1.5)]


def batch(records: list[dict]) -> AudioBatch:
    return AudioBatch(task_id="t", dataset_name="d", data=records)
