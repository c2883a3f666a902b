"""What numba compiles for the top n-gram filter on a machine's first run: one specialisation of
each kernel it calls, and nothing for paths the run does not take (the one-word search, array
allocation). Each compiled function costs a machine's first run a fraction of a second."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

SCRIPT = """
import json, pyarrow as pa
from numba.core import event
from curator_text.filters import _ngrams

compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
texts = pa.array(["a b a b c", "x y z", "", "one", "b a b a b a"])
scores = [round(float(s), 4) for s in _ngrams.top_ngram_scores(texts, 2)]
print(json.dumps({"scores": scores, "compiled": compiled}))
"""


def test_top_ngrams_compiles_one_specialisation_and_no_unused_path() -> None:
    with tempfile.TemporaryDirectory() as cache:  # empty: everything compiles
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                             check=True, env={"NUMBA_CACHE_DIR": cache, "PATH": "/usr/bin:/bin"})
    got = json.loads(out.stdout)
    assert got["scores"] == [round(2 * 3 / 9, 4), round(1 * 3 / 5, 4), 1.0, 1.0,
                             round(3 * 3 / 11, 4)]
    kernels = [name for name in got["compiled"] if not name.startswith(("ol_", "impl", "_ol"))]
    assert sorted(kernels) == ["_count_joined", "_table_mask", "_top", "_words"], kernels
    assert not [name for name in got["compiled"] if "np_empty" in name or "np_full" in name]
