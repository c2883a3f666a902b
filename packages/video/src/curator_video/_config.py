"""Parameter checks shared by the video stages (errors name the stage and the parameter)."""

from __future__ import annotations

from typing import Any

from curator.errors import ConfigError

__all__ = ["coerce_numbers"]


def coerce_numbers(stage: Any, *names: str, kind: type = float) -> None:
    """Turn ``stage.<name>`` into ``kind`` (``None`` stays ``None``), so values from YAML such as
    ``"1e9"`` work; a value that is no number raises ``ValueError`` naming stage and parameter."""
    for name in names:
        value = getattr(stage, name)
        if value is None:
            continue
        try:
            setattr(stage, name, kind(value))
        except (TypeError, ValueError):
            raise ConfigError(f"{stage.name}: {name} must be a number, got {value!r}") from None
