"""The one place where a stage (or any object with ``setup()``) is set up and torn down:
:func:`ensure_setup` and :func:`release_stage`. Executors call them when a worker starts and
ends, :func:`curator.executors.base.invoke_stage` calls :func:`ensure_setup` before processing,
so ``process()`` never needs to check whether ``setup()`` ran. Light on purpose: leaf modules
import it without loading the executors."""

from __future__ import annotations

import inspect
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from curator.stages.node_info import WorkerMetadata

__all__ = ["ensure_setup", "release_stage", "overrides"]

T = TypeVar("T")

_SETUP_LOCK = threading.RLock()
"""Serialises ``setup()`` in a process: libraries such as torch fail when several threads import
them for the first time at once (re-entrant: a ``setup`` may set up the objects it holds)."""
_SET_UP: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
"""The objects set up in this process, by ``id`` (an entry goes when its object does, so a new
object reusing the id is not taken for set up; copies and unpickled objects are never in it)."""
_PINNED: dict[int, Any] = {}
"""The same for objects that cannot be weakly referenced (held until :func:`release_stage`)."""


def overrides(obj: Any, base: type, *names: str) -> bool:
    """Whether ``obj``'s class replaces any of ``base``'s methods ``names`` (e.g. ``setup``)."""
    klass = type(obj)
    return any(getattr(klass, n, None) is not getattr(base, n) for n in names)


def _forget_all() -> None:
    _SET_UP.clear()
    _PINNED.clear()


if hasattr(os, "register_at_fork"):  # a forked child is another process: set up again there
    os.register_at_fork(after_in_child=_forget_all)


def _is_set_up(obj: Any) -> bool:
    key = id(obj)
    return _SET_UP.get(key) is obj or _PINNED.get(key) is obj


def _takes_argument(method: Any) -> bool:
    """Whether ``method`` (a bound ``setup``) accepts a positional argument."""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume NeMo's
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
               for p in params)


def ensure_setup(obj: T, worker_metadata: WorkerMetadata | None = None) -> T:
    """Run ``obj.setup()`` unless it already ran on this very object in this process; returns
    ``obj`` (``ensure_setup(MyStage()).process(task)`` outside a pipeline).

    The one place where setup happens: every executor calls it when a worker starts,
    :func:`~curator.executors.base.invoke_stage` calls it before processing, and helpers that
    users may call outside a pipeline (a filter's ``score_document``, a modifier's
    ``modify_document``) call it on themselves. A copy (``copy.deepcopy``, ``with_``), a stage
    pickled into another process or one inherited by a forked child is not set up there and
    runs ``setup()`` again. Thread-safe; a ``setup`` that raises leaves the object not set up
    (the next call tries again).

    Parameters:
        obj: a stage, or any object with a ``setup()`` method (filters, modifiers, detectors).
        worker_metadata: passed to ``setup`` when given and ``setup`` takes an argument
            (NeMo Curator's :class:`~curator.stages.node_info.WorkerMetadata`; a ``setup(self)``
            without one is called without it).
    """
    if _is_set_up(obj):
        return obj
    with _SETUP_LOCK:
        if not _is_set_up(obj):
            setup = obj.setup  # type: ignore[attr-defined]
            if worker_metadata is None or not _takes_argument(setup):
                setup()
            else:
                setup(worker_metadata)
            try:
                _SET_UP[id(obj)] = obj
            except TypeError:  # no weak references (``__slots__``)
                _PINNED[id(obj)] = obj
    return obj


def release_stage(obj: Any) -> None:
    """Run ``obj.teardown()`` once, if :func:`ensure_setup` set it up in this process (the
    counterpart every executor calls when a worker ends); the next :func:`ensure_setup` runs
    ``setup()`` again."""
    with _SETUP_LOCK:
        if not _is_set_up(obj):
            return
        _SET_UP.pop(id(obj), None)
        _PINNED.pop(id(obj), None)
    obj.teardown()
