"""The pandas view a :class:`~curator_text.tasks.DocumentBatch` held as Arrow shows user code."""

from __future__ import annotations

import pandas as pd

__all__ = ["DocumentFrame"]


class DocumentFrame(pd.DataFrame):
    """A plain DataFrame whose truth value is "has rows", as the ``pyarrow.Table`` NeMo Curator's
    readers put in ``batch.data`` (its docs test ``if result.data:``). Anything derived from it
    (``df[...]``, ``df.copy()``) is a plain ``pandas.DataFrame``."""

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def __bool__(self) -> bool:
        return len(self) > 0
