"""Pipeline: an ordered list of stages, validated before any data is read."""

from __future__ import annotations

from typing import Any

from curator.errors import PipelineValidationError
from curator.executors.base import BaseExecutor, PipelineFailedError, RunContext, RunResult
from curator.stages.base import CompositeStage, ProcessingStage
from curator.tasks import Task

__all__ = ["Pipeline", "PipelineFailedError"]


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
            raise_on_failure: bool = False, report: str | None = None,
            **executor_config: Any) -> RunResult:
        """Build and run the pipeline; returns the last stage's output tasks.

        Parameters:
            executor: an executor instance, a registered executor name ("local", "ray_data",
                "ray_actor_pool", "xenna"), or ``None`` for the local executor.
            initial_tasks: tasks for the first stage (default: the empty root task).
            checkpoint_dir: resume from an earlier run: finished source partitions are skipped;
                the others (including those with failed tasks) are redone, so earlier failed-task
                entries in ``rejected_dir`` move to ``.superseded/`` instead of being replayed.
            rejected_dir: where rejected records and failed tasks are written as JSONL.
            max_retries: retries of a failing task before it goes to the rejected sink.
            progress, summary: live progress line and final summary table on stderr.
            raise_on_failure: raise :class:`PipelineFailedError` (naming the failed tasks) when a
                task failed after its retries, instead of returning a result with ``ok`` false.
            report: write the run report there (``.json``; see ``docs/run-report.md``), also
                when tasks failed; ``result.report()`` returns the same as a dict.
            executor_config: options for the executor when it is given by name.

        The result's ``ok`` is false when a task failed after its retries (it is kept whole in
        the rejected sink: replay it with :meth:`replay`); records rejected by design
        (filtered, malformed) are counted in ``result.rejected`` and leave the run ok.
        """
        from curator.paths import absolute_uri, resolve_stage_paths  # noqa: PLC0415

        # relative paths mean the driver's working directory, wherever a stage runs
        stages = resolve_stage_paths(self.build())
        checkpoint_dir, rejected_dir = absolute_uri(checkpoint_dir), absolute_uri(rejected_dir)
        executor = self._executor(executor, executor_config)
        context = RunContext(pipeline_name=self.name, rejected_dir=rejected_dir,
                             checkpoint_dir=checkpoint_dir, max_retries=max_retries,
                             progress=progress, summary=summary)
        with self._claim(stages, checkpoint_dir, rejected_dir) as run_id:
            context.sink.run_id = run_id or ""
            if checkpoint_dir and rejected_dir:  # resuming redoes the failed partitions
                from curator.replay import supersede_failed  # noqa: PLC0415

                supersede_failed(rejected_dir)
            result = executor.execute(stages, initial_tasks, context=context)
        if result.spec is None:
            from curator.report import spec_of_stages  # noqa: PLC0415

            result.spec = spec_of_stages(self.name, self.description, stages)
        if report:
            from curator.report import write_report  # noqa: PLC0415

            write_report(result, report)
        return result.raise_on_failure() if raise_on_failure else result

    def replay(self, source: str | RunResult, executor: BaseExecutor | str | None = None, *,
               rejected_dir: str | None = None, max_retries: int = 1,
               progress: bool | None = None, summary: bool | None = None,
               raise_on_failure: bool = False, **executor_config: Any) -> RunResult:
        """Run the tasks that failed in an earlier run of this pipeline again, each from the
        stage where it failed (after the cause was fixed).

        Parameters:
            source: the earlier run's ``rejected_dir`` (failed tasks are kept there whole), or
                its :class:`RunResult` when its sink kept them in memory.
            executor, max_retries, progress, summary, raise_on_failure, executor_config: as for
                :meth:`run`.
            rejected_dir: where this replay's rejected records and failed tasks go (default:
                ``source`` when it is a directory). Entries of tasks that now succeed move to
                ``{source}/.replayed/``; a task that fails again gets its entry rewritten.

        Returns the replayed tasks' outputs as a :class:`RunResult` (``ok``, ``failed``).
        """
        from curator.paths import resolve_stage_paths  # noqa: PLC0415
        from curator.replay import load_failed, replay_run  # noqa: PLC0415

        stages = resolve_stage_paths(self.build())
        executor = self._executor(executor, executor_config)
        entries = load_failed(source)
        if rejected_dir is None and isinstance(source, str):
            rejected_dir = source
        context = RunContext(pipeline_name=self.name, rejected_dir=rejected_dir,
                             max_retries=max_retries, progress=progress, summary=summary)
        result = replay_run(stages, entries, executor, context,
                            claim=lambda part, ckpt: self._claim(part, ckpt, rejected_dir))
        return result.raise_on_failure() if raise_on_failure else result

    @staticmethod
    def _executor(executor: BaseExecutor | str | None,
                  executor_config: dict[str, Any]) -> BaseExecutor:
        if executor is None or isinstance(executor, str):
            return make_executor(executor or "local", executor_config)
        if executor_config:
            raise TypeError(f"executor options {sorted(executor_config)} are only accepted with "
                            f"an executor name; pass them to the executor instead")
        return executor

    def _claim(self, stages: list[ProcessingStage], checkpoint_dir: str | None,
               rejected_dir: str | None) -> Any:
        from curator.output_dir import claim_output_dirs  # writers' save modes and locks

        return claim_output_dirs(stages, checkpoint_dir=checkpoint_dir, rejected_dir=rejected_dir,
                                 pipeline=self.name)

    def __repr__(self) -> str:
        return f"Pipeline(name={self.name!r}, stages={[s.name for s in self.stages]})"


def make_executor(name: str, config: dict[str, Any] | None = None) -> BaseExecutor:
    """Instantiate the executor registered as ``name``."""
    from curator.plugins import get_registry

    entry = get_registry().get(name, kind="executor")
    return entry.obj(config or {})
