"""Exceptions raised by Curator. Each says what went wrong and what to do."""

from __future__ import annotations

__all__ = [
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
