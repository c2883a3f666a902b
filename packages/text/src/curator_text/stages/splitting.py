"""DocumentSplitter and DocumentJoiner: split documents into segments and join them back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from curator import ProcessingStage
from curator.errors import ConfigError

from curator_text.tasks import DocumentBatch

if TYPE_CHECKING:  # pandas is imported where a stage runs, not with curator_text (0.2 s)
    import pandas as pd

__all__ = ["DocumentSplitter", "DocumentJoiner"]


@dataclass
class DocumentSplitter(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Splits each document's ``text_field`` on ``separator``: one row per segment, numbered
    from 0 in ``segment_id_field``; the other columns are repeated. Give documents a unique id
    first (``AddId``) to join them back with :class:`DocumentJoiner`.

    As in NeMo Curator the split is pandas' ``Series.str.split(separator)``: a separator longer
    than one character is a regular expression.
    """

    separator: str = "\n\n"
    text_field: str = "text"
    segment_id_field: str = "segment_id"
    name: str = "document_splitter"
    modality = "text"

    def inputs(self):
        return ["data"], [self.text_field]

    def outputs(self):
        return ["data"], [self.text_field, self.segment_id_field]

    def process(self, task: DocumentBatch) -> DocumentBatch:
        df = task.to_pandas()
        tmp = "__curator_segments__"
        df[tmp] = df[self.text_field].str.split(self.separator)
        df = df.explode(tmp)
        df[self.segment_id_field] = df.groupby(level=0).cumcount()
        df[self.text_field] = df[tmp]
        return task.derive(df.drop(columns=[tmp]).reset_index(drop=True))


@dataclass
class DocumentJoiner(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Joins the segments of each document (same ``document_id_field``) in
    ``segment_id_field`` order with ``separator``; other columns take the first segment's
    value. The inverse of :class:`DocumentSplitter`. All segments of a document must be in the
    same batch.

    With ``max_length`` and ``length_field`` (both or neither) segments are joined only while
    the summed lengths (plus separators) stay within ``max_length``; each joined piece gets a
    new segment id from 0. Rows come out ordered by document id (pandas ``groupby``).
    """

    separator: str = "\n\n"
    text_field: str = "text"
    segment_id_field: str = "segment_id"
    document_id_field: str = "id"
    drop_segment_id_field: bool = True
    max_length: int | None = None
    length_field: str | None = None
    name: str = "document_joiner"
    modality = "text"

    def __post_init__(self) -> None:
        if (self.max_length is None) != (self.length_field is None):
            raise ConfigError(f"{self.name}: give max_length and length_field together (or "
                              f"neither); got max_length={self.max_length!r}, "
                              f"length_field={self.length_field!r}")

    def inputs(self):
        cols = [self.text_field, self.segment_id_field, self.document_id_field]
        return ["data"], cols + ([self.length_field] if self.length_field else [])

    def outputs(self):
        cols = [self.text_field, self.document_id_field]
        if not self.drop_segment_id_field:
            cols.append(self.segment_id_field)
        return ["data"], cols + ([self.length_field] if self.length_field else [])

    def process(self, task: DocumentBatch) -> DocumentBatch:
        df = task.to_pandas()
        if df.empty:
            return task
        if self.max_length is None:
            df = df.sort_values(self.segment_id_field)
            agg = {c: (lambda s: self.separator.join(s.astype(str))) if c == self.text_field
                   else "first" for c in df.columns if c != self.document_id_field}
            joined = df.groupby(self.document_id_field, as_index=False).agg(agg)
        else:
            import pandas as pd

            parts = [self._join_limited(g) for _, g in df.groupby(self.document_id_field)]
            joined = pd.concat(parts, ignore_index=True) if parts else df.iloc[0:0]
        if self.drop_segment_id_field and self.segment_id_field in joined.columns:
            joined = joined.drop(columns=self.segment_id_field)
        return task.derive(joined)

    def _join_limited(self, group: pd.DataFrame) -> pd.DataFrame:
        rows: list[pd.Series] = []
        cur: pd.Series | None = None
        for _, row in group.sort_values(self.segment_id_field).iterrows():
            if cur is not None:
                length = cur[self.length_field] + row[self.length_field] + len(self.separator)
                if length <= self.max_length:
                    cur[self.text_field] = cur[self.text_field] + self.separator + \
                        row[self.text_field]
                    cur[self.length_field] = length
                    continue
                rows.append(cur)
            cur = row.copy()
            cur[self.segment_id_field] = len(rows)
        rows.append(cur)
        return type(group)(rows)
