import subprocess
import sys

import curator_audio

HEAVY = ("torch", "torchaudio", "soundfile")


def _imported_after(stmt: str) -> list[str]:
    code = (f"import sys\n{stmt}\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_plugin_and_package_import_no_heavy_libraries():
    assert _imported_after("import curator_audio.plugin") == []
    assert _imported_after("import curator_audio") == []


def test_plugin_registers_every_stage(curator_registry):
    from curator.plugins.manager import get_registry

    names = {"ManifestReader", "AudioDirectoryReader", "ManifestWriterStage", "ASRStage",
             "PreserveByValueStage", "GetPairwiseWerStage", "GetAudioDurationStage",
             "AudioDecodeStage", "AudioRMSStage", "AudioClippingStage",
             "AudioSilenceFractionStage", "AudioSNRStage", "AudioSegmentationStage",
             "TorchSquimQualityMetricsStage", "TorchSquimQualityFilterStage"}
    registry = get_registry()
    found = {n for n in names if registry.entries.get(n) is not None}
    assert found == names
    assert registry.entries["ManifestReader"].plugin.distribution == "curator-audio"
    assert registry.entries["ASRStage"].modality == "audio"
    assert registry.entries["TorchSquimQualityFilterStage"].kind == "filter"


def test_all_exports_exist():
    for name in curator_audio.__all__:
        assert hasattr(curator_audio, name), name
