"""pyarrow imports pandas the first time it converts a Python object (``pa.array``,
``pa.scalar``, a compute call with a number), which every filter stage does: about half a second
under the GIL, on the critical path of a run's first batch. Readers start that import in a thread
when they begin reading, so it overlaps their parsing (which releases the GIL)."""

from __future__ import annotations

import importlib.util
import sys
import threading

__all__ = ["import_pandas_soon"]

_started = threading.Event()


def import_pandas_soon() -> None:
    """Import pandas in a daemon thread, once per process (nothing when it is imported already
    or not installed)."""
    if _started.is_set() or "pandas" in sys.modules:
        return
    _started.set()
    if importlib.util.find_spec("pandas") is None:
        return
    threading.Thread(target=importlib.import_module, args=("pandas",), daemon=True,
                     name="curator-import-pandas").start()
