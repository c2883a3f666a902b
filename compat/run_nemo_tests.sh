#!/usr/bin/env bash
# Run NeMo Curator's own unit tests (the lists in compat/nemo_tests/) against Curator through the
# import shim.
# Usage: compat/run_nemo_tests.sh /path/to/NVIDIA-NeMo-Curator-git-dir [pytest args...]
# The git dir may be bare (from `fetch`); tests are read at commit $NEMO_COMMIT into a temp dir.
set -euo pipefail
repo="${1:?usage: $0 NEMO_GIT_DIR [pytest args]}"; shift
commit="${NEMO_COMMIT:-1e2e4275e}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# The NeMo test files come from compat/nemo_tests/*.txt (one list per package: a NeMo test path a
# line, `# comments`, `data: path` for a file of NeMo's tree the tests read); NEMO_TESTS="a.txt b.txt"
# picks lists.
lists=(${NEMO_TESTS:-"$here"/nemo_tests/*.txt})
files=()
data=()
for list in "${lists[@]}"; do
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%%#*}"; line="$(echo "$line" | xargs)"
    [ -z "$line" ] && continue
    case "$line" in
      data:*) data+=("$(echo "${line#data:}" | xargs)") ;;
      *) files+=("$line") ;;
    esac
  done < "$list"
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}" "${data[@]}"; do
  mkdir -p "$tmp/$(dirname "$f")"
  git -C "$repo" show "$commit:$f" > "$tmp/$f"
done
# GPU, Xenna-backend and Ray Serve tests are out of scope: deselect by marker and by name.
cat > "$tmp/conftest.py" <<'PY'
import pytest

def pytest_configure(config):
    for m in ("gpu", "xenna", "ray", "serve"):
        config.addinivalue_line("markers", f"{m}: NeMo marker")

def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        names = {m.name for m in item.iter_markers()}
        text = item.nodeid.lower()
        if names & {"gpu", "serve"} or "xenna" in text or "gpu" in text:
            drop.append(item)
        else:
            keep.append(item)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)
PY
touch "$tmp/pytest.ini"
cd "$tmp"
set +e
PYTHONPATH="$here/nemo_shim" "$root/.venv/bin/python" -m pytest -q -rA -p no:randomly --import-mode=importlib --continue-on-collection-errors \
  -p no:cacheprovider --rootdir "$tmp" "$@" "${files[@]}" > "$tmp/out.txt" 2>&1
tail -n "${TAIL:-60}" "$tmp/out.txt"
# -rA lines are "OUTCOME tests/..."; captured log lines also start with "ERROR ", so match the path
count() { grep -c "^$1 \(\[[0-9]*\] \)\?tests/" "$tmp/out.txt"; }
passed=$(count PASSED); failed=$(count FAILED); errors=$(count ERROR); skipped=$(count SKIPPED)
ran=$((passed + failed + errors))
echo "NeMo unit tests through the shim: $passed passed of $ran run" \
     "($failed failed, $errors errors, $skipped skipped; GPU/Xenna/Serve deselected):" \
     "$(( ran ? 100 * passed / ran : 0 ))%"
