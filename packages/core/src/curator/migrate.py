"""``curator migrate FILE...``: rewrites a NeMo Curator script's ``nemo_curator`` imports to
Curator's modules (every modality) and reports the names it could not map.

It reads the code with :mod:`ast`, so indented imports (in functions, ``try`` blocks),
``from nemo_curator.x import (a, b)`` over several lines, ``import nemo_curator.x as m`` and
``import nemo_curator.x`` with ``nemo_curator.x.Name`` in the code are all rewritten; the rest of
the file is left byte for byte. Each name goes to the Curator module that exports it (the
installed packages' ``__all__``), looked up first in the modules each installed package declares
for the NeMo module (its ``curator_migrate_rules`` hook, :mod:`curator.plugins.migration`). A name
with no Curator counterpart keeps its ``nemo_curator`` import and is reported as
``file:line: name``, with the reason where a package declared it not offered. Core declares only
its own modules: install a modality's package to migrate its names.

Usage: ``curator migrate [--dry-run] FILE_OR_DIR...`` (also ``python -m curator.migrate``);
``--dry-run`` prints a unified diff and writes nothing. Exit status 1 when a name was not mapped.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curator.plugins.migration import MergedRules, merge_rules

__all__ = ["rules", "Unmapped", "MigrateResult", "resolve_name", "resolve_module", "not_offered",
           "migrate_source", "migrate_paths", "current_exports", "exports", "add_arguments", "run",
           "main"]


def rules() -> MergedRules:
    """Every installed plugin's NeMo mappings (the ``curator_migrate_rules`` hook), merged; core
    hard-codes none of them."""
    from curator.plugins.manager import get_registry

    migrations = get_registry().migrations
    if _merged[0] is not migrations:  # merged once per registry
        _merged[:] = [migrations, merge_rules(r for _, r in migrations)]
    return _merged[1]


_merged: list = [None, None]


@dataclass(frozen=True)
class Unmapped:
    """A NeMo name ``migrate`` found no Curator counterpart for."""

    path: str
    line: int
    name: str
    reason: str = ""

    def __str__(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.path}:{self.line}: {self.name}{why}"


@dataclass
class MigrateResult:
    """The rewritten source and what could not be mapped."""

    source: str
    text: str
    unmapped: list[Unmapped] = field(default_factory=list)
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.text != self.source


def exports() -> dict[str, frozenset[str]]:
    """What each Curator module named by the rules exports (its ``__all__``; modules that do not
    import are left out). Read when ``migrate`` runs, never when ``curator`` is imported."""
    return _exports(rules().all_modules())


@functools.cache
def _exports(modules: tuple[str, ...]) -> dict[str, frozenset[str]]:
    return {m: frozenset(names) for m, names in _read_exports(modules).items()}


def resolve_name(nemo_module: str, name: str) -> tuple[str, str] | None:
    """The Curator ``(module, name)`` for NeMo's ``from nemo_module import name``, or None."""
    merged = rules()
    renamed = merged.renames.get(f"{nemo_module}.{name}")
    if renamed:
        return renamed
    table = exports()
    for mod in (*merged.candidates(nemo_module), *merged.all_modules()):
        if name in table.get(mod, ()):
            return mod, name
    return None


def not_offered(name: str) -> str:
    """Why the NeMo name (dotted) has no Curator counterpart by design, else ``""``."""
    return rules().why_not_offered(name)


def resolve_module(nemo_module: str) -> str | None:
    """The Curator module standing for the NeMo module ``nemo_module`` (its modality's package);
    None for a module a package declares not offered."""
    if rules().why_not_offered(nemo_module):
        return None
    mods = rules().candidates(nemo_module)
    return mods[0] if mods else None


def _is_nemo(module: str | None) -> bool:
    return bool(module) and (module == "nemo_curator" or module.startswith("nemo_curator."))


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname and asname != name else name


def _from_import(module: str, names: list[str], indent: str) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(indent) + len(line) <= 99:
        return line
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"from {module} import (\n{inner}{indent})"


