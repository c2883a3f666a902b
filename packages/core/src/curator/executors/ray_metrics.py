"""The run's per-stage figures on the Ray dashboard."""

from __future__ import annotations

import threading

from curator.run.stats import RunStats, StageStats

__all__ = ["RayStageMetrics"]


class RayStageMetrics:
    """Exports the run's per-stage figures through Ray's metrics API (``ray.util.metrics``) from
    the driver, so they show on the Ray dashboard and its Prometheus endpoint: counters
    ``curator_stage_{tasks_in,tasks_out,items_in,items_out,rejected,failed_tasks,retries}``
    and the gauge ``curator_stage_busy_seconds``, tagged ``pipeline``, ``stage``, ``executor``.
    Updated every ``interval`` seconds while the run lasts and once at its end; a no-op when Ray
    is not initialised.
    """

    FIELDS = ("tasks_in", "tasks_out", "items_in", "items_out", "rejected", "failed_tasks",
              "retries")

    def __init__(self, stats: RunStats, pipeline: str = "", interval: float = 2.0) -> None:
        self.stats = stats
        self.pipeline = pipeline
        self.interval = interval
        self._sent: dict[tuple[int, str], int] = {}
        self._counters: dict[str, object] = {}
        self._busy: object | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="curator-ray-metrics",
                                        daemon=True)

    def __enter__(self) -> RayStageMetrics:
        import ray

        if not ray.is_initialized():
            return self
        from ray.util.metrics import Counter, Gauge

        tags = ("pipeline", "stage", "executor")
        self._counters = {f: Counter(f"curator_stage_{f}", description=f"Curator: {f} per stage",
                                     tag_keys=tags) for f in self.FIELDS}
        self._busy = Gauge("curator_stage_busy_seconds", tag_keys=tags,
                           description="Curator: worker seconds spent in the stage")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.flush()

    def _value(self, s: StageStats, field_name: str) -> int:
        if field_name == "rejected":  # ``rejected`` itself is filled in at the end of the run
            return sum(s.rejected_by_reason.values())
        return getattr(s, field_name)

    def flush(self) -> None:
        """Send what changed since the last flush."""
        if not self._counters:
            return
        for i, s in enumerate(self.stats.stages):
            tags = {"pipeline": self.pipeline, "stage": s.name, "executor": self.stats.executor}
            for f, counter in self._counters.items():
                now = self._value(s, f)
                delta = now - self._sent.get((i, f), 0)
                if delta > 0:
                    counter.inc(delta, tags=tags)
                    self._sent[(i, f)] = now
            self._busy.set(s.busy_s, tags=tags)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()
