"""The ``curator`` command: list plugins and stages, describe a stage, run a spec."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from curator.errors import ConfigError, CuratorError
from curator.plugins import Registry, RegistryEntry, get_registry
from curator.plugins.kinds import KIND_NAMES
from curator.run.context import env_flag

__all__ = ["main", "build_parser"]


def plain_text(text: str) -> str:
    """Docstring text for a terminal: Sphinx roles (``:class:`~a.B` ``) and RST double
    backticks become plain words."""
    text = re.sub(r":[a-z]+:`~([^`<]+)`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = re.sub(r":[a-z]+:`([^`<]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", r"\1", text)


def _table(rows: list[list[str]], head: list[str]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join(line.rstrip() for line in out)


def cmd_plugins(args: argparse.Namespace, registry: Registry) -> int:
    counts: dict[str, int] = {}
    for e in registry.entries.values():
        counts[e.plugin.name] = counts.get(e.plugin.name, 0) + 1
    if args.json:
        print(json.dumps({
            "plugins": [{"name": p.name, "distribution": p.distribution, "version": p.version,
                         "module": p.module, "registered": counts.get(p.name, 0)}
                        for p in registry.plugins],
            "broken": [{"name": b.name, "distribution": b.distribution, "version": b.version,
                        "error": b.error} for b in registry.broken],
            "clashes": registry.clash_notes()}, indent=2))
        return 0
    rows = [[p.name, p.distribution, p.version, str(counts.get(p.name, 0)), p.module]
            for p in registry.plugins]
    print(_table(rows, ["plugin", "distribution", "version", "registered", "module"]))
    for b in registry.broken:
        last = b.error.strip().splitlines()[-1] if b.error else ""
        print(f"\nBROKEN plugin {b.name!r} ({b.distribution} {b.version}): {last}")
        if args.verbose:
            print(b.error)
    for note in registry.clash_notes():
        print(f"\nNAME CLASH: {note}")
    return 0


def cmd_stages(args: argparse.Namespace, registry: Registry) -> int:
    entries = registry.list(kind=args.kind, modality=args.modality)

    def shown(e: RegistryEntry) -> str:  # a clashed name's other providers: ``plugin:Name``
        return e.name if registry.entries.get(e.name) is e else e.qualified_name

    if args.json:
        print(json.dumps([{"name": shown(e), "kind": e.kind, "modality": e.modality,
                           "plugin": e.plugin.name, "distribution": e.plugin.distribution,
                           "qualified_name": e.qualified_name,
                           "is_stage": e.is_stage, "description": e.description}
                          for e in entries], indent=2))
        return 0
    head = ["name", "kind", "modality", "plugin"]
    rows = [[shown(e), e.kind, e.modality, e.plugin.distribution] for e in entries]
    table = _table(rows, head).splitlines() if rows else []
    indent = max((len(line) for line in table), default=0) + 2
    width = max(shutil.get_terminal_size((120, 24)).columns - indent, 30)
    out = []
    for i, line in enumerate(table):  # descriptions wrap at word boundaries, never cut
        text = "description" if i == 0 else "-" * 11 if i == 1 else \
            plain_text(entries[i - 2].description)
        wrapped = textwrap.wrap(text, width) or [""]
        out.append(f"{line:<{indent}}{wrapped[0]}".rstrip())
        out += [" " * indent + rest for rest in wrapped[1:]]
    print("\n".join(out))
    return 0


def _param_line(p: inspect.Parameter) -> str:
    ann = p.annotation if p.annotation is not inspect.Parameter.empty else ""
    ann = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
    return f"  {p.name}{': ' + ann if ann else ''}{default}"


def describe_entry(entry: RegistryEntry) -> str:
    obj = entry.obj
    lines = [f"{entry.name}  ({entry.kind}, modality {entry.modality})",
             f"provided by {entry.plugin.label}: {entry.qualname}", ""]
    doc = inspect.getdoc(obj)
    if doc:
        lines += [plain_text(doc), ""]
    try:
        params = [p for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    lines.append("parameters:" if params else "parameters: none")
    lines += [_param_line(p) for p in params]
    if entry.is_stage:
        res = getattr(obj, "resources", None)
        lines += ["", f"resources: {res.to_dict() if res else '-'}",
                  f"batch_size: {getattr(obj, 'batch_size', 1)}",
                  f"worker_mode: {getattr(obj, 'worker_mode', 'thread')}"]
        try:
            inst = obj()
        except Exception:
            inst = None
        if inst is not None:
            lines += [f"reads: {inst.inputs()[1] or '-'}", f"writes: {inst.outputs()[1] or '-'}"]
    return "\n".join(lines)


def cmd_describe(args: argparse.Namespace, registry: Registry) -> int:
    entry = registry.get(args.name)
    print(describe_entry(entry))
    notes = [n for n in registry.clash_notes() if n.startswith(f"{entry.name!r} ")]
    for note in notes:
        print(f"\nname clash: {note}")
    return 0


def cmd_run(args: argparse.Namespace, registry: Registry) -> int:
    from curator.spec import (
        apply_overrides,
        executor_from_spec,
        load_spec,
        pipeline_from_spec,
        run_options,
    )

    spec = apply_overrides(load_spec(args.spec), args.set or [])
    args.prepare = spec.get("prepare")
    pipeline = pipeline_from_spec(spec, registry)
    executor = executor_from_spec(_with_executor_args(spec, args, registry), None, registry)
    opts = run_options(spec)
    for key in ("rejected_dir", "checkpoint_dir", "max_retries"):
        if getattr(args, key) is not None:
            opts[key] = getattr(args, key)
    if args.quiet:
        opts.update(progress=False, summary=False)
    if args.dry_run:
        print(pipeline.describe(), file=sys.stderr)
        return 0
    if not args.quiet:
        print(_plan_line(pipeline), file=sys.stderr)
    summary = opts.pop("summary", None)
    summary = summary if summary is not None else env_flag("CURATOR_SUMMARY") is not False
    opts["raise_on_failure"] = False  # failed tasks: report written, exit status 1
    result = pipeline.run(executor, summary=False, **opts)
    if summary:  # printed here so its hints name command-line flags
        print(result.summary(cli=True), file=sys.stderr, flush=True)
    if args.report:
        from curator.report import write_report

        result.spec = spec
        print(f"report written to {write_report(result, args.report)}", file=sys.stderr)
    return _report(pipeline.name, result, args.spec, args.prepare)


def _plan_line(pipeline: Any) -> str:
    """One line naming the stages a run is about to execute (``--dry-run`` prints them all in
    full, NeMo Curator's ``describe()`` layout)."""
    stages = pipeline._built or pipeline.build()
    return f"running {pipeline.name!r}: " + " -> ".join(s.name for s in stages)


def _config_keys(executor_cls: Any) -> frozenset[str]:
    """The config keys an executor class accepts (its typed ``config_class``), none if unknown."""
    config_class = getattr(executor_cls, "config_class", None)
    return config_class.keys() if config_class is not None else frozenset()


def _with_executor_args(spec: dict[str, Any], args: argparse.Namespace,
                        registry: Registry) -> dict[str, Any]:
    """``spec`` with ``--executor`` and ``--address`` applied to its ``executor`` section. The
    spec's executor settings are kept: all of them for the same executor, and those the other
    executor also accepts (``address``, ``num_cpus``, ...) when ``--executor`` names another."""
    raw = spec.get("executor") or "local"
    name, config = (raw.get("name", "local"), dict(raw.get("config") or {})) \
        if isinstance(raw, dict) else (raw, {})
    if args.executor and args.executor != name:
        keys = _config_keys(registry.get(args.executor, kind="executor").obj)
        config = {k: v for k, v in config.items() if k in keys}
        name = args.executor
    if getattr(args, "address", None):
        keys = _config_keys(registry.get(name, kind="executor").obj)
        if "address" not in keys:
            raise ConfigError(f"--address {args.address}: executor {name!r} does not run on a "
                              f"Ray cluster; add --executor ray_data (or ray_actor_pool)")
        config["address"] = args.address
    return {**spec, "executor": {"name": name, "config": config}}


def _report(name: str, result: Any, spec: str, prepare: str | None = None) -> int:
    """Print the one-line outcome of a run; 0 when ok, 1 when tasks failed (records rejected
    by design, filtered or malformed, do not make a run fail)."""
    failed = result.failed
    records = result.rejected.total - len(failed)
    print(f"{name}: {len(result)} output tasks, {records} rejected records, "
          f"{len(failed)} failed tasks", file=sys.stderr)
    if not failed:
        return 0
    for f in failed[:10]:
        print(f"  FAILED {f}", file=sys.stderr)
    hint = _prepare_hint(prepare, " ".join(map(str, failed)))
    if hint:
        print(f"curator: {hint}", file=sys.stderr)
    where = result.rejected.path
    hint = (f"kept whole in {where}; fix the cause, then `curator replay {where} --spec {spec}`"
            if where else "pass --rejected-dir to keep them on disk for `curator replay`")
    print(f"curator: {len(failed)} task(s) failed after their retries ({hint})", file=sys.stderr)
    return 1


def cmd_report(args: argparse.Namespace, registry: Registry) -> int:
    from curator.report import load_report, write_report

    try:
        data = load_report(args.report)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    print(f"report written to {write_report(data, args.output)}", file=sys.stderr)
    return 0


def cmd_replay(args: argparse.Namespace, registry: Registry) -> int:
    from curator.spec import apply_overrides, executor_from_spec, load_spec, pipeline_from_spec

    spec = apply_overrides(load_spec(args.spec), args.set or [])
    pipeline = pipeline_from_spec(spec, registry)
    executor = executor_from_spec(_with_executor_args(spec, args, registry), None, registry)
    opts = {k: v for k, v in (spec.get("run") or {}).items()
            if k in ("max_retries", "progress", "summary")}
    if args.max_retries is not None:
        opts["max_retries"] = args.max_retries
    result = pipeline.replay(args.rejected_dir, executor, raise_on_failure=False,
                             trust_pickles=args.trust_pickles,
                             **opts)
    return _report(f"{pipeline.name} (replay)", result, args.spec, spec.get("prepare"))


def build_parser(registry: Registry | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curator", description="Curate training data for AI "
                                     "models: list plugins and stages, run pipeline specs.")
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error (also CURATOR_DEBUG=1); "
                             "accepted anywhere on the command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("plugins", help="list installed plugins (and broken ones)")
    p.add_argument("--json", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true", help="show full errors")
    p.set_defaults(func=cmd_plugins)
    p = sub.add_parser("stages", help="list registered stages and components")
    p.add_argument("--modality", help="text, image, audio, video or any")
    p.add_argument("--kind", choices=KIND_NAMES, metavar="KIND",
                   help=f"one of: {', '.join(KIND_NAMES)}")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stages)
    p = sub.add_parser("describe", help="show a stage's documentation, parameters, resources")
    p.add_argument("name")
    p.set_defaults(func=cmd_describe)
    p = sub.add_parser("run", help="run a YAML/JSON pipeline spec")
    p.add_argument("spec")
    p.add_argument("--executor", help="registered executor name (default: the spec's, or local)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a spec value: KEY is a dotted path into the spec, a list item "
                        "by its index, e.g. stages.2.filter_obj.min_words=50 for "
                        "examples/text/tinystories.yaml (repeatable)")
    p.add_argument("--rejected-dir", dest="rejected_dir", metavar="DIR",
                   help="write rejected records, and failed tasks whole (for `curator replay`), "
                        "there (default: the spec's run.rejected_dir; without one they are only "
                        "counted)")
    p.add_argument("--checkpoint-dir", dest="checkpoint_dir", metavar="DIR",
                   help="make the run resumable: finished source partitions are recorded there "
                        "and skipped when the same command runs again")
    p.add_argument("--max-retries", dest="max_retries", type=int, metavar="N",
                   help="retries of a failing task before it is kept as failed (default: the "
                        "spec's run.max_retries, else 1)")
    p.add_argument("--dry-run", action="store_true",
                   help="build and validate only; print every stage in full")
    p.add_argument("--report", metavar="PATH",
                   help="write the run report there: a .json file (the format is described in "
                        "Curator's docs, run-report.md) or a .html page that opens offline")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no pipeline description, live progress or summary table")
    p.add_argument("--address", help="Ray cluster to join (host:port, ray://host:port or auto; "
                                     "default: RAY_ADDRESS, else a local cluster for the run)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("replay", help="run the tasks a run kept in REJECTED_DIR (failed after "
                                      "their retries) again, from the stage where they failed")
    p.add_argument("rejected_dir", metavar="REJECTED_DIR")
    p.add_argument("--spec", required=True, help="the spec of the run that failed")
    p.add_argument("--executor", help="registered executor name (default: the spec's, or local)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a spec value")
    p.add_argument("--max-retries", dest="max_retries", type=int, metavar="N",
                   help="retries of a failing task before it is kept as failed again")
    p.add_argument("--address", help="Ray cluster to join (as for `curator run`)")
    p.add_argument("--trust-pickles", dest="trust_pickles", action="store_true",
                   help="also read failed tasks kept as pickles (*.failed.task.pkl); unpickling "
                        "runs code from the file, so only for a directory nobody else can write")
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("report", help="render a JSON run report (from `curator run --report`) "
                                      "as an HTML page that opens offline")
    p.add_argument("report", metavar="RUN_JSON")
    p.add_argument("-o", "--output", required=True, metavar="PATH", help="the .html file")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("migrate", help="rewrite a NeMo Curator script's nemo_curator imports "
                                       "to Curator's modules; report what has no counterpart")
    from curator import migrate

    migrate.add_arguments(p)
    p.set_defaults(func=lambda a, r: migrate.run(a))
    if registry is not None:
        for name, (add_arguments, run, help_text, _info) in sorted(registry.commands.items()):
            p = sub.add_parser(name, help=help_text)
            add_arguments(p)
            p.set_defaults(func=lambda a, r, _run=run: _run(a))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``curator`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or bool(env_flag("CURATOR_DEBUG"))
    argv = [a for a in argv if a != "--debug"]
    registry = get_registry()
    parser = build_parser(registry)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args, registry) or 0)
    except BrokenPipeError:  # `curator ... | head` closed the pipe: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit-time flush cannot fail again
        return 141  # as when killed by SIGPIPE
    except KeyboardInterrupt:
        print("curator: interrupted; finished partitions are kept: run the same command again "
              "to resume (it skips them and redoes the rest; nothing is written twice)",
              file=sys.stderr)
        return 130
    except Exception as exc:  # every error a user can cause: one line (--debug: traceback)
        if debug:
            raise
        code, text = _user_error(exc)
        hint = _prepare_hint(getattr(args, "prepare", None), text)
        print(f"curator: {text}{'; ' + hint if hint else ''}", file=sys.stderr)
        return code


_DEBUG_HINT = " (--debug or CURATOR_DEBUG=1 shows the traceback)"
_MISSING_DATA = re.compile(r"no file or directory matches|no such file|does not exist|not found|"
                           r"has no config\.json|no model|model_dir", re.IGNORECASE)


def _user_error(exc: BaseException) -> tuple[int, str]:
    """The exit code and one-line message of an error that ended a command."""
    if isinstance(exc, ConfigError):
        return 2, f"configuration error: {_short(exc)}"
    if isinstance(exc, FileNotFoundError):
        return 2, str(exc)
    if isinstance(exc, CuratorError):
        return 1, _short(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name and str(exc).startswith("No module"):
        top = exc.name.split(".")[0]
        return 1, (f"the Python module {top!r} is not installed: install the package that "
                   f"provides it (e.g. pip install {top.replace('_', '-')}), then run this "
                   f"again{_DEBUG_HINT}")
    if isinstance(exc, ImportError):  # ours say which package and how to install it
        return 1, f"{exc}{_DEBUG_HINT}"
    lines = str(exc).strip().splitlines()
    return 1, f"{type(exc).__name__}: {lines[-1] if lines else ''}{_DEBUG_HINT}"


def _prepare_hint(prepare: str | None, error: str) -> str:
    """What to do when a spec's input or model files are missing and the spec names the command
    that makes them (its ``prepare`` key, as the shipped examples do)."""
    if not prepare or not _MISSING_DATA.search(error):
        return ""
    return f"this spec's data or models are not there yet: run `{prepare}` first"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"curator {version('curator-core')} (Python {sys.version.split()[0]})"
    except PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
        return "curator (curator-core is not installed: version unknown)"


def _short(exc: BaseException) -> str:
    """An error message with an embedded traceback cut to its last line (the exception),
    unless --debug, CURATOR_DEBUG=1 or CURATOR_TRACEBACK=1."""
    text = str(exc)
    head, found, trace = text.partition("Traceback (most recent call last):")
    if not found or env_flag("CURATOR_TRACEBACK") or env_flag("CURATOR_DEBUG"):
        return text
    last = next((line.strip() for line in reversed(trace.splitlines()) if line.strip()), "")
    return f"{head.strip()} {last}{_DEBUG_HINT}"


def _entry() -> Any:  # pragma: no cover
    raise SystemExit(main())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
