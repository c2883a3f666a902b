"""fastText filters keep their model under NeMo Curator's attribute names, so code written for
NeMo that sets or reads ``_fasttext_langid_model`` / ``_fasttext_quality_filter_model`` works."""

from __future__ import annotations

import ast
import pickle

import pytest
from curator_text import FastTextLangId, FastTextQualityFilter

from tests.text.filters.test_fasttext import HQ, LQ, _train


@pytest.fixture(scope="module")
def lid_models(tmp_path_factory) -> tuple[str, str]:
    tmp = tmp_path_factory.mktemp("ft_attrs")
    fr = ["le chat est sur la table et il dort", "nous allons au marché le matin"]
    lower = [f"__label__en {t}" for t in HQ] * 20 + [f"__label__fr {t}" for t in fr] * 20
    # the same texts with labels that are upper case or carry a script
    full = [f"__label__eng_Latn {t}" for t in HQ] * 20 + [f"__label__FR {t}" for t in fr] * 20
    return _train(tmp, lower, "lid_lower"), _train(tmp, full, "lid_full")


def test_lang_id_uses_a_model_set_on_nemo_curators_attribute(lid_models) -> None:
    import fasttext

    lower, full = lid_models
    flt = FastTextLangId(lower)
    assert ast.literal_eval(flt.score_document(HQ[0]))[1] == "en"
    assert flt._fasttext_langid_model is not None  # loaded there
    flt._fasttext_langid_model = fasttext.load_model(full)  # NeMo users swap it there
    prob, lang = ast.literal_eval(flt.score_document(HQ[0]))
    assert lang == "eng_Latn" and 0 < prob <= 1  # the model's label whole, case kept
    assert ast.literal_eval(flt.score_document("le chat est sur la table"))[1] == "FR"


def test_quality_filter_model_attribute_load_model_and_pickling(tmp_path) -> None:
    q = [f"__label__hq {t}" for t in HQ] * 20 + [f"__label__lq {t}" for t in LQ] * 20
    flt = FastTextQualityFilter(_train(tmp_path, q, "q"), alpha=None)
    assert flt._fasttext_quality_filter_model is None
    flt.load_model()  # NeMo Curator's loading hook
    model = flt._fasttext_quality_filter_model
    assert model is not None
    assert flt.score_document(HQ[0]) > 0.5
    flt.load_model()
    assert flt._fasttext_quality_filter_model is model  # loaded once
    copy = pickle.loads(pickle.dumps(flt))  # workers load their own
    assert copy._fasttext_quality_filter_model is None
    assert copy.score_document(HQ[0]) == pytest.approx(flt.score_document(HQ[0]))
