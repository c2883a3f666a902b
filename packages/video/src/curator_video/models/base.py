"""ModelInterface: NeMo Curator's base class of the models a stage sets up on its worker."""

from __future__ import annotations

import abc

__all__ = ["ModelInterface"]


class ModelInterface(abc.ABC):
    """A model a stage loads on its worker (NeMo Curator's interface, as its video tutorials
    use it for custom models): :attr:`model_id_names` names the weights it needs (e.g. Hugging
    Face ids under the stage's ``model_dir``), :meth:`setup` loads them. How inference runs is
    up to the model."""

    @property
    @abc.abstractmethod
    def model_id_names(self) -> list[str]:
        """The ids of the weights this model loads."""

    @abc.abstractmethod
    def setup(self) -> None:
        """Load the weights and build what inference needs (called once per worker)."""
