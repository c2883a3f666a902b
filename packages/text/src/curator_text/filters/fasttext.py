"""fastText classifiers as document filters: quality (hq/lq) and language identification.
Models load from a local ``model_path`` in ``setup()``; ``fasttext`` is imported there."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters.base import DocumentFilter

__all__ = ["FastTextQualityFilter", "FastTextLangId"]


class _FastText(DocumentFilter):
    vectorized = True

    def __init__(self, model_path: str) -> None:
        super().__init__()
        if not model_path:
            raise ValueError(f"{type(self).__name__}: model_path (a local .bin file) is required")
        self._model_path = model_path
        self._model: Any = None

    def setup(self) -> None:
        if self._model is None:
            import fasttext  # noqa: PLC0415

            self._model = fasttext.load_model(self._model_path)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None}

    def _predict(self, texts: pa.Array, k: int = 1) -> tuple[list, list]:
        self.setup()
        lines = [t.replace("\n", " ") for t in texts.to_pylist()]
        labels, probs = self._model.predict(lines, k=k)
        return labels, probs


class FastTextQualityFilter(_FastText):
    """Scores documents with a fastText quality classifier: the score is the probability of
    ``label`` (default ``__label__hq``). Keeps documents scoring ≥ ``threshold``; with
    ``alpha`` set, keeps as NeMo Curator does (score > 1 - Pareto(alpha) noise, seeded)."""

    def __init__(self, model_path: str, label: str = "__label__hq", alpha: float | None = None,
                 seed: int = 42, threshold: float = 0.5, label_field: str | None = None) -> None:
        super().__init__(model_path)
        self._label, self._alpha, self._seed = label, alpha, seed
        self._threshold, self._label_field = threshold, label_field

    def score_batch_with_extras(self, texts: pa.Array) -> tuple[Any, dict[str, Any]]:
        labels, probs = self._predict(texts, k=-1)
        scores = np.array([dict(zip(ls, ps, strict=True)).get(self._label, 0.0)
                           for ls, ps in zip(labels, probs, strict=True)], dtype=np.float64)
        extras = {}
        if self._label_field:
            extras[self._label_field] = [ls[0].replace("__label__", "") if len(ls) else None
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
        rng = np.random.default_rng(self._seed)
        noise = rng.pareto(self._alpha, len(scores))
        return pa.array(scores.to_numpy(zero_copy_only=False) > 1 - noise)


class FastTextLangId(_FastText):
    """Identifies the language with a fastText lid model: the score is the top probability and
    ``label_field`` (default ``language``) receives the language code. Keeps documents with a
    score ≥ ``min_langid_score`` (and, with ``languages``, only those languages)."""

    def __init__(self, model_path: str, min_langid_score: float = 0.3,
                 label_field: str = "language", languages: list[str] | None = None) -> None:
        super().__init__(model_path)
        self._min, self._label_field = min_langid_score, label_field
        self._languages = set(languages) if languages else None
        self._last_langs: list[str] = []

    def score_batch_with_extras(self, texts: pa.Array) -> tuple[Any, dict[str, Any]]:
        labels, probs = self._predict(texts, k=1)
        langs = [ls[0].replace("__label__", "").upper() if len(ls) else "" for ls in labels]
        scores = np.array([float(p[0]) if len(p) else 0.0 for p in probs])
        self._last_langs = langs
        return scores, {self._label_field: langs}

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return self.score_batch_with_extras(texts)[0]

    def score_document(self, text: str) -> float:
        return float(self.score_batch(pa.array([text]))[0])

    def keep_document(self, score: float) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        keep = pc.greater_equal(scores, self._min)
        if self._languages is not None and len(self._last_langs) == len(scores):
            ok = pa.array([lang in self._languages for lang in self._last_langs])
            keep = pc.and_(keep, ok)
        return keep
