#!/usr/bin/env bash
# The CUDA paths on a lent GPU machine (the `device` tool): that machine's python3 has torch,
# transformers and the like but no package registry, so the few pure-Python/CPython wheels
# Curator needs beyond them travel in .whl/ (see the device tool's README), Curator's packages run
# from their sources with their entry points declared in a dist-info, and curator-text's kernels
# are compiled there. Runs every test marked `gpu` that needs no Ray cluster; prints pytest's
# summary and leaves a JUnit report in $OUT.
#   device run: bash benchmarks/gpu_check.sh      (carry: .whl)
# .whl/ (ignored; 14 MB), made here with `pip download --no-deps --only-binary=:all:
# --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d .whl`
# of: soundfile cffi pycparser jiwer rapidfuzz ftfy wcwidth fasttext-numpy2-wheel num2words
# pydantic pydantic-core annotated-types typing-inspection (versions as in uv.lock).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/gpu_check}"; mkdir -p "$out"
site=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" .whl/*.whl || exit 1
python3 - "$site" <<'PY' || exit 1
import sys, tomllib
from pathlib import Path
site = Path(sys.argv[1])
for pyproject in sorted(Path("packages").glob("*/pyproject.toml")):
    project = tomllib.loads(pyproject.read_text())["project"]
    name, version = project["name"], project.get("version", "0.1.0")
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    groups = project.get("entry-points", {})
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in groups.items()))
PY
(cd packages/text && python3 setup.py -q build_ext --inplace >/dev/null 2>&1 \
    && cp -f build/lib*/curator_text/_native*.so src/curator_text/ 2>/dev/null; \
    ls src/curator_text/_native*.so) || echo "gpu_check: curator_text kernels not built"
paths="$site"
for src in packages/*/src; do paths="$paths:$PWD/$src"; done
export PYTHONPATH="$paths:$PWD" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
files=$(grep -rl "pytest.mark.gpu" tests --include='test_*.py' | grep -v test_ray_gpu | sort)
echo "gpu tests: $files"
python3 -m pytest -q -p no:randomly -m gpu -o addopts="" -rs --durations=15 \
    --junitxml="$out/gpu_junit.xml" $files 2>&1 | tee "$out/gpu_check.log" | tail -n 40
