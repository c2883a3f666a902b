"""Pipeline: an ordered list of stages, validated before any data is read."""

from __future__ import annotations

from typing import Any

from curator.errors import PipelineFailedError, PipelineValidationError
from curator.executors.base import BaseExecutor
from curator.run.context import RunContext
from curator.run.result import RunResult
from curator.stages.base import CompositeStage, ProcessingStage, StageInputSpecs, input_columns
from curator.tasks import EmptyTask, Task

__all__ = ["Pipeline", "PipelineFailedError", "assign_root_task_ids"]


def assign_root_task_ids(initial_tasks: list[Task]) -> list[Task]:
    """Give user-provided initial tasks NeMo Curator's root ids: each is a child of the implicit
    root ``"0"`` (the :class:`EmptyTask`'s id) by position, ``"0_0"``, ``"0_1"``, …; empty tasks
    are skipped. :meth:`Pipeline.run` applies it only to tasks given without an id."""
    for i, task in enumerate(initial_tasks):
        if not isinstance(task, EmptyTask):
            task._set_task_id("0", i)
    return initial_tasks


def _input_lines(specs: StageInputSpecs) -> list[str]:
    """NeMo Curator's ``describe()`` lines for a stage's input spec (a tuple or a dict per task
    type)."""
    if isinstance(specs, tuple):
        attrs, cols = specs
        body = ([f"    Required attributes: {', '.join(attrs)}"] if attrs else []) + (
            [f"    Required columns: {', '.join(cols)}"] if cols else [])
        return ["  Inputs:", *body] if body else []
    lines: list[str] = []
    for task_type, (attrs, cols) in specs.items():
        if attrs or cols:
            lines.append(f"    {task_type.__name__}:")
            if attrs:
                lines.append(f"      Required attributes: {', '.join(attrs)}")
            if cols:
                lines.append(f"      Required columns: {', '.join(cols)}")
    return ["  Inputs:", *lines] if lines else []


def _assign_source_sink(stages: list[ProcessingStage]) -> None:
    """NeMo Curator's roles: at most one stage marked ``is_source_stage`` (and one
    ``is_sink_stage``); with none marked, the first stage is the source and the last the sink."""
    for flag, default in (("is_source_stage", stages[0]), ("is_sink_stage", stages[-1])):
        marked = [s for s in stages if getattr(s, flag, False)]
        if len(marked) > 1:
            kind = flag.split("_")[1]
            raise PipelineValidationError(
                f"Pipeline has multiple {kind} stages marked: {[s.name for s in marked]}. At "
                f"most one is supported; unset {flag} on the others")
        if not marked:
            setattr(default, flag, True)


