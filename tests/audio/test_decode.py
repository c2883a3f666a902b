import numpy as np
import pytest
from curator_audio import AudioDecodeError, audio_info, load_audio, resample


@pytest.mark.parametrize("name,frames", [("tone.wav", 16000), ("noise.flac", 16000),
                                         ("speech.ogg", 24000)])
def test_lossless_and_ogg_decode_exact_length(audio_dir, name, frames):
    wave, sr = load_audio(str(audio_dir / name))
    assert sr == 16000 and wave.dtype == np.float32 and wave.ndim == 1
    assert len(wave) == frames


def test_mp3_decodes_about_the_right_length(audio_dir):
    wave, sr = load_audio(str(audio_dir / "speech.mp3"))
    assert sr == 16000 and abs(len(wave) - 16000) < 2000   # mp3 encoder padding


def test_wav_roundtrip_values(audio_dir):
    from curator_audio.testing import tone

    wave, _ = load_audio(str(audio_dir / "tone.wav"))
    assert np.max(np.abs(wave - tone(440, 1.0))) < 1e-3   # 16-bit PCM


def test_offset_duration_and_resampling(audio_dir):
    wave, sr = load_audio(str(audio_dir / "tone.wav"), offset=0.25, duration=0.5)
    assert len(wave) == 8000
    wave, sr = load_audio(str(audio_dir / "tone8k.wav"), target_sr=16000)
    assert sr == 16000 and len(wave) == 8000   # 0.5 s at 16 kHz
    assert len(resample(np.zeros(16000, np.float32), 16000, 8000)) == 8000


def test_info(audio_dir):
    info = audio_info(str(audio_dir / "speech.ogg"))
    assert info["sample_rate"] == 16000 and info["duration"] == pytest.approx(1.5)


@pytest.mark.parametrize("name,message", [("empty.wav", "empty"), ("truncated.wav", "truncated"),
                                          ("truncated.flac", ""), ("garbage.wav", "")])
def test_bad_files_raise_decode_error_naming_the_file(audio_dir, name, message):
    path = str(audio_dir / "bad" / name)
    with pytest.raises(AudioDecodeError) as err:
        load_audio(path)
    assert path in str(err.value) and message in str(err.value)


def test_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_audio(str(tmp_path / "nope.wav"))
