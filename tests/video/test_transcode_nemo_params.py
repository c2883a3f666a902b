import logging

import pytest
from curator_video import ClipTranscodingStage, FixedStrideSplitStage

from tests.video.test_transcode import probe


def test_nemo_doc_parameters_fall_back_to_software_without_nvenc(load_video, caplog):
    # no NVENC GPU on the test machines: h264_nvenc cannot be opened, libx264 is used instead
    stage = ClipTranscodingStage(encoder="h264_nvenc", use_hwaccel=True, encoder_threads=1,
                                 encode_batch_size=16, num_clips_per_chunk=32,
                                 use_input_bit_rate=False, num_cpus_per_worker=6.0, verbose=True)
    assert stage.resources.cpus == 6.0
    task = FixedStrideSplitStage(1.5).process(load_video("moving.mp4"))
    with caplog.at_level(logging.WARNING, logger="curator_video.transcode"):
        stage.setup()
        task = stage.process(task)
    assert "software" in caplog.text
    assert "encoding with 'libx264' instead" in caplog.text
    assert {probe(c.encoded_data)[0] for c in task.data.clips} == {"h264"}


def test_input_bit_rate_is_used_when_asked(load_video):
    task = FixedStrideSplitStage(1.5).process(load_video("moving.mp4"))
    task.data.metadata.bit_rate = 50_000
    stage = ClipTranscodingStage(encoder="mpeg4", use_input_bit_rate=True)
    stage.process(task)
    assert stage._bit_rate == 50_000


def test_hwaccel_with_vp9_is_a_config_error():
    with pytest.raises(ValueError, match="use_hwaccel is not supported with libvpx-vp9"):
        ClipTranscodingStage(encoder="libvpx-vp9", use_hwaccel=True)
