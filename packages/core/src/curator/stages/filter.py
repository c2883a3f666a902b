"""FilterStage: the one filter contract every modality uses.

A filter scores the items of a task (:meth:`FilterStage.score_items`), decides per score
(:meth:`FilterStage.keep`), passes the kept items on and, with ``split=True``, sends each removed
item to the rejected sink (kind ``"filtered"``, reason ``"filtered by <filter>"``, the record with
``filter`` and ``score`` added). With ``split=False`` (the default, as in NeMo Curator) removed
items are dropped; the run summary still counts them (``items_in`` - ``items_out`` of the stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["FilterStage", "FILTERED", "numeric_bounds", "reject_filtered"]

FILTERED = "filtered"  # the rejected-record kind of every item a filter removes
T = TypeVar("T", bound=Task)


def numeric_bounds(obj: Any) -> list[float]:
    """``obj``'s numeric bounds (attributes named ``min*``, ``max*``, ``*threshold*``,
    ``*cutoff*``, ``target_value``): the lines marked on its score histogram in run reports."""
    return [float(v) for k, v in vars(obj).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
            and any(w in k.lower() for w in ("min", "max", "threshold", "cutoff", "target_value"))]


def reject_filtered(stage: ProcessingStage, task: Task | None, record: dict[str, Any],
                    filter_name: str, score: Any) -> None:
    """Send one item removed by ``filter_name`` to the rejected sink in the shape shared by all
    filters: kind ``"filtered"``, reason ``"filtered by <filter_name>"``, ``record`` plus its
    ``filter`` name and ``score``."""
    stage.reject(task, f"filtered by {filter_name}", kind=FILTERED,
                 record={**record, "filter": filter_name, "score": score})


class FilterStage(ProcessingStage[T, T]):
    """Base of filter stages: score → keep decision → kept items go on, removed ones go to the
    rejected sink (``split=True``) or are dropped (``split=False``).

    Leaf classes (or a modality's base) implement :meth:`items`, :meth:`with_kept`,
    :meth:`score_items` and :meth:`keep`, and may override :meth:`item_record` (what identifies an
    item in the sink). ``score_items`` may return ``None`` for an item it has already sent to the
    sink itself (e.g. no embedding to score): that item is removed without a ``filtered`` record.
    """

    kind: ClassVar[str] = "filter"
    split: bool = False

    def items(self, task: T) -> Sequence[Any]:
        """The items of ``task`` this filter decides on."""
        raise NotImplementedError(f"{type(self).__name__} must implement items")

    def with_kept(self, task: T, mask: list[bool]) -> T:
        """``task`` holding only the items where ``mask`` is true."""
        raise NotImplementedError(f"{type(self).__name__} must implement with_kept")

    def score_items(self, task: T, items: Sequence[Any]) -> Sequence[Any]:
        """One score per item (``None``: the item was already rejected by the stage)."""
        raise NotImplementedError(f"{type(self).__name__} must implement score_items")

    def keep(self, score: Any) -> bool:
        """Whether an item with ``score`` is kept."""
        raise NotImplementedError(f"{type(self).__name__} must implement keep")

    def item_record(self, item: Any) -> dict[str, Any]:
        """What identifies a removed item in the rejected sink (default: the item if a dict)."""
        return dict(item) if isinstance(item, dict) else {"item": repr(item)}

    def publish_scores(self, name: str, scores: Any, thresholds: list[float]) -> None:
        """Add numeric ``scores`` to the histogram ``name`` shown in run reports (see
        ``docs/run-report.md``); collected by :meth:`drain_histograms` after each batch."""
        from curator.run.stats import ScoreSketch

        sketches = self.__dict__.setdefault("_score_sketches", {})
        if name not in sketches:
            sketches[name] = ScoreSketch(thresholds=thresholds)
        sketches[name].add(scores)

    def drain_histograms(self) -> dict[str, Any]:
        """The score histograms published since the last call, by name."""
        return self.__dict__.pop("_score_sketches", None) or {}

    def process(self, task: T) -> T:
        items = self.items(task)
        if not items:
            return task
        scores = self.score_items(task, items)
        numeric = [s for s in scores if isinstance(s, int | float) and not isinstance(s, bool)]
        if numeric:
            self.publish_scores(self.name, numeric, numeric_bounds(self))
        mask: list[bool] = []
        for item, score in zip(items, scores, strict=True):
            kept = score is not None and bool(self.keep(score))
            mask.append(kept)
            if not kept and score is not None and self.split:
                reject_filtered(self, task, self.item_record(item), self.name, score)
        return self.with_kept(task, mask)
