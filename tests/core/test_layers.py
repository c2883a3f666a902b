"""The layer contract of ``curator`` (issue 35; the layers and why are in docs/architecture.md).

Every top-level module of ``packages/core/src/curator`` sits in one layer; no module imports a
module of a higher layer, at module level or inside a function (imports under
``if TYPE_CHECKING:`` load nothing and are allowed). ``from curator import Name`` counts as an
import of the module that defines ``Name`` (``curator._EXPORTS``); ``curator/__init__.py`` itself,
whose lazy exports name every layer, is the one exception.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import curator

SRC = Path(curator.__file__).resolve().parent

#: lowest first; a module may import its own layer and the layers below it
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"_lazy", "errors", "heap", "paths", "io", "local_fs", "params",
                              "model_wheels", "resources", "task_data", "child_process"})),
    ("tasks", frozenset({"tasks", "utils"})),
    ("registry", frozenset({"plugins"})),
    ("run record", frozenset({"run", "output_dir", "task_files", "report"})),
    ("stages", frozenset({"stages"})),
    ("executors", frozenset({"executors", "cluster"})),
    ("pipeline", frozenset({"pipeline", "replay"})),
    ("workflows and specs", frozenset({"dedup", "spec"})),
    ("entry points", frozenset({"cli", "__main__", "builtin_plugin", "testing", "migrate"})),
)

#: (importing module, imported top-level module) -> why it is allowed for now. Each entry is a
#: violation still to remove; the test fails when one is gone, so the list only shrinks.
ALLOWED: dict[tuple[str, str], str] = {}


def _layer_of() -> dict[str, int]:
    return {name: i for i, (_, names) in enumerate(LAYERS) for name in names}


def _top_level_modules() -> set[str]:
    found = {p.stem for p in SRC.glob("*.py") if p.name != "__init__.py"}
    found |= {p.parent.name for p in SRC.glob("*/__init__.py")}
    return found


def _module_name(path: Path, src: Path) -> str:
    parts = ["curator", *path.relative_to(src).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The ``curator`` modules ``node`` imports (dotted names)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        here = here[: len(here) - (node.level - 1)]
        base = ".".join([*here, *([node.module] if node.module else [])])
    if base == "curator":  # from curator import Name: the module that defines Name
        return [curator._EXPORTS.get(a.name, f"curator.{a.name}") for a in node.names]
    return [base]


def _upward_imports(src: Path = SRC) -> list[tuple[str, str, str, str]]:
    """``(where, importer, imported, message)`` for every import of a higher layer in the
    ``curator`` package at ``src``."""
    layer = _layer_of()
    out = []
    for path in sorted(src.rglob("*.py")):
        if path == src / "__init__.py":
            continue
        module = _module_name(path, src)
        own = module.split(".")[1]
        tree = ast.parse(path.read_text("utf-8"), str(path))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in skip:
                continue
            for name in _imported(node, module, path.name == "__init__.py"):
                parts = name.split(".")
                if name == "curator":  # curator.Name would hide which layer Name is in
                    where = f"{path.relative_to(src.parents[3])}:{node.lineno}"
                    out.append((where, own, "curator", f"{where}: {module} imports the package "
                                f"curator; import the module that defines the name instead"))
                if parts[0] != "curator" or len(parts) < 2:
                    continue
                target = parts[1]
                if layer.get(target, -1) <= layer.get(own, -1) or target == own:
                    continue
                where = f"{path.relative_to(src.parents[3])}:{node.lineno}"
                message = (
                    f"{where}: {module} (layer '{LAYERS[layer[own]][0]}') imports {name} "
                    f"(layer '{LAYERS[layer[target]][0]}', higher). Move the code it needs "
                    f"down to '{LAYERS[layer[own]][0]}' or below, or have the higher layer pass "
                    f"it in (a parameter, or a callable it registers); see the layers in "
                    f"docs/architecture.md")
                out.append((where, own, target, message))
    return out


def test_every_top_level_module_is_in_one_layer():
    placed = [name for _, names in LAYERS for name in names]
    assert len(placed) == len(set(placed)), "a module is placed in two layers"
    modules = _top_level_modules()
    missing = sorted(modules - set(placed))
    assert not missing, (f"place {missing} in a layer of tests/core/test_layers.py LAYERS and "
                         f"in the layer table of docs/architecture.md")
    stale = sorted(set(placed) - modules)
    assert not stale, f"LAYERS names modules that no longer exist: {stale}"


def test_no_module_imports_a_higher_layer():
    found = _upward_imports()
    bad = [msg for _, own, target, msg in found if (own, target) not in ALLOWED]
    assert not bad, "upward imports:\n" + "\n".join(bad)
    gone = sorted(set(ALLOWED) - {(own, target) for _, own, target, _ in found})
    assert not gone, f"remove these fixed entries from ALLOWED: {gone}"


def test_the_layers_are_documented():
    doc = (SRC.parents[3] / "docs" / "architecture.md").read_text("utf-8")
    for name, modules in LAYERS:
        row = next((line for line in doc.splitlines()
                    if line.startswith(f"| {name} |")), None)
        assert row is not None, f"docs/architecture.md: no row '| {name} |' in the layer table"
        for module in modules:
            assert f"`{module}`" in row, f"docs/architecture.md: `{module}` not in '{name}' row"


def test_the_checker_sees_upward_imports_at_any_depth(tmp_path):
    """The checker itself, on a small package: imports inside functions, ``from curator import``
    and relative imports are seen; ``TYPE_CHECKING`` imports are not."""
    src = tmp_path / "packages" / "core" / "src" / "curator"
    (src / "run").mkdir(parents=True)
    (src / "errors.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from curator.pipeline import Pipeline\n"
        "def f():\n    from curator import LocalExecutor\n")
    (src / "run" / "sink.py").write_text("from ..stages import base\nfrom . import stats\n")
    (src / "run" / "stats.py").write_text("import curator\n")
    found = sorted((where, target) for where, _, target, _ in _upward_imports(src))
    assert found == [("packages/core/src/curator/errors.py:5", "executors"),
                     ("packages/core/src/curator/run/sink.py:1", "stages"),
                     ("packages/core/src/curator/run/stats.py:1", "curator")]
    (message,) = [m for where, _, _, m in _upward_imports(src) if "sink.py" in where]
    assert "layer 'run record'" in message and "layer 'stages', higher" in message
    assert "Move the code" in message


def test_report_does_not_load_the_executors():
    code = ("import sys, curator.report\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('curator.executors'))\n"
            "assert not loaded, loaded\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
