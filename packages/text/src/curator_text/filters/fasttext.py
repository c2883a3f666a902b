"""fastText classifiers as document filters: quality (hq/lq) and language identification.
Models load from a local ``model_path`` in ``setup()``; ``fasttext`` is imported there."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_text.filters.base import DocumentFilter

__all__ = ["FastTextQualityFilter", "FastTextLangId"]


class _FastText(DocumentFilter):
    vectorized = True
    _model_attr = "_fasttext_model"  # NeMo Curator's attribute name, per subclass

    def __init__(self, model_path: str) -> None:
        super().__init__()
        if not model_path:
            raise ConfigError(f"{type(self).__name__}: model_path (a local .bin file) is required")
        self._model_path = model_path
        self._model = None

    @property
    def _model(self) -> Any:
        """The loaded model, kept under NeMo Curator's attribute name (code written for NeMo
        sets or reads it there)."""
        return self.__dict__.get(self._model_attr)

    @_model.setter
    def _model(self, model: Any) -> None:
        self.__dict__[self._model_attr] = model

    def setup(self) -> None:
        if self._model is None:
            import fasttext

            self._model = fasttext.load_model(self._model_path)

    def load_model(self) -> None:
        """NeMo Curator's name for loading the model (once)."""
        self.setup()

    def __getstate__(self) -> dict:
        return {**self.__dict__, self._model_attr: None}

    @staticmethod
    def _clean(text: str) -> str:
        return text.replace("\n", " ").replace("__label__", " ")

    def _predict(self, texts: pa.Array, k: int = 1) -> tuple[list, list]:
        ensure_setup(self)
        lines = [self._clean(t) for t in texts.to_pylist()]
        labels, probs = self._model.predict(lines, k=k)
        return labels, probs


class FastTextQualityFilter(_FastText):
    """Scores documents with a fastText quality classifier as NeMo Curator does: the top label's
    probability ``p`` when the top label is ``label`` (default ``__label__hq``), else ``1 - p``
    (with two labels this is the probability of ``label``; with three or more it is not).
    ``nemo_score=False``: the probability of ``label`` itself. As NeMo Curator, keeps a document when
    ``Pareto(alpha) noise > 1 - score`` (default ``alpha=3``; the noise is NumPy's legacy
    generator seeded with ``seed`` for each batch, so runs are reproducible). ``alpha=None``
    keeps documents scoring at least ``threshold`` instead. ``label_field``: also store the top
    label (without ``__label__``)."""

    _model_attr = "_fasttext_quality_filter_model"

    def __init__(self, model_path: str | None = None, label: str = "__label__hq",
                 alpha: float | None = 3, seed: int = 42, threshold: float = 0.5,
                 label_field: str | None = None, nemo_score: bool = True) -> None:
        super().__init__(model_path or "")
        self._label, self._alpha, self._seed = label, alpha, seed
        self._threshold, self._label_field = threshold, label_field
        self._nemo_score = nemo_score

    def score_batch_with_extras(self, texts: pa.Array) -> tuple[Any, dict[str, Any]]:
        labels, probs = self._predict(texts, k=1 if self._nemo_score else -1)
        if self._nemo_score:
            scores = np.array([(float(ps[0]) if ls[0] == self._label else 1.0 - float(ps[0]))
                               if len(ls) else 0.0
                               for ls, ps in zip(labels, probs, strict=True)], dtype=np.float64)
        else:
            scores = np.array([dict(zip(ls, ps, strict=True)).get(self._label, 0.0)
                               for ls, ps in zip(labels, probs, strict=True)], dtype=np.float64)
        extras = {}
        if self._label_field:
            extras[self._label_field] = [ls[0].removeprefix("__label__") if len(ls) else None
                                         for ls in labels]
        return scores, extras

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return self.score_batch_with_extras(texts)[0]

    def score_document(self, text: str) -> float:
        return float(self.score_batch(pa.array([text]))[0])

    def keep_document(self, score: float) -> bool:
        return bool(self.keep_batch(pa.array([score]))[0].as_py())

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        if self._alpha is None:
            return pc.greater_equal(scores, self._threshold)
        noise = np.random.RandomState(self._seed).pareto(self._alpha, len(scores))
        return pa.array(noise > 1 - scores.to_numpy(zero_copy_only=False))


def _lang_matches(lang: str, wanted: str) -> bool:
    """NeMo Curator's rule: ``eng_Latn`` must match exactly, ``eng`` matches any script
    (case-insensitive)."""
    lang, wanted = lang.casefold(), wanted.casefold()
    return lang == wanted if "_" in wanted else lang.split("_", 1)[0] == wanted


class FastTextLangId(_FastText):
    """Identifies the language with a fastText lid model. As NeMo Curator, the score is the
    string ``str([probability, label])`` with the label as in the model without ``__label__``
    (``"[0.98, 'eng_Latn']"``, ``"[0.97, 'en']"``); keeps documents with probability at least
    ``min_langid_score`` and, with ``lang``, of that language (``eng`` matches any script,
    ``eng_Latn`` exactly; case-insensitive).

    Parameters (additions): ``languages``: keep any of several languages (same rule);
    ``label_field``: also store the label in this column; ``numeric_score=True``: the score is
    the probability as a float (then give ``label_field`` to keep the label)."""

    _model_attr = "_fasttext_langid_model"

    def __init__(self, model_path: str | None = None, min_langid_score: float = 0.3,
                 lang: str | None = None, label_field: str | None = None,
                 languages: list[str] | None = None, numeric_score: bool = False) -> None:
        super().__init__(model_path or "")
        self._min, self._label_field, self._numeric = min_langid_score, label_field, numeric_score
        self._languages = [*([lang] if lang else []), *(languages or [])] or None
        self._last_langs: list[str] = []

    def _keep_lang(self, lang: str) -> bool:
        return self._languages is None or any(_lang_matches(lang, w) for w in self._languages)

    def score_batch_with_extras(self, texts: pa.Array) -> tuple[Any, dict[str, Any]]:
        ensure_setup(self)
        lines = [t.strip().replace("\n", " ") for t in texts.to_pylist()]
        labels, probs = self._model.predict(lines, k=1)
        langs = [ls[0].removeprefix("__label__") if len(ls) else "" for ls in labels]
        probs = [float(p[0]) if len(p) else 0.0 for p in probs]
        self._last_langs = langs
        extras = {self._label_field: langs} if self._label_field else {}
        if self._numeric:
            return np.array(probs, dtype=np.float64), extras
        return [str([p, lang]) for p, lang in zip(probs, langs, strict=True)], extras

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        return self.score_batch_with_extras(texts)[0]

    def score_document(self, text: str) -> float | str:
        return self.score_batch(pa.array([text]))[0]

    def keep_document(self, score: float | str) -> bool:
        if isinstance(score, str):
            prob, lang = ast.literal_eval(score)
            return prob >= self._min and self._keep_lang(lang)
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        if not self._numeric:
            return pa.array([self.keep_document(s) for s in scores.to_pylist()], pa.bool_())
        keep = pc.greater_equal(scores, self._min)
        if self._languages is not None and len(self._last_langs) == len(scores):
            keep = pc.and_(keep, pa.array([self._keep_lang(x) for x in self._last_langs]))
        return keep
