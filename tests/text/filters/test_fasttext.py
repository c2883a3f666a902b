"""fastText quality and language-id filters with tiny models trained on the fly."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from curator_text import DocumentBatch, FastTextLangId, FastTextQualityFilter, ScoreFilter

HQ = ["the committee published a detailed report on economic growth",
      "researchers explain the results of the experiment in the paper",
      "the history of the city is described in this careful article"]
LQ = ["click here buy now cheap cheap cheap", "win free prize click now now",
      "buy buy buy discount click here free"]


def _train(tmp_path, lines: list[str], name: str) -> str:
    import fasttext

    data = tmp_path / f"{name}.txt"
    data.write_text("\n".join(lines) + "\n")
    # With word unigrams only, fasttext-numpy2-wheel raises "Encountered NaN" on tiny corpora
    # in most processes (it depends on the process, not on the seed); with word bigrams it
    # trained cleanly 36 times out of 36. The seed retry stays as a second line of defence.
    for seed in range(50):
        try:
            model = fasttext.train_supervised(str(data), epoch=20, lr=0.05, dim=8, minCount=1,
                                              wordNgrams=2, thread=1, seed=seed, verbose=0)
            break
        except (RuntimeError, ValueError):
            continue
    else:
        raise RuntimeError("fastText training kept failing with NaN")
    path = str(tmp_path / f"{name}.bin")
    model.save_model(path)
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


def test_quality_filter_scores_and_keeps_hq(models) -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": [HQ[0], LQ[0]]}))
    flt = FastTextQualityFilter(models[0], label_field="quality_label")
    stage = ScoreFilter(flt, score_field="quality_score")
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == [HQ[0]]
    assert out["quality_score"][0].as_py() > 0.5
    assert out["quality_label"].to_pylist() == ["hq"]


def test_langid_writes_label_and_score(models) -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": [HQ[1], "le chat est sur la table"]}))
    stage = ScoreFilter(FastTextLangId(models[1], languages=["EN"]), score_field="lang_score")
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["language"].to_pylist() == ["EN"]
    assert out["lang_score"][0].as_py() >= 0.3
    scored = ScoreFilter(FastTextLangId(models[1]), score_field="s").process(batch).to_pyarrow()
    assert scored["language"].to_pylist() == ["EN", "FR"]


def test_missing_model_path_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="model_path"):
        FastTextQualityFilter("")
