"""Issue 31: the deduplication workflows manage their own folders. Each runs twice in a row
(same answer, every kept record written once, a file the user put beside the output stays), an
output or cache folder overlapping the input is refused before anything is touched, and a run
resumed after a kill removes the killed run's temporary files from the cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow
from curator.output_dir import OutputDirError
from curator_text.dedup import FuzzyDeduplicationWorkflow

from tests.dedup.corpus import make_corpus, write_parts
from tests.e2e.slowfs import ROOT, sitecustomize


def _text_input(folder: Path) -> list[str]:
    texts, _ = make_corpus(n_orig=60, n_exact=5, n_near=3, n_short=2)
    return write_parts(texts, folder, 3)


def _embedding_input(folder: Path) -> list[str]:
    import pyarrow as pa

    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 16)).astype(np.float32)
    x[60] = x[10]  # a planted duplicate
    folder.mkdir(parents=True)
    ids = [f"doc-{i:04d}" for i in range(len(x))]
    for p, sl in enumerate((slice(0, 40), slice(40, 80), slice(80, 120))):
        pq.write_table(pa.table({"id": ids[sl], "embeddings": pa.array(
            list(x[sl]), pa.list_(pa.float32()))}), folder / f"part-{p:02d}.parquet")
    return ids


WORKFLOWS = {
    "exact": (_text_input, lambda i, o, **kw: ExactDeduplicationWorkflow(
        i, o, perform_removal=True, **kw)),
    "fuzzy": (_text_input, lambda i, o, **kw: FuzzyDeduplicationWorkflow(
        i, o, perform_removal=True, **kw)),
    "semantic": (_embedding_input, lambda i, o, **kw: SemanticDeduplicationWorkflow(
        i, o, n_clusters=4, eps=1e-4, perform_removal=True, **kw)),
}


def _kept(out: Path) -> list[str]:
    return sorted(i for f in sorted((out / "deduplicated").glob("*.parquet"))
                  for i in pq.read_table(f).column("id").to_pylist())


@pytest.mark.parametrize("kind", list(WORKFLOWS))
def test_each_dedup_workflow_runs_twice_in_a_row(tmp_path, kind):
    make_input, make = WORKFLOWS[kind]
    ids = make_input(tmp_path / "in")
    out = tmp_path / "out"
    first = make(str(tmp_path / "in"), str(out)).run()
    kept = _kept(out)
    assert first.num_removed > 0 and len(kept) == len(ids) - first.num_removed
    (out / "deduplicated" / "notes.txt").write_text("the user's")  # not the workflow's
    second = make(str(tmp_path / "in"), str(out)).run()
    assert (second.num_duplicates, second.num_removed) == (first.num_duplicates,
                                                           first.num_removed)
    assert _kept(out) == kept  # each kept record once
    assert (out / "deduplicated" / "notes.txt").read_text() == "the user's"


@pytest.mark.parametrize("where", ["equal", "inside", "parent"])
def test_a_workflow_output_overlapping_its_input_is_refused(tmp_path, where):
    data = tmp_path / "data"
    _text_input(data)
    before = sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    out = {"equal": data, "inside": data / "dedup", "parent": tmp_path}[where]
    for kind in ("exact", "fuzzy"):
        with pytest.raises(OutputDirError, match="the input path .* nothing was touched"):
            WORKFLOWS[kind][1](str(data), str(out)).run()
    cache_inside = WORKFLOWS["exact"][1](str(data), str(tmp_path / "out"),
                                         cache_path=str(data / "cache"))
    with pytest.raises(OutputDirError, match="cache_path"):
        cache_inside.run()
    assert sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")) == before


def test_a_cache_folder_holding_foreign_files_is_refused_not_emptied(tmp_path):
    _text_input(tmp_path / "in")
    cache = tmp_path / "cache" / "exact"  # ExactDeduplicationWorkflow's own subfolder
    cache.mkdir(parents=True)
    (cache / "thesis.tex").write_text("not Curator's")
    with pytest.raises(OutputDirError, match="did not write"):
        ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                   cache_path=str(tmp_path / "cache")).run()
    assert (cache / "thesis.tex").read_text() == "not Curator's"


_FUZZY = textwrap.dedent("""
    from curator_text.dedup import FuzzyDeduplicationWorkflow
    FuzzyDeduplicationWorkflow({inp!r}, {out!r}, cache_path={cache!r},
                               perform_removal=True).run()
""")


def test_a_killed_fuzzy_run_resumes_without_its_temp_files(tmp_path):
    _text_input(tmp_path / "in")
    out, cache = tmp_path / "out", tmp_path / "cache"
    script = tmp_path / "fuzzy.py"
    script.write_text(_FUZZY.format(inp=str(tmp_path / "in"), out=str(out), cache=str(cache)))
    env = {**os.environ, **sitecustomize(tmp_path / "site"), "CURATOR_TEST_SLOW_WRITE": "0.3",
           "CURATOR_TEST_SLOW_LOCAL": "1", "CURATOR_SUMMARY": "0"}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    # kill it while a cache file is half written, after a first phase finished
    while not (any(cache.rglob("*.parquet")) and
               any(".tmp-" in f.name for f in cache.rglob("*"))):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the fuzzy run never wrote its cache"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert [f for f in cache.rglob("*") if ".tmp-" in f.name]  # the killed run's litter
    env["CURATOR_TEST_SLOW_WRITE"] = "0"
    subprocess.run([sys.executable, str(script)], env=env, cwd=ROOT, check=True, timeout=300)
    assert not [f for f in cache.rglob("*") if ".tmp-" in f.name]
    clean = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "clean"),
                                       perform_removal=True).run()
    assert _kept(out) == _kept(tmp_path / "clean") and clean.num_removed > 0


def test_text_duplicates_removal_runs_twice_and_refuses_its_input(tmp_path):
    import pyarrow as pa
    from curator_text.dedup import TextDuplicatesRemovalWorkflow

    (tmp_path / "in").mkdir()
    (tmp_path / "dups").mkdir()
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": ["x", "y", "z"]}),
                   tmp_path / "in" / "p.parquet")
    pq.write_table(pa.table({"id": ["b"]}), tmp_path / "dups" / "ids.parquet")

    def run(out):
        return TextDuplicatesRemovalWorkflow(
            input_path=str(tmp_path / "in"), ids_to_remove_path=str(tmp_path / "dups"),
            output_path=str(out), id_field="id").run()

    with pytest.raises(OutputDirError, match="is inside the input path"):
        run(tmp_path / "in" / "out")
    assert not (tmp_path / "in" / "out").exists()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("the user's")
    for _ in range(2):
        assert run(tmp_path / "out").num_duplicates_removed == 1
    assert pq.read_table(tmp_path / "out" / "p.parquet").column("id").to_pylist() == ["a", "c"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()
                  if not p.name.startswith(".")) == ["notes.txt", "p.parquet"]
