"""fastText quality and language-id filters with tiny models trained on the fly."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from curator_text import (
    DocumentBatch,
    FastTextLangId,
    FastTextQualityFilter,
    Score,
    ScoreFilter,
)

HQ = ["the committee published a detailed report on economic growth",
      "researchers explain the results of the experiment in the paper",
      "the history of the city is described in this careful article"]
LQ = ["click here buy now cheap cheap cheap", "win free prize click now now",
      "buy buy buy discount click here free"]


_TRAIN = """
import json
import sys
import fasttext

data, path, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for seed in range(50):
    try:
        model = fasttext.train_supervised(data, seed=seed, verbose=0, thread=1, **params)
        break
    except (RuntimeError, ValueError):
        continue
else:
    sys.exit("fastText training kept failing with NaN")
model.save_model(path)
"""


_PARAMS = {"epoch": 20, "lr": 0.05, "dim": 8, "minCount": 1, "wordNgrams": 2}


def _train(tmp_path, lines: list[str], name: str, **params: object) -> str:
    """A tiny supervised fastText model trained on ``lines``, in a fresh interpreter: in a long
    test process fasttext-numpy2-wheel's training can raise "Encountered NaN" for every seed (it
    depends on the process, not on the seed: word bigrams and a seed retry made it train cleanly
    in fresh processes, but not after some other tests had run in the same one). ``params``
    override fastText's training options (:data:`_PARAMS`)."""
    data = tmp_path / f"{name}.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = str(tmp_path / f"{name}.bin")
    out = subprocess.run([sys.executable, "-c", _TRAIN, str(data), path,
                          json.dumps({**_PARAMS, **params})],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ft")
    rng = random.Random(0)
    q = [f"__label__hq {t}" for t in HQ] * 20 + [f"__label__lq {t}" for t in LQ] * 20
    rng.shuffle(q)
    lid = ([f"__label__en {t}" for t in HQ] * 20
           + [f"__label__fr {t}" for t in ["le chat est sur la table et il dort",
                                            "nous allons au marché le matin",
                                            "la ville est belle en été"]] * 20)
    rng.shuffle(lid)
    return _train(tmp, q, "quality"), _train(tmp, lid, "lid")


def test_quality_filter_threshold_mode_scores_and_keeps_hq(models) -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": [HQ[0], LQ[0]]}))
    flt = FastTextQualityFilter(models[0], alpha=None, label_field="quality_label")
    stage = ScoreFilter(flt, score_field="quality_score")
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == [HQ[0]]
    assert out["quality_score"][0].as_py() > 0.5
    assert out["quality_label"].to_pylist() == ["hq"]


def test_quality_filter_default_is_nemo_pareto_sampling(models) -> None:
    """NeMo Curator's default (alpha=3, seed=42): keep when Pareto(3) noise > 1 - score, the
    noise drawn from NumPy's legacy generator seeded with 42, one draw per document."""
    texts = (HQ + LQ) * 5
    batch = DocumentBatch("t", "d", pa.table({"text": texts}))
    stage = ScoreFilter(FastTextQualityFilter(models[0]), score_field="q")
    scores = Score(FastTextQualityFilter(models[0]), score_field="q").process(batch)
    q = np.array(scores.to_pyarrow()["q"].to_pylist())
    expected = np.random.RandomState(42).pareto(3, len(texts)) > 1 - q
    assert 0 < expected.sum() < len(texts)  # the noise keeps some low-quality documents
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == [t for t, k in zip(texts, expected, strict=True) if k]


def test_langid_score_is_nemo_string_with_model_label(models) -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": [HQ[1], "le chat est sur la table"]}))
    flt = FastTextLangId(models[1])
    scored = Score(flt, score_field="lang").process(batch).to_pyarrow()["lang"].to_pylist()
    parsed = [ast.literal_eval(s) for s in scored]
    assert [lang for _, lang in parsed] == ["en", "fr"]  # as in the model, not upper-cased
    assert all(isinstance(p, float) and 0 < p <= 1 for p, _ in parsed)
    assert scored[0] == str([parsed[0][0], "en"])
    kept = ScoreFilter(FastTextLangId(models[1], lang="EN")).process(batch).to_pyarrow()
    assert kept["text"].to_pylist() == [HQ[1]]  # lang= matches case-insensitively
    assert flt.keep_document("[0.9, 'eng_Latn']")
    assert FastTextLangId(models[1], lang="eng").keep_document("[0.9, 'eng_Latn']")
    assert not FastTextLangId(models[1], lang="eng_Cyrl").keep_document("[0.9, 'eng_Latn']")
    assert not flt.keep_document("[0.2, 'en']")


def test_langid_numeric_option_with_label_field(models) -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": [HQ[1], "le chat est sur la table"]}))
    stage = ScoreFilter(FastTextLangId(models[1], languages=["en"], numeric_score=True,
                                       label_field="language"), score_field="lang_score")
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["language"].to_pylist() == ["en"]
    assert out["lang_score"][0].as_py() >= 0.3


def test_missing_model_path_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="model_path"):
        FastTextQualityFilter("")
