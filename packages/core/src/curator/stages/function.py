"""``@processing_stage``: make a stage from a plain function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from curator.resources import Resources
from curator.stages.base import ProcessingStage, StageIO
from curator.tasks import Task

__all__ = ["processing_stage", "FunctionStage"]


class FunctionStage(ProcessingStage[Task, Task]):
    """A stage whose :meth:`process` calls a function ``fn(task) -> task | list | None``."""

    def __init__(self, fn: Callable[[Task], Any], *, name: str | None = None,
                 resources: Resources | None = None, batch_size: int = 1,
                 inputs: StageIO | None = None, outputs: StageIO | None = None,
                 worker_mode: str = "thread") -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function_stage")
        self.resources = resources or Resources(cpus=1.0)
        self.batch_size = batch_size
        self.worker_mode = worker_mode  # type: ignore[assignment]
        self._inputs = inputs or ([], [])
        self._outputs = outputs or ([], [])

    def inputs(self) -> StageIO:
        return self._inputs

    def outputs(self) -> StageIO:
        return self._outputs

    def process(self, task: Task) -> Any:
        return self.fn(task)

    def __call__(self, task: Task) -> Any:
        return self.fn(task)


def processing_stage(fn: Callable | None = None, *, name: str | None = None,
                     resources: Resources | None = None, batch_size: int = 1,
                     inputs: StageIO | None = None, outputs: StageIO | None = None,
                     worker_mode: str = "thread") -> Any:
    """Decorator turning ``fn(task) -> task | list[task] | None`` into a stage instance.

    Example::

        @processing_stage(name="WordCount", resources=Resources(cpus=0.5))
        def word_count(task: DocumentBatch) -> DocumentBatch: ...
    """

    def wrap(f: Callable) -> FunctionStage:
        return FunctionStage(f, name=name, resources=resources, batch_size=batch_size,
                             inputs=inputs, outputs=outputs, worker_mode=worker_mode)

    return wrap(fn) if fn is not None else wrap
