"""What a plugin tells ``curator migrate`` (and NeMo's test shim) about NeMo Curator's names.

A package returns one :class:`MigrationRules` from the hook ``curator_migrate_rules``; core
merges every installed plugin's rules (:func:`merge_rules`) and knows no package's rows itself::

    from curator import hookimpl
    from curator.plugins.migration import MigrationRules

    @hookimpl
    def curator_migrate_rules():
        return MigrationRules(
            modules=(("nemo_curator.stages.audio", ("curator_audio", "curator_audio.asr")),),
            not_offered={"nemo_curator.stages.audio.tagging": "needs NeMo's toolkit"},
        )
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["MigrationRules", "MergedRules", "merge_rules", "CORE_MODULES"]

CORE_MODULES = ("curator", "curator.stages", "curator.dedup", "curator.utils", "curator.tasks")
"""Core's modules that hold NeMo's shared names: packages search them after their own."""


@dataclass(frozen=True)
class MigrationRules:
    """One package's NeMo mappings.

    ``modules``: ``(NeMo module prefix, Curator modules)`` pairs; a name imported from a NeMo
    module is looked up in the Curator modules of its longest matching prefix, in order (the first
    one stands for the module itself in ``import nemo_curator.x as m``). ``renames``:
    ``"nemo.module.Name" -> (Curator module, Curator name)`` where the names differ.
    ``not_offered``: NeMo module prefix or dotted name -> why there is no counterpart (reported by
    ``curator migrate``). ``shim``: exact NeMo module -> the Curator modules whose names it exposes
    to NeMo's own unit tests (``compat/nemo_shim``; later modules win a clash)."""

    modules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    renames: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    not_offered: Mapping[str, str] = field(default_factory=dict)
    shim: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for prefix, mods in self.modules:
            if not prefix.startswith("nemo_curator") or isinstance(mods, str) or not mods:
                raise ValueError(f"MigrationRules.modules: ({prefix!r}, {mods!r}) must pair a "
                                 f"nemo_curator module with a non-empty tuple of Curator modules")
        for name, target in self.renames.items():
            if not (isinstance(target, tuple) and len(target) == 2):
                raise ValueError(f"MigrationRules.renames[{name!r}] must be (module, name)")

    def curator_modules(self) -> set[str]:
        """Every Curator module these rules name (each must import)."""
        out = {m for _, mods in self.modules for m in mods}
        out |= {mod for mod, _ in self.renames.values()}
        return out | {m for mods in self.shim.values() for m in mods}


@dataclass(frozen=True)
class MergedRules:
    """Every installed plugin's rules together; ``modules`` longest prefix first."""

    modules: tuple[tuple[str, tuple[str, ...]], ...]
    renames: dict[str, tuple[str, str]]
    not_offered: dict[str, str]
    shim: dict[str, tuple[str, ...]]

    def candidates(self, nemo_module: str) -> tuple[str, ...]:
        """The Curator modules searched for names of ``nemo_module`` (longest prefix wins)."""
        for prefix, mods in self.modules:
            if nemo_module == prefix or nemo_module.startswith(prefix + "."):
                return mods
        return ()

    def all_modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for _, mods in self.modules for m in mods))

    def why_not_offered(self, name: str) -> str:
        """Why the NeMo name (dotted) has no counterpart, from the longest matching key."""
        best = ""
        for key in self.not_offered:
            if (name == key or name.startswith(key + ".")) and len(key) > len(best):
                best = key
        return self.not_offered[best] if best else ""

    def nemo_module_names(self) -> frozenset[str]:
        """Every component of every NeMo module the rules name (``client``, ``synthetic``). The
        last part of a ``not_offered`` key may be a class or function, so only its parents
        count (a not-offered module itself is reported, not imported)."""
        keys = [p for p, _ in self.modules] + list(self.shim)
        keys += [k.rsplit(".", 1)[0] for k in self.not_offered]
        return frozenset(part for k in keys for part in k.split(".")[1:])


def merge_rules(rules: Iterable[MigrationRules]) -> MergedRules:
    """Merges plugins' rules: module lists of one prefix are concatenated (in plugin order);
    a rename or reason declared twice keeps the first."""
    modules: dict[str, list[str]] = {}
    renames: dict[str, tuple[str, str]] = {}
    not_offered: dict[str, str] = {}
    shim: dict[str, list[str]] = {}
    for r in rules:
        for prefix, mods in r.modules:
            bucket = modules.setdefault(prefix, [])
            bucket += [m for m in mods if m not in bucket]
        for k, v in r.renames.items():
            renames.setdefault(k, v)
        for k, v in r.not_offered.items():
            not_offered.setdefault(k, v)
        for k, mods in r.shim.items():
            bucket = shim.setdefault(k, [])
            bucket += [m for m in mods if m not in bucket]
    ordered = sorted(modules.items(), key=lambda kv: (-len(kv[0]), kv[0]))
    return MergedRules(tuple((p, tuple(m)) for p, m in ordered), renames, not_offered,
                       {k: tuple(v) for k, v in shim.items()})
