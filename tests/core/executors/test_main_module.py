"""Process-mode stages work wherever users write code: worker processes never re-import
``__main__`` (a script without a main guard, ``python -c``, stdin, a Jupyter notebook).

Each variant runs the same user code in a real, separate Python process: read JSONL, fix mojibake
with ``UnicodeReformatter`` and tag each row with the worker's pid through a function defined in
the user's ``__main__`` (both process-mode), write JSONL. The test asserts the written output and
that the rows were modified in a process other than the driver.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROWS = 4

USER_CODE = """\
import json, os
from curator import Pipeline
from curator_text import JsonlReader, JsonlWriter
from curator_text.modifiers import Modify, UnicodeReformatter

data = {data!r}
with open(os.path.join(data, "in.jsonl"), "w", encoding="utf-8") as f:
    for i in range({rows}):
        f.write(json.dumps({{"text": "caf\\u00c3\\u00a9 " + str(i)}}) + "\\n")

def tag_pid(text):
    return text + "|" + str(os.getpid())

pipeline = Pipeline(name="main_module", stages=[
    JsonlReader(os.path.join(data, "in.jsonl")),
    Modify(modifier_fn=[UnicodeReformatter(), tag_pid]),
    JsonlWriter(os.path.join(data, "out")),
])
assert pipeline.stages[1].worker_mode == "process"
result = pipeline.run()
assert result.ok, result
with open(os.path.join(data, "driver_pid"), "w") as f:
    f.write(str(os.getpid()))
"""


def _code(data: Path) -> str:
    return USER_CODE.format(data=str(data), rows=ROWS)


def _check_output(data: Path) -> None:
    files = sorted((data / "out").glob("*.jsonl"))
    rows = [json.loads(line) for f in files for line in f.read_text("utf-8").splitlines()]
    texts = sorted(r["text"].split("|")[0] for r in rows)
    assert texts == [f"café {i}" for i in range(ROWS)]
    driver = int((data / "driver_pid").read_text())
    pids = {int(r["text"].split("|")[1]) for r in rows}
    assert pids and driver not in pids  # modified in a worker process, not in a thread


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> None:
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_script_without_main_guard(tmp_path: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(_code(tmp_path))
    _run([sys.executable, str(script)], tmp_path)
    _check_output(tmp_path)


def test_python_dash_c(tmp_path: Path) -> None:
    _run([sys.executable, "-c", _code(tmp_path)], tmp_path)
    _check_output(tmp_path)


def test_code_piped_to_stdin(tmp_path: Path) -> None:
    _run([sys.executable, "-"], tmp_path, stdin=_code(tmp_path))
    _check_output(tmp_path)


def test_jupyter_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    prefix = tmp_path / "jupyter"
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix),
                    "--name", "curator-test"], check=True, capture_output=True, timeout=120)
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    spec = json.loads((prefix / "share/jupyter/kernels/curator-test/kernel.json").read_text())
    assert os.path.samefile(spec["argv"][0], sys.executable)
    code = _code(tmp_path)
    head, tail = code.split("pipeline = Pipeline(", 1)  # two cells, as a user would split them
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(head),
                                         nbformat.v4.new_code_cell("pipeline = Pipeline(" + tail)])
    client = nbclient.NotebookClient(nb, kernel_name="curator-test", timeout=300,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    _check_output(tmp_path)


def test_without_an_executable_process_stages_run_in_threads_with_one_warning(tmp_path: Path,
                                                                              ) -> None:
    import multiprocessing

    from curator import Pipeline
    from curator_text import JsonlReader, JsonlWriter
    from curator_text.modifiers import Modify, UnicodeReformatter

    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"text": f"caf\u00c3\u00a9 {i}"}) + "\n"
                                               for i in range(ROWS)), "utf-8")
    stages = [JsonlReader(str(tmp_path / "in.jsonl")),
              Modify(modifier_fn=[UnicodeReformatter(), lambda t: f"{t}|{os.getpid()}"]),
              JsonlWriter(str(tmp_path / "out"))]
    multiprocessing.set_executable(str(tmp_path / "no-such-python"))
    try:
        with pytest.warns(RuntimeWarning, match="run in threads") as caught:
            assert Pipeline(name="threads", stages=stages).run(num_workers=2).ok
    finally:
        multiprocessing.set_executable(sys.executable)
    assert len([w for w in caught if "run in threads" in str(w.message)]) == 1
    rows = [json.loads(line) for f in (tmp_path / "out").glob("*.jsonl")
            for line in f.read_text("utf-8").splitlines()]
    assert sorted(r["text"] for r in rows) == [f"café {i}|{os.getpid()}" for i in range(ROWS)]
