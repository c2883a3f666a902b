"""Model and server configurations of :class:`~curator_llm.serve.InferenceServer` (NeMo
Curator's ``nemo_curator.core.serve.base`` names)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["InferenceBackend", "BaseModelConfig", "BaseServerConfig"]


class InferenceBackend(ABC):
    """What starts and stops the model server processes of one :class:`InferenceServer`."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...


@dataclass
class BaseModelConfig:
    """One served model: ``model_identifier`` (what the backend loads: a local file or
    directory), ``model_name`` (the name clients ask for; default: the identifier)."""

    model_identifier: str
    model_name: str | None = None
    runtime_env: dict[str, Any] = field(default_factory=dict)

    @property
    def resolved_model_name(self) -> str:
        return self.model_name or self.model_identifier


@dataclass
class BaseServerConfig:
    """Server-level settings; subclasses name the model configs they accept."""

    model_configs: ClassVar[tuple[type[BaseModelConfig], ...]] = ()
