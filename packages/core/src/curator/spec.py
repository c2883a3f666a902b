"""YAML/JSON pipeline specs that refer only to registered names (no arbitrary imports).

Format::

    name: my-pipeline
    description: optional
    executor: local                      # or {name: ray_data, config: {...}}
    run: {rejected_dir: rejected/, checkpoint_dir: ckpt/, max_retries: 1}   # optional
    prepare: python make_data.py         # optional: the command that creates the spec's input
                                         # data; `curator run` names it when that data is missing
    stages:
      - stage: JsonlReader               # a registered stage
        file_paths: data/*.jsonl
      - stage: ScoreFilter
        filter_obj: {filter: WordCountFilter, min_words: 50}   # nested registered component
        with: {batch_size: 4, resources: {cpus: 1}}            # optional .with_(...)
      - writer: demo:JsonlWriter        # ``plugin:Name`` picks one provider of a clashed name

A dict with one of the keys in :data:`COMPONENT_KEYS` is a registered component; its other keys are
constructor arguments, checked against the constructor's annotated types (pydantic, lax mode: the
string ``"50"`` becomes ``50`` for an ``int``; ``"eighty"`` is a :class:`ConfigError`) before any
data is read. YAML aliases are bounded (:data:`MAX_ALIAS_EXPANSION` extra nodes) and recursive
anchors are refused, so a hostile spec fails in milliseconds instead of hanging.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import json
import logging
from pathlib import Path
from typing import Any

import yaml

from curator.errors import ConfigError, UnknownNameError
from curator.executors.base import BaseExecutor
from curator.params import check_parameter_types
from curator.pipeline import Pipeline
from curator.plugins import Registry, get_registry
from curator.plugins.kinds import KINDS
from curator.resources import Resources
from curator.stages.base import ProcessingStage

__all__ = ["COMPONENT_KEYS", "MAX_ALIAS_EXPANSION", "load_spec", "apply_overrides",
           "pipeline_from_spec", "executor_from_spec", "build_component", "check_parameter_types",
           "create_pipeline_from_yaml"]

COMPONENT_KEYS: tuple[str, ...] = ("stage", *(k.name for k in KINDS if k.spec_key
                                              and k.name not in ("stage", "executor")))
"""YAML keys naming a registered component, from the table of kinds (``stage`` accepts any)."""
_TOP_KEYS = {"name", "description", "executor", "stages", "run", "prepare"}
_RUN_KEYS = {"rejected_dir", "checkpoint_dir", "max_retries", "progress", "summary"}
MAX_ALIAS_EXPANSION = 100_000
"""How many nodes YAML aliases may add to a spec when expanded (a billion-laughs guard)."""


class _BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses recursive anchors and alias expansion beyond
    :data:`MAX_ALIAS_EXPANSION` nodes, checked on the node graph before anything is built."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_node_graph(node)
        return super().construct_document(node)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_node_graph(root: yaml.Node) -> None:
    """Count the nodes the document expands to (each alias counts its whole target again) in
    one memoised pass over the distinct nodes; a node inside its own subtree is a cycle."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ConfigError(f"recursive YAML anchor (an alias inside its own anchor){_at(node)};"
                              f" a spec must be a tree — repeat the value instead")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    expanded = sizes[id(root)]
    if expanded - len(sizes) > MAX_ALIAS_EXPANSION:
        raise ConfigError(f"YAML aliases expand the spec to {expanded:,} nodes from {len(sizes):,}"
                          f" written ones (limit: {MAX_ALIAS_EXPANSION:,} added by aliases); "
                          f"this looks like an alias bomb — write the values out instead")


