"""Modify and the text modifiers."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import (
    BoilerPlateStringModifier,
    DocumentBatch,
    LineRemover,
    MarkdownRemover,
    Modify,
    NewlineNormalizer,
    QuotationUnifier,
    Slicer,
    UnicodeReformatter,
    UrlRemover,
)


@pytest.mark.parametrize(("modifier", "before", "after"), [
    (UnicodeReformatter(), "The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.",
     "The Mona Lisa doesn't have eyebrows."),
    (QuotationUnifier(), "“Hi,” she said. ‘Yes’", "\"Hi,\" she said. 'Yes'"),
    (NewlineNormalizer(), "a\n\n\n\nb\n\nc", "a\n\nb\n\nc"),
    (UrlRemover(), "see https://x.com/a?b=1 now", "see  now"),
    (LineRemover(["Advertisement"]), "a\nAdvertisement\nb", "a\nb"),
    (MarkdownRemover(), "# Title\n**bold** and *it* [link](http://x)", "Title\nbold and it link"),
    (BoilerPlateStringModifier(), "Privacy policy\n\nbody\n\nmore", "body\n\nmore"),
    (Slicer(left="START", right="END", include_left=False, include_right=False),
     "junk START keep this END junk", "keep this"),
    (Slicer(left=2, right=5), "abcdefg", "cde"),
])
def test_modifier(modifier, before, after) -> None:
    modifier.setup()
    assert modifier.modify_document(before) == after
    assert modifier.modify_batch(pa.array([before])).to_pylist() == [after]


def test_modify_stage_chains_and_keeps_other_columns() -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": ["“a”\n\n\n\nb", None], "k": [1, 2]}))
    stage = Modify([QuotationUnifier(), NewlineNormalizer(), str.upper])
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == ['"A"\n\nB', ""]
    assert out["k"].to_pylist() == [1, 2]
    assert stage.worker_mode == "process"  # a pure-Python modifier is in the chain
    assert Modify(QuotationUnifier()).worker_mode == "thread"


def test_modify_rejects_non_callable() -> None:
    with pytest.raises(TypeError, match="modifier_fn"):
        Modify(42)
