"""ScoreFilter, Score, Filter and split mode."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import (
    DocumentBatch,
    DocumentFilter,
    Filter,
    RepeatedLinesFilter,
    RepeatingTopNGramsFilter,
    Score,
    ScoreBucketer,
    ScoreFilter,
    WordCountFilter,
)


def _batch(texts: list[str]) -> DocumentBatch:
    return DocumentBatch(task_id="t0", dataset_name="d", data=pa.table(
        {"text": texts, "n": list(range(len(texts)))}))


TEXTS = ["one two three four", "one", "one two three", None]


def test_score_filter_keeps_and_stores_score() -> None:
    out = ScoreFilter(WordCountFilter(min_words=3), score_field="wc").process(_batch(TEXTS))
    assert out.to_pyarrow()["n"].to_pylist() == [0, 2]
    assert out.to_pyarrow()["wc"].to_pylist() == [4, 3]
    assert out.task_id == "t0"


def test_invert_keeps_the_rejected() -> None:
    out = ScoreFilter(WordCountFilter(min_words=3), invert=True).process(_batch(TEXTS))
    assert out.to_pyarrow()["n"].to_pylist() == [1, 3]
    assert "wc" not in out.to_pyarrow().column_names


def test_split_mode_rejects_with_name_and_score() -> None:
    stage = ScoreFilter(WordCountFilter(min_words=3), split=True)
    out = stage.process(_batch(TEXTS))
    assert out.num_items == 2
    rejected = stage.drain_rejected()
    assert [r.record["n"] for r in rejected] == [1, 3]
    assert {r.kind for r in rejected} == {"filtered"}
    assert rejected[0].record["filter"] == "WordCountFilter"
    assert rejected[0].record["score"] == 1


def test_score_does_not_drop_and_filter_uses_existing_scores() -> None:
    scored = Score(WordCountFilter(min_words=3), score_field="wc").process(_batch(TEXTS))
    assert scored.num_items == 4
    assert scored.to_pyarrow()["wc"].to_pylist() == [4, 1, 3, 0]
    kept = Filter(WordCountFilter(min_words=3), score_field="wc").process(scored)
    assert kept.to_pyarrow()["n"].to_pylist() == [0, 2]


def test_python_filter_runs_in_processes_and_vectorised_in_threads() -> None:
    assert ScoreFilter(RepeatingTopNGramsFilter(lang="zh")).worker_mode == "process"  # jieba
    assert ScoreFilter(RepeatedLinesFilter()).worker_mode == "thread"
    assert ScoreFilter(WordCountFilter()).worker_mode == "thread"


def test_default_batch_api_uses_document_api() -> None:
    class Longer(DocumentFilter):
        def score_document(self, text: str) -> int:
            return len(text)

        def keep_document(self, score: int) -> bool:
            return score > 3

    out = ScoreFilter(Longer(), score_field="len").process(_batch(["ab", "abcd"]))
    assert out.to_pyarrow()["len"].to_pylist() == [4]


def test_config_errors_name_the_stage() -> None:
    with pytest.raises(TypeError, match="filter_obj"):
        ScoreFilter(filter_obj="WordCountFilter")
    with pytest.raises(KeyError, match="body"):
        ScoreFilter(WordCountFilter(), text_field="body").process(_batch(["a"]))


def test_score_bucketer() -> None:
    batch = DocumentBatch("t", "d", pa.table({"score": [0.9, 0.6, 0.1, None]}))
    out = ScoreBucketer(score_field="score", high=0.8, low=0.5).process(batch)
    assert out.to_pyarrow()["quality_bucket"].to_pylist() == ["high", "medium", "low", "low"]
    with pytest.raises(ValueError, match="low"):
        ScoreBucketer(high=0.1, low=0.5)


class _LoadsAModel(DocumentFilter):
    def setup(self) -> None:
        self.model = object()

    def score_document(self, text: str) -> int:
        return 1

    def keep_document(self, score: int) -> bool:
        return True


def test_only_filters_with_a_setup_ask_for_a_long_lived_worker() -> None:
    # Ray Data runs stages without worker state as tasks (no actor start-up per run)
    assert not ScoreFilter(WordCountFilter()).has_worker_state
    assert not Filter(lambda s: s > 0, filter_field="n").has_worker_state
    assert ScoreFilter(_LoadsAModel()).has_worker_state
    assert ScoreFilter([WordCountFilter(), _LoadsAModel()]).has_worker_state
