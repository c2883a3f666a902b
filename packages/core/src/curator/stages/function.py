"""``@processing_stage``: make a stage from a plain function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from curator.resources import Resources
from curator.stages.base import ProcessingStage, StageIO
from curator.tasks import Task

__all__ = ["processing_stage", "FunctionStage"]


class FunctionStage(ProcessingStage[Task, Task]):
    """A stage whose :meth:`process` calls a function ``fn(task) -> task | list | None``.

    Output tasks that are new objects get the input task's metadata (source files, partition)
    and stage records merged under their own, as NeMo Curator copies them."""

    def __init__(self, fn: Callable[[Task], Any], *, name: str | None = None,
                 resources: Resources | dict | None = None, batch_size: int | None = 1,
                 inputs: StageIO | None = None, outputs: StageIO | None = None,
                 worker_mode: str = "thread") -> None:
        if isinstance(resources, dict):
            resources = Resources(**resources)
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function_stage")
        self.resources = resources or Resources(cpus=1.0)
        self.batch_size = batch_size or 1
        self.worker_mode = worker_mode  # type: ignore[assignment]
        self._inputs = inputs or ([], [])
        self._outputs = outputs or ([], [])

    def inputs(self) -> StageIO:
        return self._inputs

    def outputs(self) -> StageIO:
        return self._outputs

    def process(self, task: Task) -> Any:
        out = self.fn(task)
        for t in out if isinstance(out, list) else [out]:
            if isinstance(t, Task) and t is not task:
                t.metadata = {**task.metadata, **t.metadata}
                if not t.stage_perf:
                    t.stage_perf = list(task.stage_perf)
        return out

    def __call__(self, task: Task) -> Any:
        return self.fn(task)


def _check_signature(fn: Callable, name: str | None) -> None:
    """A stage function takes exactly one argument, the task (NeMo Curator's rule): fail when
    the function is decorated, not when the pipeline runs."""
    label = name or getattr(fn, "__name__", repr(fn))
    if not callable(fn):
        raise TypeError(f"processing_stage {label!r}: expected a function, got "
                        f"{type(fn).__name__}")
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: trust them
        return
    if len(params) != 1 or params[0].kind in (params[0].KEYWORD_ONLY, params[0].VAR_KEYWORD):
        got = ", ".join(str(p) for p in params) or "no parameters"
        raise ValueError(f"processing_stage {label!r}: the function must accept exactly one "
                         f"positional argument (the input task), e.g. def {label}(task): ...; "
                         f"it takes ({got})")


def processing_stage(fn: Callable | None = None, *, name: str | None = None,
                     resources: Resources | dict | None = None, batch_size: int | None = 1,
                     inputs: StageIO | None = None, outputs: StageIO | None = None,
                     worker_mode: str = "thread") -> Any:
    """Decorator turning ``fn(task) -> task | list[task] | None`` into a stage instance.

    The function must take exactly one positional argument (checked at decoration time, a
    ``ValueError`` otherwise). ``get_stage_class(name)`` then returns a class that builds the
    same stage, as in NeMo Curator.

    Example::

        @processing_stage(name="WordCount", resources=Resources(cpus=0.5))
        def word_count(task: DocumentBatch) -> DocumentBatch: ...
    """

    def wrap(f: Callable) -> FunctionStage:
        _check_signature(f, name)
        stage = FunctionStage(f, name=name, resources=resources, batch_size=batch_size,
                              inputs=inputs, outputs=outputs, worker_mode=worker_mode)

        def init(self: FunctionStage) -> None:
            FunctionStage.__init__(self, f, name=stage.name, resources=stage.resources,
                                   batch_size=stage.batch_size, inputs=inputs, outputs=outputs,
                                   worker_mode=worker_mode)

        # registers the name for get_stage_class (the returned stage stays a plain FunctionStage
        # so that it pickles by reference)
        type(stage.name, (FunctionStage,), {"__init__": init, "__module__": f.__module__})
        return stage

    return wrap(fn) if fn is not None else wrap
