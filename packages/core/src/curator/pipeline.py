"""Pipeline: an ordered list of stages, validated before any data is read."""

from __future__ import annotations

from typing import Any

from curator.errors import PipelineValidationError
from curator.executors.base import BaseExecutor, RunContext, RunResult
from curator.stages.base import CompositeStage, ProcessingStage
from curator.tasks import Task

__all__ = ["Pipeline"]


def _flatten(stages: list[ProcessingStage]) -> list[ProcessingStage]:
    out: list[ProcessingStage] = []
    for stage in stages:
        if isinstance(stage, CompositeStage):
            parts = stage.decompose()
            if not parts:
                raise PipelineValidationError(f"{stage.name}.decompose() returned no stages")
            out.extend(_flatten(parts))
        else:
            out.append(stage)
    return out


class Pipeline:
    """A linear chain of stages.

    Parameters:
        name: shown in progress, summaries and checkpoint files.
        description: free text for ``describe()``.
        stages: the stages in order (composite stages are expanded by :meth:`build`).
    """

    def __init__(self, name: str, description: str = "",
                 stages: list[ProcessingStage] | None = None) -> None:
        self.name = name
        self.description = description
        self.stages: list[ProcessingStage] = []
        self._built: list[ProcessingStage] | None = None
        for stage in stages or []:
            self.add_stage(stage)

    def add_stage(self, stage: ProcessingStage) -> Pipeline:
        """Append a stage; returns the pipeline so calls can be chained."""
        if not isinstance(stage, ProcessingStage):
            hint = ""
            if isinstance(stage, type) and issubclass(stage, ProcessingStage):
                hint = f" (you passed the class {stage.__name__}; instantiate it)"
            raise TypeError(f"Pipeline {self.name!r}: add_stage() needs a ProcessingStage, got "
                            f"{type(stage).__name__}{hint}")
        self.stages.append(stage)
        self._built = None
        return self

    def build(self) -> list[ProcessingStage]:
        """Expand composite stages and check the chain: every column a stage reads must be
        produced upstream. Raises :class:`PipelineValidationError` naming the stage, the column
        and what upstream produces. Reads no data."""
        if not self.stages:
            raise PipelineValidationError(f"Pipeline {self.name!r} has no stages")
        stages = _flatten(self.stages)
        names = [s.name for s in stages]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:  # names key statistics, rejected files and checkpoints
            seen: dict[str, int] = {}
            renamed = []
            for s in stages:
                if s.name in dupes:
                    seen[s.name] = seen.get(s.name, 0) + 1
                    s = s.with_(name=f"{s.name}_{seen[s.name]}")
                renamed.append(s)
            stages = renamed
        produced: dict[str, str] = {}
        open_schema = False
        for index, stage in enumerate(stages):
            attrs, cols = stage.inputs()
            missing = [c for c in cols if c not in produced]
            if missing and index > 0 and not open_schema:
                have = ", ".join(f"{c!r} (from {s})" for c, s in produced.items()) or "nothing"
                raise PipelineValidationError(
                    f"stage {index} {stage.name!r} reads column {missing[0]!r}, which no earlier "
                    f"stage produces. Upstream produces: {have}. Add a stage that writes "
                    f"{missing[0]!r}, or change the stage's field parameter.")
            _, out_cols = stage.outputs()
            for col in out_cols:
                if col == "*":
                    open_schema = True
                else:
                    produced.setdefault(col, stage.name)
        self._built = stages
        return stages

    def describe(self) -> str:
        """A readable description of the (built) pipeline: stages, resources, inputs, outputs."""
        stages = self._built or self.build()
        lines = [f"Pipeline {self.name!r}: {self.description}".rstrip(": "),
                 f"{len(stages)} stages:"]
        for i, s in enumerate(stages):
            r = s.resources
            res = f"cpus={r.cpus:g}" + (f", gpus={r.gpus:g}" if r.gpus else "") + (
                f", gpu_memory_gb={r.gpu_memory_gb:g}" if r.gpu_memory_gb else "")
            _, ins = s.inputs()
            _, outs = s.outputs()
            lines.append(f"  {i}. {s.name} [{type(s).__name__}] ({res}, batch_size={s.batch_size}"
                         f", {s.worker_mode})")
            if ins or outs:
                lines.append(f"       reads {ins or '-'}  writes {outs or '-'}")
        return "\n".join(lines)

    def run(self, executor: BaseExecutor | str | None = None,
            initial_tasks: list[Task] | None = None, *, checkpoint_dir: str | None = None,
            rejected_dir: str | None = None, max_retries: int = 1,
            progress: bool | None = None, summary: bool | None = None,
            **executor_config: Any) -> RunResult:
        """Build and run the pipeline; returns the last stage's output tasks.

        Parameters:
            executor: an executor instance, a registered executor name ("local", "ray_data",
                "ray_actor_pool"), or ``None`` for the local executor.
            initial_tasks: tasks for the first stage (default: the empty root task).
            checkpoint_dir: resume from an earlier run: finished source partitions are skipped.
            rejected_dir: where rejected records and failed tasks are written as JSONL.
            max_retries: retries of a failing task before it goes to the rejected sink.
            progress, summary: live progress line and final summary table on stderr.
            executor_config: options for the executor when it is given by name.
        """
        stages = self.build()
        if executor is None or isinstance(executor, str):
            executor = make_executor(executor or "local", executor_config)
        elif executor_config:
            raise TypeError(f"executor options {sorted(executor_config)} are only accepted with "
                            f"an executor name; pass them to the executor instead")
        context = RunContext(pipeline_name=self.name, rejected_dir=rejected_dir,
                             checkpoint_dir=checkpoint_dir, max_retries=max_retries,
                             progress=progress, summary=summary)
        return executor.execute(stages, initial_tasks, context=context)

    def __repr__(self) -> str:
        return f"Pipeline(name={self.name!r}, stages={[s.name for s in self.stages]})"


def make_executor(name: str, config: dict[str, Any] | None = None) -> BaseExecutor:
    """Instantiate the executor registered as ``name``."""
    from curator.plugins import get_registry

    entry = get_registry().get(name, kind="executor")
    return entry.obj(config or {})
