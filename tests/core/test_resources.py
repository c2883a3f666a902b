from __future__ import annotations

import pytest
from curator import Resources


@pytest.mark.parametrize("field", ["cpus", "gpus", "gpu_memory_gb"])
def test_negative_value_names_the_field(field):
    with pytest.raises(ValueError, match=rf"Resources\.{field} must be >= 0"):
        Resources(**{field: -1})


def test_gpus_with_gpu_memory_is_rejected_naming_both():
    with pytest.raises(ValueError) as err:
        Resources(gpus=1, gpu_memory_gb=16)
    assert "gpus" in str(err.value) and "gpu_memory_gb" in str(err.value)


def test_other_invalid_values():
    with pytest.raises(ValueError, match="cpus must be a number"):
        Resources(cpus="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole number"):
        Resources(gpus=1.5)
    with pytest.raises(ValueError, match="cpus > 0 or a GPU"):
        Resources(cpus=0)


def test_valid_resources_and_gpu_fraction():
    assert not Resources().requires_gpu
    r = Resources(cpus=0.5, gpus=0.25)
    assert r.requires_gpu and r.gpu_fraction(80) == 0.25
    m = Resources(gpu_memory_gb=20)
    assert m.requires_gpu and m.gpu_fraction(80) == 0.25 and m.gpu_fraction(None) == 1.0
    assert Resources(gpu_memory_gb=200).gpu_fraction(80) == 1.0
    assert Resources(cpus=0, gpus=1).to_dict() == {"cpus": 0, "gpus": 1, "gpu_memory_gb": 0.0}
    with pytest.raises(AttributeError):
        r.cpus = 3  # frozen


def test_torch_device_is_cpu_unless_a_gpu_is_asked_for_and_present():
    import torch

    assert Resources(cpus=1).torch_device() == "cpu"
    # No GPU on CI: a stage that asks for one still runs, on the CPU (mocking CUDA is pointless).
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert Resources(gpus=1).torch_device() == expected
