"""GeneralCommentToCodeFilter with a MIME type it has no comment syntax for (NeMo's docs use
``text/x-asm``): built with a warning, every document scored 9999 and rejected, as NeMo does."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import filters as F
from curator_text.tasks import DocumentBatch


def test_unknown_mime_type_warns_and_rejects_every_document_with_nemo_score() -> None:
    with pytest.warns(UserWarning, match="text/x-asm"):
        flt = F.GeneralCommentToCodeFilter(language="text/x-asm", min_comment_to_code_ratio=0.001)
    assert flt.score_document("mov eax, 1 ; set eax\n") == 9999.0
    assert flt.score_document("") == 9999.0  # comment_parser refuses the type before reading
    assert not flt.keep_document(9999.0)
    batch = DocumentBatch("t", "d", pa.table({"content": ["mov eax, 1 ; c\n", "nop\n"]}))
    out = F.ScoreFilter(filter_obj=flt, text_field="content").process(batch)
    assert out.num_items == 0


def test_known_mime_types_still_score_comments() -> None:
    c = "int x = 1; // set x\nint y = 2;"
    assert F.GeneralCommentToCodeFilter("text/x-c++").score_document(c) == pytest.approx(len(" set x") / len(c))
