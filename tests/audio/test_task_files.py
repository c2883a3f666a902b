"""Issue 31 item 6: a failed AudioBatch is kept as its manifest records (JSON) and each decoded
waveform as its own ``.npy`` file; replay rebuilds it from those, without a pickle."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
from curator import Pipeline, ProcessingStage
from curator_audio import AudioBatch, AudioDecodeStage


@dataclass
class RmsUnlessBroken(ProcessingStage):
    broken: str = ""
    name: str = "Rms"

    def process(self, task: AudioBatch) -> AudioBatch:
        if os.path.exists(self.broken):
            raise RuntimeError("disk full")
        return task.derive([{**r, "rms": float(np.sqrt(np.mean(r["waveform"] ** 2)))}
                            for r in task.data])


def test_failed_audio_batch_is_kept_as_waveform_files_and_replayed(tmp_path, audio_dir):
    records = [{"path": str(audio_dir / "tone.wav"), "text": "a tone"},
               {"path": str(audio_dir / "noise.flac"), "text": "noise"}]
    batch = AudioBatch(task_id="m0", dataset_name="asr", data=records, filepath_key="path")
    broken, rej = tmp_path / "broken", tmp_path / "rej"
    broken.touch()
    pipe = Pipeline("a", stages=[AudioDecodeStage(filepath_key="path"),
                                 RmsUnlessBroken(str(broken))])
    first = pipe.run(initial_tasks=[batch], rejected_dir=str(rej), summary=False,
                     raise_on_failure=False)
    assert not first.ok
    folder = rej / "Rms"
    wave = np.load(folder / "m0.failed.0.waveform.npy", allow_pickle=False)
    assert wave.dtype == np.float32 and len(wave) > 1000  # the decoded audio, as a file
    assert not any(p.suffix == ".pkl" for p in folder.iterdir())
    doc = json.loads((folder / "m0.failed.task.json").read_text())
    assert doc["task_class"] == "audio:AudioBatch" and doc["fields"] == {"filepath_key": "path"}
    assert doc["data"][1]["text"] == "noise"

    broken.unlink()
    replayed = pipe.replay(str(rej), summary=False)
    assert replayed.ok and isinstance(replayed[0], AudioBatch)
    out = replayed[0]
    assert out.filepath_key == "path" and [r["text"] for r in out.data] == ["a tone", "noise"]
    assert np.array_equal(out.data[0]["waveform"], wave) and out.data[0]["rms"] > 0.1
