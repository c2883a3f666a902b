"""FastTextQualityFilter scores as NeMo Curator does with a 3-label model: ``p(top)`` when the
top label is ``label``, else ``1 - p(top)`` (not ``p(label)``)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from curator_text import FastTextQualityFilter

from tests.text.filters.test_fasttext import _train

HQ = ["the committee published a detailed report on economic growth",
      "researchers explain the results of the experiment in the paper"]
MQ = ["this post is about my weekend trip and some photos of food",
      "my thoughts on the new phone it is ok i guess"]
LQ = ["click here buy now cheap cheap cheap", "win free prize click now now"]


@pytest.fixture(scope="module")
def three_label_model(tmp_path_factory) -> str:
    rng = random.Random(1)
    lines = ([f"__label__hq {t}" for t in HQ] * 15 + [f"__label__mq {t}" for t in MQ] * 15
             + [f"__label__lq {t}" for t in LQ] * 15)
    rng.shuffle(lines)
    return _train(tmp_path_factory.mktemp("ft3"), lines, "q3")


def test_score_is_top_probability_or_its_complement(three_label_model: str) -> None:
    import fasttext

    model = fasttext.load_model(three_label_model)
    docs = [*HQ, *MQ, *LQ, "cheap report on my weekend"]
    flt = FastTextQualityFilter(three_label_model)
    scores = flt.score_batch(pa.array(docs))
    differs = 0
    for doc, score in zip(docs, scores, strict=True):
        labels, probs = model.predict(doc, k=-1)
        by_label = dict(zip(labels, probs, strict=True))
        top, p_top = labels[0], float(probs[0])
        expected = p_top if top == "__label__hq" else 1.0 - p_top
        assert score == pytest.approx(expected, abs=1e-6)
        differs += abs(expected - by_label["__label__hq"]) > 1e-3
    assert differs >= 2  # the documents where NeMo's rule and p(label) disagree
    assert flt.score_document(LQ[0]) == pytest.approx(float(scores[len(HQ) + len(MQ)]))


def test_probability_of_label_on_request(three_label_model: str) -> None:
    import fasttext

    model = fasttext.load_model(three_label_model)
    labels, probs = model.predict(LQ[0], k=-1)
    flt = FastTextQualityFilter(three_label_model, nemo_score=False)
    assert float(flt.score_batch(pa.array([LQ[0]]))[0]) == pytest.approx(
        float(np.asarray(probs)[list(labels).index("__label__hq")]), abs=1e-6)