class _Rewriter:
    def __init__(self, source: str, path: str) -> None:
        self.source, self.path = source, path
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.edits: list[tuple[int, int, str]] = []
        self.unmapped: list[Unmapped] = []

    def offset(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode()[:col].decode(errors="ignore"))

    def replace(self, node: ast.AST, statements: list[str]) -> None:
        start = self.offset(node.lineno, node.col_offset)
        before = self.source[self.starts[node.lineno - 1]:start]
        indent = before if not before.strip() else None
        sep = f"\n{indent}" if indent is not None else "; "
        self.edits.append((start, self.offset(node.end_lineno, node.end_col_offset),
                           sep.join(statements)))

    def miss(self, line: int, name: str) -> None:
        self.unmapped.append(Unmapped(self.path, line, name, not_offered(name)))

    def indent_of(self, node: ast.AST) -> str:
        line = self.lines[node.lineno - 1]
        return line[:len(line) - len(line.lstrip())]

    def import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        groups: dict[str, list[str]] = {}
        statements: list[str] = []
        kept: list[str] = []
        for a in node.names:
            if a.name == "*":
                target = resolve_module(module)
                if target:
                    groups.setdefault(target, []).append("*")
                else:
                    kept.append("*")
                    self.miss(node.lineno, f"{module}.*")
                continue
            found = resolve_name(module, a.name)
            if found:
                mod, new = found
                groups.setdefault(mod, []).append(_alias(new, a.asname or a.name))
                continue
            submodule = resolve_module(f"{module}.{a.name}") if _is_submodule(module,
                                                                               a.name) else None
            if submodule:
                statements.append(f"import {submodule} as {a.asname or a.name}")
                continue
            kept.append(_alias(a.name, a.asname))
            self.miss(node.lineno, f"{module}.{a.name}")
        indent = self.indent_of(node)
        out = [_from_import(mod, names, indent) for mod, names in groups.items()] + statements
        if kept:
            out.append(_from_import(module, kept, indent))
        self.replace(node, out)

    def import_(self, node: ast.Import, tree: ast.AST) -> None:
        out: list[str] = []
        for a in node.names:
            if not _is_nemo(a.name):
                out.append(f"import {_alias(a.name, a.asname)}")
            elif a.asname:
                target = resolve_module(a.name)
                if target is None:
                    out.append(f"import {a.name} as {a.asname}")
                    self.miss(node.lineno, a.name)
                    continue
                out.append(f"import {target} as {a.asname}")
                self.check_attributes(tree, a.asname, target)
            else:
                mods = self.rewrite_references(tree)
                out += [f"import {m}" for m in mods] or [f"import {resolve_module(a.name)}"]
        self.replace(node, list(dict.fromkeys(out)))

    def check_attributes(self, tree: ast.AST, alias: str, module: str) -> None:
        """Reports ``alias.Name`` uses whose name the Curator module does not export."""
        exported = exports().get(module, ())
        seen = set()
        for n in ast.walk(tree):
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                    and n.value.id == alias and n.attr not in exported and n.attr not in seen):
                seen.add(n.attr)
                self.miss(n.lineno, f"{alias}.{n.attr}")

    def rewrite_references(self, tree: ast.AST) -> list[str]:
        """Rewrites ``nemo_curator.x.y.Name`` in the code to ``curator_module.Name``; returns the
        Curator modules now referenced (done once per file)."""
        if hasattr(self, "_modules"):
            return []
        self._modules: list[str] = []
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for n in ast.walk(tree):
            if not isinstance(n, ast.Attribute) or id(n) in inner:
                continue
            dotted = _dotted(n)
            if not dotted or not dotted.startswith("nemo_curator."):
                continue
            parts = dotted.split(".")
            for i in range(1, len(parts)):
                found = None if _is_submodule(".".join(parts[:i]), parts[i]) else resolve_name(
                    ".".join(parts[:i]), parts[i])
                if found:
                    mod, new = found
                    self._modules.append(mod)
                    rest = "".join(f".{p}" for p in parts[i + 1:])
                    self.edits.append((self.offset(n.lineno, n.col_offset),
                                       self.offset(n.end_lineno, n.end_col_offset),
                                       f"{mod}.{new}{rest}"))
                    break
            else:
                self.miss(n.lineno, dotted)
        return list(dict.fromkeys(self._modules))

    def apply(self) -> str:
        text = self.source
        for start, end, new in sorted(self.edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text


_NEMO_MODULES = frozenset((
    "stages", "text", "image", "audio", "video", "math", "filters", "modifiers", "modules", "io",
    "reader", "writer", "classifiers", "embedders", "deduplication", "download", "utils", "tasks",
    "pipeline", "backends", "core", "models", "exact", "fuzzy", "semantic", "heuristic",
    "fasttext", "base", "client", "resources", "function_decorators", "file_partitioning",
    "ray_data", "ray_actor_pool", "xenna", "experimental", "arxiv", "common_crawl", "wikipedia",
    "html_extractors", "string", "unicode", "jsonl", "parquet", "megatron_tokenizer",
    "file_utils", "hash_utils", "client_utils", "doc_filter", "score_filter", "add_id",
    "modifier", "doc_modifier", "document_batch", "tasks", "workflow", "removal_workflow"))
"""Names of NeMo Curator packages and modules (``from nemo_curator.stages.text import
filters``): such a name imports the Curator module of its modality."""


def _is_submodule(module: str, name: str) -> bool:
    """``name`` is a module of NeMo's, not a name it exports."""
    merged = rules()
    return ((name in _NEMO_MODULES or name in merged.nemo_module_names())
            and not any(name in exports().get(m, ()) for m in merged.candidates(module)))


def migrate_source(source: str, path: str = "<string>") -> MigrateResult:
    """Rewrites the ``nemo_curator`` imports of one Python source."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return MigrateResult(source, source, error=f"{path}:{exc.lineno}: cannot parse: {exc.msg}")
    rw = _Rewriter(source, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _is_nemo(node.module):
            rw.import_from(node)
        elif isinstance(node, ast.Import) and any(_is_nemo(a.name) for a in node.names):
            rw.import_(node, tree)
    rw.unmapped.sort(key=lambda u: u.line)
    return MigrateResult(source, rw.apply(), rw.unmapped)


def current_exports() -> dict[str, list[str]]:
    """What the installed Curator packages export now: ``__all__`` of every module the rules
    name (modules that do not import are left out)."""
    return _read_exports(rules().all_modules())


def _read_exports(modules: tuple[str, ...]) -> dict[str, list[str]]:
    import importlib

    out = {}
    for mod in sorted(modules):
        try:
            module = importlib.import_module(mod)
        except ImportError:
            continue
        out[mod] = sorted(getattr(module, "__all__", ()))
    return out


def _files(paths: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(x for x in p.rglob("*.py") if x.is_file())
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"curator migrate: no such file or directory: {p}")
    return out


def migrate_paths(paths: Iterable[str], dry_run: bool = False,
                  out: object = None) -> tuple[list[MigrateResult], int]:
    """Migrates files (directories: their ``*.py``) in place, or prints a unified diff with
    ``dry_run``. Returns the results and the exit status (1 when a name was not mapped or a file
    could not be parsed)."""
    stream = out or sys.stdout
    results = []
    status = 0
    for path in _files(paths):
        source = path.read_text(encoding="utf-8")
        res = migrate_source(source, str(path))
        results.append(res)
        if res.error:
            print(res.error, file=sys.stderr)
            status = 1
            continue
        if res.changed:
            if dry_run:
                stream.writelines(difflib.unified_diff(
                    source.splitlines(keepends=True), res.text.splitlines(keepends=True),
                    str(path), f"{path} (migrated)"))
            else:
                path.write_text(res.text, encoding="utf-8")
                print(f"migrated {path}", file=stream)
        for u in res.unmapped:
            print(f"{u}: no Curator counterpart (import left as it was)", file=sys.stderr)
            status = 1
    return results, status


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``curator migrate`` (shared with ``python -m curator.migrate``)."""
    parser.add_argument("paths", nargs="+", metavar="FILE",
                        help="Python files or directories (their *.py) to rewrite in place")
    parser.add_argument("--dry-run", "--diff", dest="dry_run", action="store_true",
                        help="print a unified diff instead of writing the files")


def run(args: argparse.Namespace) -> int:
    """Runs ``curator migrate`` with parsed arguments."""
    return migrate_paths(args.paths, dry_run=args.dry_run)[1]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m curator.migrate FILE...``."""
    parser = argparse.ArgumentParser(prog="curator migrate", description=__doc__.splitlines()[0])
    if argv is None:
        argv = sys.argv[1:]
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
