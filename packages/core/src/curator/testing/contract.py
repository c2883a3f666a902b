"""The contract every stage must satisfy, as one function plugin authors call in their tests."""

from __future__ import annotations

import cloudpickle

from curator.executors.base import ensure_setup, invoke_stage, release_stage
from curator.resources import Resources
from curator.stages.base import CompositeStage, ProcessingStage
from curator.stages.node_info import WorkerMetadata
from curator.tasks import Task

__all__ = ["check_stage_contract", "StageContractError"]


class StageContractError(AssertionError):
    """A stage breaks the stage contract; the message says which rule and how to fix it."""


def _fail(stage: object, rule: str) -> None:
    raise StageContractError(f"{type(stage).__name__}: {rule}")


def _check_io(stage: ProcessingStage, method: str) -> None:
    value = getattr(stage, method)()
    ok = (isinstance(value, tuple | list) and len(value) == 2
          and all(isinstance(part, list) and all(isinstance(x, str) for x in part)
                  for part in value))
    if not ok:
        _fail(stage, f"{method}() must return (list[str], list[str]) — task attributes and data "
                     f"columns — got {value!r}")


def _columns(task: Task) -> set[str] | None:
    names = getattr(task.data, "column_names", None)
    if names is None and isinstance(task.data, list) and task.data and isinstance(
            task.data[0], dict):
        names = list(task.data[0])
    return set(names) if names is not None else None


def check_stage_contract(stage: ProcessingStage,
                         sample_task: Task | None = None) -> list[Task]:
    """Check ``stage`` against the rules every stage follows; returns its outputs on
    ``sample_task`` (empty without one). Raises :class:`StageContractError` naming the rule.

    Checked: it is a ProcessingStage with a non-empty name, Resources and batch_size >= 1;
    inputs()/outputs() are (list[str], list[str]); with_() returns a changed copy and leaves
    the original alone; it survives cloudpickle before setup(); on ``sample_task`` it returns
    Tasks, raises nothing, and the outputs hold the columns it declares.
    """
    if not isinstance(stage, ProcessingStage):
        _fail(stage, "is not a curator.ProcessingStage instance")
    if not isinstance(stage.name, str) or not stage.name:
        _fail(stage, "name must be a non-empty string")
    if not isinstance(stage.resources, Resources):
        _fail(stage, f"resources must be a curator.Resources, got {stage.resources!r}")
    if not isinstance(stage.batch_size, int) or stage.batch_size < 1:
        _fail(stage, f"batch_size must be an int >= 1, got {stage.batch_size!r}")
    _check_io(stage, "inputs")
    _check_io(stage, "outputs")
    renamed = stage.with_(name=f"{stage.name}_copy", batch_size=stage.batch_size + 1)
    if renamed is stage or stage.name == renamed.name or renamed.batch_size == stage.batch_size:
        _fail(stage, "with_() must return a modified copy and leave the original unchanged")
    try:
        clone = cloudpickle.loads(cloudpickle.dumps(stage))
    except Exception as exc:
        _fail(stage, f"cannot be pickled before setup() ({exc}); create models and clients in "
                     f"setup(), not __init__")
    if isinstance(stage, CompositeStage):
        for part in stage.decompose():
            check_stage_contract(part)
        return []
    if sample_task is None:
        return []
    ensure_setup(clone, WorkerMetadata(worker_id="contract-check"))
    try:
        call = invoke_stage(clone, [sample_task], "contract-check")
    finally:
        release_stage(clone)
    if call.error:
        _fail(stage, f"raised on the sample task:\n{call.error}")
    declared = [c for c in stage.outputs()[1] if c != "*"]
    for out in call.outputs:
        cols = _columns(out)
        if cols is not None:
            missing = [c for c in declared if c not in cols]
            if missing:
                _fail(stage, f"declares output columns {missing} in outputs() but its output "
                             f"task {out.task_id!r} lacks them (has {sorted(cols)})")
    return call.outputs
