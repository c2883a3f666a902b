"""A chain of filter stages narrows a selection of the batch's rows instead of copying the table
at every filter: the kept documents (all their columns), counts, scores, sinks and anything that
reads the batch afterwards see exactly what filtering the table would give."""

from __future__ import annotations

import json
import pickle

import pyarrow as pa
from curator_text import (
    BoilerPlateStringFilter,
    DocumentBatch,
    DocumentFilter,
    JsonlWriter,
    NonAlphaNumericFilter,
    RepeatingTopNGramsFilter,
    ScoreFilter,
    UrlsFilter,
    WordCountFilter,
)

_PROSE = ("A river runs through the old town, past the mill and under three stone bridges "
          "before it reaches the sea, where fishing boats wait for the evening tide.")
TEXTS = [_PROSE, "two words", _PROSE.replace("mill", "see https://example.com/a/very/long/path"
                                              "/that/goes/on/and/on/and/on/forever/more"),
         None, "buy now " * 20, _PROSE.upper(), _PROSE + "\n\nprivacy policy\n\nterms of use",
         "### $$$ %%% ^^^ &&& *** ((( ))) " * 3, "", _PROSE.replace("sea", "ocean"),
         _PROSE.replace(" ", "  ")]


def _batch() -> DocumentBatch:
    return DocumentBatch(task_id="t0", dataset_name="d", data=pa.table({
        "text": TEXTS, "n": list(range(len(TEXTS))),
        "tag": [None if i % 3 == 0 else f"t{i}" for i in range(len(TEXTS))]}))


FILTERS = [WordCountFilter(min_words=3), NonAlphaNumericFilter(), UrlsFilter(),
           RepeatingTopNGramsFilter(), BoilerPlateStringFilter()]


def _chain(batch: DocumentBatch) -> DocumentBatch:
    for flt in FILTERS:
        batch = ScoreFilter(flt).process(batch)
    return batch


def _expected() -> pa.Table:
    table = _batch().to_pyarrow()
    for flt in FILTERS:
        texts = [t or "" for t in table["text"].to_pylist()]
        keep = [bool(flt.keep_document(flt.score_document(t))) for t in texts]
        table = table.filter(pa.array(keep, pa.bool_()))
    return table


def test_a_filter_chain_selects_rows_without_copying_the_table() -> None:
    batch = _batch()
    out = _chain(batch)
    table, rows = out.selection()
    assert table is batch.selection()[0]  # the reader's table, never copied
    assert rows is not None and out.num_items == len(rows)
    assert out.to_pyarrow().equals(_expected())  # read: the selected rows, taken once
    assert out.selection()[1] is None


def test_user_code_and_pickles_see_only_the_kept_rows() -> None:
    out = _chain(_batch())
    expected = _expected()
    assert list(out.data["n"]) == expected["n"].to_pylist()  # pandas view for user code
    again = pickle.loads(pickle.dumps(_chain(_batch())))
    assert again.selection()[1] is None and again.to_pyarrow().equals(expected)


def test_the_writer_writes_the_selected_rows(tmp_path) -> None:
    writer = JsonlWriter(path=str(tmp_path))
    written = writer.process(_chain(_batch()))
    expected = _expected()
    assert written.metadata["num_rows"] == expected.num_rows
    rows = [json.loads(line) for line in open(written.data[0])]
    assert rows == expected.to_pylist()


def test_steps_that_need_a_table_take_the_selection_first() -> None:
    """A stored score, split mode and a filter of the user's (a subclass too) see a table of
    the selected rows."""
    class Mine(WordCountFilter):
        def score_batch(self, texts):
            assert len(texts) == len(_expected())
            return super().score_batch(texts)

    class Length(DocumentFilter):
        vectorized = True

        def score_batch(self, texts):
            return pa.compute.utf8_length(texts)

        def keep_batch(self, scores):
            return pa.compute.greater(scores, 0)

    out = ScoreFilter(Mine(min_words=1), score_field="wc").process(_chain(_batch()))
    assert out.to_pyarrow()["n"].to_pylist() == _expected()["n"].to_pylist()
    assert out.to_pyarrow()["wc"].to_pylist() == [len((t or "").split())
                                                 for t in _expected()["text"].to_pylist()]
    out = ScoreFilter(Length(), score_field="len").process(_chain(_batch()))
    assert out.to_pyarrow()["len"].to_pylist() == [len(t) for t in _expected()["text"].to_pylist()]
    stage = ScoreFilter(WordCountFilter(min_words=8), split=True)
    out = stage.process(_chain(_batch()))
    assert all(len(t.split()) >= 8 for t in out.to_pyarrow()["text"].to_pylist())


def test_the_executors_input_checks_do_not_take_the_selection() -> None:
    """Every stage call checks its input's attributes and columns (``process_batch``): that
    reads column names, not the data, so a selection passes through a fused chain untaken."""
    batch = _batch()
    table = batch.selection()[0]
    for flt in FILTERS:
        (batch,) = ScoreFilter(flt).process_batch([batch])
    assert batch.selection()[0] is table and batch.selection()[1] is not None
    assert batch.to_pyarrow().equals(_expected())
