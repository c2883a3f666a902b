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

    def __init__(self, model_path: str) -> None:
        super().__init__()
        if not model_path:
            raise ConfigError(f"{type(self).__name__}: model_path (a local .bin file) is required")
        self._model_path = model_path
        self._model: Any = None

    def setup(self) -> None:
        if self._model is None:
            import fasttext  # noqa: PLC0415

            self._model = fasttext.load_model(self._model_path)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None}

    @staticmethod
    def _clean(text: str) -> str:
        return text.replace("\n", " ").replace("__label__", " ")

    def _predict(self, texts: pa.Array, k: int = 1) -> tuple[list, list]:
        ensure_setup(self)
        lines = [self._clean(t) for t in texts.to_pylist()]
        labels, probs = self._model.predict(lines, k=k)
        return labels, probs


class FastTextQualityFilter(_FastText):
    """Scores documents with a fastText quality classifier: the score is the probability of
    ``label`` (default ``__label__hq``). As NeMo Curator, keeps a document when
    ``Pareto(alpha) noise > 1 - score`` (default ``alpha=3``; the noise is NumPy's legacy
    generator seeded with ``seed`` for each batch, so runs are reproducible). ``alpha=None``
    keeps documents scoring at least ``threshold`` instead. ``label_field``: also store the top
    label (without ``__label__``)."""

    def __init__(self, model_path: str | None = None, label: str = "__label__hq",
                 alpha: float | None = 3, seed: int = 42, threshold: float = 0.5,
                 label_field: str | None = None) -> None:
        super().__init__(model_path or "")
        self._label, self._alpha, self._seed = label, alpha, seed
        self._threshold, self._label_field = threshold, label_field

    def score_batch_with_extras(self, texts: pa.Array) -> tuple[Any, dict[str, Any]]:
        labels, probs = self._predict(texts, k=-1)
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
        noise = np.random.RandomState(self._seed).pareto(self._alpha, len(scores))  # noqa: NPY002
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
