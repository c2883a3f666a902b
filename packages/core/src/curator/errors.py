"""Exceptions raised by Curator. Each says what went wrong and what to do."""

from __future__ import annotations

from typing import Any

__all__ = [
    "PipelineFailedError",
    "CuratorError",
    "ConfigError",
    "PipelineValidationError",
    "PluginError",
    "PluginConflictError",
    "UnknownNameError",
    "AmbiguousNameError",
]


class CuratorError(Exception):
    """Base class of every Curator error."""


class ConfigError(CuratorError, ValueError):
    """A stage, pipeline or spec is configured wrongly; raised before any data is read."""


class PipelineValidationError(ConfigError):
    """The stage chain is inconsistent (a stage reads a column nothing upstream produces)."""


class PluginError(CuratorError):
    """A plugin registered something invalid or failed to load."""


class PluginConflictError(PluginError):
    """Two plugins registered the same name."""


class UnknownNameError(ConfigError, KeyError):
    """A name is not registered by any loaded plugin."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class AmbiguousNameError(UnknownNameError, PluginConflictError):
    """Several plugins registered a name and none of them is built in: the message names every
    provider and the qualified ``plugin:Name`` that picks one."""


class PipelineFailedError(CuratorError):
    """Tasks failed for good during a run. ``Pipeline.run()`` raises it (as NeMo Curator raises)
    after all other work finished, the failed tasks were kept whole in the rejected sink and the
    report and summary were written; ``result`` is the run's ``RunResult`` and ``failed`` its
    failed tasks. Pass ``raise_on_failure=False`` to get the result (``result.ok`` false)
    instead."""

    def __init__(self, result: Any) -> None:  # a RunResult: errors sit below the run record
        self.result = result
        self.failed = list(result.failed)
        shown = "\n  ".join(str(f) for f in self.failed[:10])
        more = f"\n  … and {len(self.failed) - 10} more" if len(self.failed) > 10 else ""
        path = result.rejected.path
        where = (f"they are kept whole in {path}; fix the cause and run "
                 f"`curator replay {path}` (or Pipeline.replay)" if path else
                 "they are kept in error.result.failed; pass rejected_dir= to keep them on disk "
                 "for replay")
        super().__init__(f"{len(self.failed)} task(s) failed after their retries:\n  "
                         f"{shown}{more}\n{where}")