def _at(node: yaml.Node) -> str:
    mark = node.start_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def load_spec(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON spec file into a dict (checked to have a ``stages`` list).
    Raises :class:`ConfigError` for invalid syntax, recursive anchors and alias bombs."""
    text = Path(path).read_text()
    try:
        if str(path).endswith(".json"):
            spec = json.loads(text)
        else:
            spec = yaml.load(text, Loader=_BoundedLoader)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid YAML/JSON: {exc}") from exc
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a pipeline spec") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("stages"), list):
        raise ConfigError(f"{path}: a spec is a mapping with a 'stages' list")
    return spec


def apply_overrides(spec: dict[str, Any], assignments: list[str]) -> dict[str, Any]:
    """Apply ``key.path=value`` overrides (values parsed as YAML). List items are addressed by
    index or, for ``stages``, by the stage's registered name: ``stages.WordCountFilter.min_words``
    or ``stages.1.filter_obj.min_words``."""
    spec = copy.deepcopy(spec)
    for assignment in assignments:
        if "=" not in assignment:
            raise ConfigError(f"--set {assignment!r}: expected key.path=value")
        key, raw = assignment.split("=", 1)
        try:
            value = yaml.load(raw, Loader=_BoundedLoader) if raw != "" else ""
        except (yaml.YAMLError, ConfigError) as exc:
            raise ConfigError(f"--set {key}: {exc}") from None
        parts = key.strip().split(".")
        node: Any = spec
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(node, list):
                idx = _list_index(node, part, key)
                if last:
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ConfigError(f"--set {key}: {'.'.join(parts[:i])} is not a mapping or list")
    return spec


def _list_index(items: list, part: str, key: str) -> int:
    if part.lstrip("-").isdigit():
        idx = int(part)
        if -len(items) <= idx < len(items):
            return idx
        raise ConfigError(f"--set {key}: index {idx} out of range (there are {len(items)})")
    for idx, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        names = [str(item[k]) for k in COMPONENT_KEYS if k in item]
        if part in (item.get("name"), *names, *(n.rpartition(":")[2] for n in names)):
            return idx  # ``plugin:Name`` items also answer to ``Name``
    raise ConfigError(f"--set {key}: no list item named {part!r}")


def _component_key(d: dict[str, Any]) -> str | None:
    keys = [k for k in COMPONENT_KEYS if k in d]
    if len(keys) > 1:
        raise ConfigError(f"component {d!r} has several of {keys}; use exactly one")
    return keys[0] if keys else None


def _resolve(value: Any, registry: Registry, where: str) -> Any:
    if isinstance(value, dict):
        if _component_key(value):
            return build_component(value, registry, where)
        return {k: _resolve(v, registry, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, registry, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def build_component(d: dict[str, Any], registry: Registry | None = None,
                    where: str = "spec") -> Any:
    """Instantiate the registered component described by ``d`` (see the module docstring)."""
    registry = registry or get_registry()
    key = _component_key(d)
    if key is None:
        raise ConfigError(f"{where}: expected one of {list(COMPONENT_KEYS)} naming a registered "
                          f"component, got keys {sorted(d)}")
    name = d[key]
    kind = None if key == "stage" else key
    try:
        entry = registry.get(str(name), kind=kind)
    except UnknownNameError as exc:
        raise type(exc)(f"{where}: {exc}") from None  # AmbiguousNameError stays one
    label = f"{where} ({name})"
    params = {k: v for k, v in d.items() if k not in (key, "with")}
    params = {k: _resolve(v, registry, f"{label}.{k}") for k, v in params.items()}
    cls = entry.obj
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        accepts_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        known = [p for p in sig.parameters if p not in ("self",)]
        for p in params:
            if p not in sig.parameters and not accepts_any:
                close = difflib.get_close_matches(p, known, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ConfigError(f"{label}: unknown parameter {p!r}.{hint} "
                                  f"Parameters: {', '.join(known) or 'none'}")
        try:
            sig.bind(**params)
        except TypeError as exc:
            raise ConfigError(f"{label}: {exc}. Parameters: {', '.join(known)}") from None
        params = check_parameter_types(cls, params, label)
    try:
        obj = cls(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{label}: {exc}") from exc
    options = d.get("with")
    if options:
        if not isinstance(obj, ProcessingStage):
            raise ConfigError(f"{label}: 'with' applies only to stages")
        options = dict(options)
        if isinstance(options.get("resources"), dict):
            try:
                options["resources"] = Resources(**options["resources"])
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{label}: with.resources: {exc}") from exc
        try:
            obj = obj.with_(**options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{label}: with: {exc}") from exc
    return obj


def pipeline_from_spec(spec: dict[str, Any], registry: Registry | None = None) -> Pipeline:
    """Build (and validate) a :class:`Pipeline` from a spec dict."""
    registry = registry or get_registry()
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"spec: unknown top-level keys {sorted(unknown)}; allowed: "
                          f"{sorted(_TOP_KEYS)}")
    stages = []
    for i, item in enumerate(spec.get("stages") or []):
        if isinstance(item, str):
            item = {"stage": item}
        if not isinstance(item, dict):
            raise ConfigError(f"stages[{i}]: expected a mapping, got {item!r}")
        if _component_key(item) is None:
            raise ConfigError(f"stages[{i}]: needs a 'stage: NAME' key, got {sorted(item)}")
        stage = build_component(item, registry, where=f"stages[{i}]")
        if not isinstance(stage, ProcessingStage):
            name = item[_component_key(item)]
            raise ConfigError(f"stages[{i}]: {name!r} is a {type(stage).__name__}, not a stage; "
                              f"use it inside a stage (e.g. ScoreFilter's filter_obj / Modify's "
                              f"modifier_fn)")
        stages.append(stage)
    pipeline = Pipeline(spec.get("name", "pipeline"), spec.get("description", ""), stages)
    pipeline.build()
    return pipeline


def executor_from_spec(spec: dict[str, Any], name: str | None = None,
                       registry: Registry | None = None) -> BaseExecutor:
    """The executor named by ``name`` or by the spec's ``executor`` key (default: local)."""
    registry = registry or get_registry()
    raw = spec.get("executor") or "local"
    config: dict[str, Any] = {}
    if isinstance(raw, dict):
        config = dict(raw.get("config") or {})
        raw = raw.get("name", "local")
    if name and name != raw:
        config = {}
    entry = registry.get(name or raw, kind="executor")
    try:
        return entry.obj(config)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"executor {entry.name}: {exc}") from exc