def _flatten(stages: list[ProcessingStage]) -> list[ProcessingStage]:
    out: list[ProcessingStage] = []
    for stage in stages:
        if isinstance(stage, CompositeStage):
            parts = stage.decompose_and_apply_with()
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
        config: NeMo Curator's pipeline-wide settings, kept as ``pipeline.config`` (NeMo's
            executors do not read it either; executor options go to the executor).
    """

    def __init__(self, name: str, description: str | None = "",
                 stages: list[ProcessingStage] | None = None,
                 config: dict[str, Any] | None = None) -> None:
        self.name = name
        self.description = description or ""
        self.config: dict[str, Any] = dict(config or {})
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
        _assign_source_sink(stages)
        produced: dict[str, str] = {}
        open_schema = False
        for index, stage in enumerate(stages):
            cols = input_columns(stage)
            missing = [c for c in cols if c not in produced]
            if missing and index > 0 and not open_schema:
                have = ", ".join(f"{c!r} (from {s})" for c, s in produced.items()) or "nothing"
                raise PipelineValidationError(
                    f"stage {index} {stage.name!r} reads column {missing[0]!r}, which no earlier "
                    f"stage produces. Upstream produces: {have}. Add a stage that writes "
                    f"{missing[0]!r}, or change the stage's field parameter.")
            if index == 0:  # run on given tasks: what the first stage reads is in the data
                for col in cols:
                    produced.setdefault(col, f"the input of {stage.name}")
            _, out_cols = stage.outputs()
            for col in out_cols:
                if col == "*":
                    open_schema = True
                else:
                    produced.setdefault(col, stage.name)
        self._built = stages
        return stages

    def describe(self) -> str:
        """A readable description of the (built) pipeline, in NeMo Curator's layout: per stage
        its resources, batch size, worker mode, input requirements (per task type when
        ``inputs()`` returns a dict) and outputs."""
        stages = self._built or self.build()
        lines = [f"Pipeline: {self.name}",
                 f"Description: {self.description or 'No description provided'}",
                 f"Stages: {len(stages)}", ""]
        for i, s in enumerate(stages):
            r = s.resources
            lines.append(f"Stage {i + 1}: {s.name} [{type(s).__name__}]")
            lines.append(f"  Resources: {r.cpus:g} CPUs" + (
                f", {r.gpus:g} GPUs" if r.gpus else "") + (
                f", {r.gpu_memory_gb:g} GB GPU memory" if r.gpu_memory_gb else ""))
            lines.append(f"  Batch size: {s.batch_size}, workers: {s.worker_mode}")
            lines.extend(_input_lines(s.inputs()))
            out_attrs, out_cols = s.outputs()
            if out_attrs or out_cols:
                lines.append("  Outputs:")
                if out_attrs:
                    lines.append(f"    Output attributes: {', '.join(out_attrs)}")
                if out_cols:
                    lines.append(f"    Output columns: {', '.join(out_cols)}")
        return "\n".join(lines)

    def run(self, executor: BaseExecutor | str | None = None,
            initial_tasks: list[Task] | None = None, checkpoint_path: str | None = None, *,
            checkpoint_dir: str | None = None,
            rejected_dir: str | None = None, max_retries: int = 1,
            progress: bool | None = None, summary: bool | None = None,
            raise_on_failure: bool = True, report: str | None = None,
            **executor_config: Any) -> RunResult:
        """Build and run the pipeline; returns the last stage's output tasks.

        Parameters:
            executor: an executor instance, a registered executor name ("local", "ray_data",
                "ray_actor_pool", "xenna"), or ``None`` for the local executor.
            initial_tasks: tasks for the first stage (default: the empty root task); tasks
                given without an id get NeMo Curator's root ids (:func:`assign_root_task_ids`).
            checkpoint_path: NeMo Curator's name for ``checkpoint_dir``.
            checkpoint_dir: resume from an earlier run: finished source partitions are skipped;
                the others (including those with failed tasks) are redone, so earlier failed-task
                entries in ``rejected_dir`` move to ``.superseded/`` instead of being replayed.
            rejected_dir: where rejected records and failed tasks are written as JSONL.
            max_retries: retries of a failing task before it goes to the rejected sink.
            progress, summary: live progress line and final summary table on stderr.
            raise_on_failure: when a task failed after its retries, raise
                :class:`PipelineFailedError` (naming the failed tasks; ``error.result`` is the
                result) once all other work finished and the report and summary were written,
                as NeMo Curator raises. ``False`` returns the result with ``ok`` false.
            report: write the run report there (``.json``; see ``docs/run-report.md``), also
                when tasks failed; ``result.report()`` returns the same as a dict.
            executor_config: options for the executor when it is given by name.

        The result's ``ok`` is false when a task failed after its retries (it is kept whole in
        the rejected sink: replay it with :meth:`replay`); records rejected by design
        (filtered, malformed) are counted in ``result.rejected`` and leave the run ok.
        """
        from curator.paths import absolute_uri, resolve_stage_paths

        if checkpoint_path is not None:
            if checkpoint_dir is not None and str(checkpoint_dir) != str(checkpoint_path):
                raise TypeError(f"Pipeline {self.name!r}: give checkpoint_dir= or NeMo Curator's "
                                f"checkpoint_path=, not both")
            checkpoint_dir = str(checkpoint_path)
        for i, task in enumerate(initial_tasks or []):
            if not task.task_id:  # NeMo-style tasks built without an id: rooted by position
                task._set_task_id("0", i)
        # relative paths mean the driver's working directory, wherever a stage runs
        stages = resolve_stage_paths(self.build())
        checkpoint_dir, rejected_dir = absolute_uri(checkpoint_dir), absolute_uri(rejected_dir)
        executor = self._executor(executor, executor_config)
        context = RunContext(pipeline_name=self.name, rejected_dir=rejected_dir,
                             checkpoint_dir=checkpoint_dir, max_retries=max_retries,
                             progress=progress, summary=summary)
        # without checkpoint_dir the partition state goes beside the output's run manifest
        with self._claim(stages, checkpoint_dir, rejected_dir, context) as run_id:
            context.sink.run_id = run_id or ""
            if context.checkpoint_dir and rejected_dir:  # resuming redoes the failed partitions
                from curator.replay import supersede_failed

                supersede_failed(rejected_dir)
            result = executor.execute(stages, initial_tasks, context=context)
        if result.spec is None:
            from curator.report import spec_of_stages

            result.spec = spec_of_stages(self.name, self.description, stages)
        if report:
            from curator.report import write_report

            write_report(result, report)
        return result.raise_on_failure() if raise_on_failure else result

    def replay(self, source: str | RunResult, executor: BaseExecutor | str | None = None, *,
               rejected_dir: str | None = None, max_retries: int = 1,
               progress: bool | None = None, summary: bool | None = None,
               raise_on_failure: bool = True, trust_pickles: bool = False,
               **executor_config: Any) -> RunResult:
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
            trust_pickles: also read failed tasks kept as pickles (``*.failed.task.pkl``: an
                older Curator's entries, or tasks whose class is not registered as a task).
                Unpickling runs code from the file: only for a directory nobody else can write.

        Returns the replayed tasks' outputs as a :class:`RunResult` (``ok``, ``failed``).
        """
        from curator.paths import resolve_stage_paths
        from curator.replay import load_failed, replay_run

        stages = resolve_stage_paths(self.build())
        executor = self._executor(executor, executor_config)
        entries = load_failed(source, trust_pickles=trust_pickles)
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
               rejected_dir: str | None, context: RunContext | None = None) -> Any:
        from curator.output_dir import claim_output_dirs  # writers' save modes and locks

        return claim_output_dirs(stages, checkpoint_dir=checkpoint_dir, rejected_dir=rejected_dir,
                                 pipeline=self.name, context=context)

    def __repr__(self) -> str:
        return f"Pipeline(name={self.name!r}, stages={[s.name for s in self.stages]})"


def make_executor(name: str, config: dict[str, Any] | None = None) -> BaseExecutor:
    """Instantiate the executor registered as ``name``. Core's own executors are taken without
    loading every plugin (a built-in name wins any clash, so the registry would give the same
    class), unless core's plugin is switched off."""
    from curator.executors import builtin_executor
    from curator.plugins.selection import core_selected

    cls = builtin_executor(name) if core_selected() else None
    if cls is None:
        from curator.plugins import get_registry

        cls = get_registry().get(name, kind="executor").obj
    return cls(config or {})
