"""A speech-data curation pipeline: manifest → decode → measure → transcribe → WER → filter → write.

    uv run python examples/audio/pipeline.py

Generates its data and a tiny random-weight model first (so transcripts are gibberish; point
``model_dir`` at a real wav2vec2 CTC model directory for real ones). The same pipeline as YAML
is ``pipeline.yaml`` (``curator run examples/audio/pipeline.yaml``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from curator import Pipeline
from curator_audio import (
    ASRStage,
    AudioDecodeStage,
    AudioRMSStage,
    AudioSegmentationStage,
    AudioSilenceFractionStage,
    AudioSNRStage,
    GetAudioDurationStage,
    GetPairwiseWerStage,
    ManifestReader,
    ManifestWriterStage,
    PreserveByValueStage,
)
from make_data import DATA, MANIFEST, MODEL, make_data


def build() -> Pipeline:
    return Pipeline("audio-example", stages=[
        ManifestReader(file_paths=MANIFEST, records_per_task=2),
        AudioDecodeStage(target_sample_rate=16000),
        GetAudioDurationStage(),
        AudioRMSStage(), AudioSilenceFractionStage(), AudioSNRStage(),
        PreserveByValueStage(input_value_key="silence_fraction", target_value=0.9, operator="lt"),
        AudioSegmentationStage(min_duration=0.5, max_duration=4.0, keep_text=True),
        ASRStage(model_dir=MODEL),
        GetPairwiseWerStage(cer_key="cer"),
        PreserveByValueStage(input_value_key="duration", target_value=0.5, operator="ge"),
        ManifestWriterStage(path=os.path.join(DATA, "output"), mode="overwrite"),
    ])


if __name__ == "__main__":
    make_data()
    result = build().run(rejected_dir=os.path.join(DATA, "rejected"), raise_on_failure=False)
    print(f"wrote {sum(t.metadata.get('num_records', 0) for t in result)} records to "
          f"{os.path.join(DATA, 'output')}; rejected: "
          + (", ".join(f"{n} by {s}" for s, n in result.rejected.counts.items()) or "none"))
    sys.exit(0 if result.ok else 1)