def run_options(spec: dict[str, Any]) -> dict[str, Any]:
    """The ``run:`` section (rejected_dir, checkpoint_dir, max_retries, progress, summary)."""
    opts = dict(spec.get("run") or {})
    unknown = set(opts) - _RUN_KEYS
    if unknown:
        raise ConfigError(f"spec run: unknown keys {sorted(unknown)}; allowed {sorted(_RUN_KEYS)}")
    return opts


def _from_hydra(value: Any, where: str) -> Any:
    """NeMo's Hydra form (``{_target_: a.b.Name, ...}``) in this module's form
    (``{stage: Name, ...}``): the class is looked up among the registered names by the last part
    of ``_target_``, so a config still imports nothing."""
    if isinstance(value, list):
        return [_from_hydra(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out = {k: _from_hydra(v, f"{where}.{k}") for k, v in value.items() if k != "_target_"}
    if "_target_" not in value:
        return out
    extra = sorted(k for k in out if k.startswith("_") and k.endswith("_"))
    if extra:
        raise ConfigError(f"{where}: Hydra keys {extra} are not supported; give the component's "
                          f"parameters directly")
    if "resources" in out and isinstance(out["resources"], dict):
        out.setdefault("with", {})["resources"] = out.pop("resources")
    return {"stage": str(value["_target_"]).rsplit(".", 1)[-1], **out}


def create_pipeline_from_yaml(cfg: Any, *, log_config: bool = True) -> Pipeline | Any:
    """NeMo Curator's ``create_pipeline_from_yaml``: a :class:`Pipeline` from a config with
    ``stages`` (each ``{_target_: ..., **params}``, ``resources`` applied with ``.with_()``),
    or the one component of ``workflow`` (a one-item list). ``cfg`` is a mapping or an
    OmegaConf ``DictConfig``. Unlike Hydra, ``_target_`` is not imported: its last part must
    be a registered name (``curator list``), so a config cannot run arbitrary code."""
    if not isinstance(cfg, dict) and hasattr(cfg, "_get_node"):  # an OmegaConf DictConfig
        from omegaconf import OmegaConf
        cfg = OmegaConf.to_container(cfg, resolve=True)
    if not isinstance(cfg, dict):
        raise ConfigError(f"create_pipeline_from_yaml: expected a mapping or DictConfig, got "
                          f"{type(cfg).__name__}")
    if log_config:
        logging.getLogger(__name__).info("pipeline config: %s", json.dumps(cfg, default=str))
    if "stages" in cfg and "workflow" in cfg:
        raise ConfigError("create_pipeline_from_yaml: the config defines both stages and "
                          "workflow; define one of them")
    if "stages" in cfg:
        return pipeline_from_spec({"name": "yaml_pipeline",
                                   "description": "Create and execute a pipeline from a YAML file",
                                   "stages": _from_hydra(list(cfg["stages"]), "stages")})
    if "workflow" in cfg:
        if len(cfg["workflow"]) != 1:
            raise ConfigError("create_pipeline_from_yaml: define exactly one workflow")
        return build_component(_from_hydra(cfg["workflow"][0], "workflow[0]"),
                               where="workflow[0]")
    raise ConfigError("create_pipeline_from_yaml: the config has neither stages nor workflow; "
                      "define stages to add to a pipeline or one workflow to run")
