"""PiiModifier (NeMo Curator's name and parameters) and PiiRedactionStage (adds a ``pii`` count
column and per-entity counts). Presidio's analyzer runs with pattern recognizers only unless a
local spaCy NER model is given; its default NLP engine (which wants to download a spaCy model) is
never used."""

from __future__ import annotations

import logging
import os
from collections import Counter
from typing import Any

import pyarrow as pa
from curator.errors import ConfigError
from curator.stages.base import ProcessingStage, StageIO
from curator.stages.lifecycle import ensure_setup

from curator_text.modifiers.base import DocumentModifier
from curator_text.tasks import DocumentBatch

__all__ = ["PiiModifier", "PiiRedactionStage", "PATTERN_ENTITIES", "NER_ENTITIES",
           "ACTIONS", "PII_COUNTER"]

log = logging.getLogger(__name__)

PATTERN_ENTITIES = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IP_ADDRESS", "IBAN_CODE",
                    "US_SSN", "URL")
"""Entities found by Presidio's pattern recognizers (no model needed; credit cards are Luhn-
checked, IBANs checksum-checked)."""
NER_ENTITIES = ("PERSON", "LOCATION")
"""Entities that need ``ner_model`` (a local spaCy pipeline directory or installed package)."""
ACTIONS = ("redact", "replace", "mask", "hash")
PII_COUNTER = "pii_entities"
"""The stage counter (``ProcessingStage.publish_counts``) of PII spans replaced, by entity type:
summed over workers in ``result.stats.stages[i].counters`` and shown in the run summary and
reports."""


def _pattern_recognizers(language: str) -> list[Any]:
    import tldextract
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
        UrlRecognizer,
        UsSsnRecognizer,
    )

    # Presidio's EmailRecognizer checks the domain with tldextract's default extractor, which
    # fetches the Public Suffix List from the internet; use the list bundled with tldextract.
    offline = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(),
                                    fallback_to_snapshot=True)

    class OfflineEmailRecognizer(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            return offline(pattern_text).fqdn != ""

    return [cls(supported_language=language) for cls in (
        OfflineEmailRecognizer, PhoneRecognizer, CreditCardRecognizer, IpRecognizer,
        IbanRecognizer, UsSsnRecognizer, UrlRecognizer)]


def _token_only_engine(language: str) -> Any:
    """A Presidio NLP engine on a blank spaCy tokenizer: tokens for context words, no NER, no
    model files."""
    import spacy
    from presidio_analyzer.nlp_engine import NlpArtifacts, NlpEngine

    class TokenOnlyNlpEngine(NlpEngine):
        def __init__(self) -> None:
            self.nlp = None

        def load(self) -> None:
            self.nlp = spacy.blank(language)

        def is_loaded(self) -> bool:
            return self.nlp is not None

        def _artifacts(self, doc: Any) -> Any:
            return NlpArtifacts(entities=[], tokens=doc, tokens_indices=[t.idx for t in doc],
                                lemmas=[t.lower_ for t in doc], nlp_engine=self,
                                language=language)

        def process_text(self, text: str, language: str) -> Any:
            return self._artifacts(self.nlp(text))

        def process_batch(self, texts: Any, language: str, batch_size: int = 1,
                          n_process: int = 1, **kwargs: Any) -> Any:
            texts = list(texts)
            for text, doc in zip(texts, self.nlp.pipe(texts), strict=True):
                yield text, self._artifacts(doc)

        def is_stopword(self, word: str, language: str) -> bool:
            return self.nlp.vocab[word].is_stop

        def is_punct(self, word: str, language: str) -> bool:
            return self.nlp.vocab[word].is_punct

        def get_supported_entities(self) -> list[str]:
            return []

        def get_supported_languages(self) -> list[str]:
            return [language]

    engine = TokenOnlyNlpEngine()
    engine.load()
    return engine


class PiiModifier(DocumentModifier):
    """Finds PII with Presidio's analyzer and rewrites it with its anonymizer (use it with
    ``Modify``, or with :class:`PiiRedactionStage` to also count what was found).

    Parameters (NeMo Curator's):
        language: two-letter language code (the recognizers' language).
        supported_entities: entity types to find (default: all of :data:`PATTERN_ENTITIES`, plus
            :data:`NER_ENTITIES` when ``ner_model`` is given).
        anonymize_action: ``"redact"`` (delete), ``"replace"`` (``<ENTITY_TYPE>`` or
            ``new_value``), ``"mask"`` (``chars_to_mask`` x ``masking_char``) or ``"hash"``
            (``hash_type``: sha256, sha512).
        batch_size: texts per NLP batch. device: accepted for compatibility (CPU only).
        ner_model: a local spaCy pipeline (directory or installed package name) enabling
            PERSON and LOCATION; nothing is downloaded.
        score_threshold: drop detections scored below this (Presidio's default 0).
        **kwargs: the action's options: new_value, chars_to_mask, masking_char, hash_type.
    """

    def __init__(self, language: str = "en", supported_entities: list[str] | None = None,
                 anonymize_action: str = "redact", batch_size: int = 2000,
                 device: str = "cpu", ner_model: str | None = None,
                 score_threshold: float = 0.0, **kwargs: Any) -> None:
        if anonymize_action not in ACTIONS:
            raise ConfigError(f"PiiModifier: anonymize_action must be one of {ACTIONS}, got "
                              f"{anonymize_action!r}")
        available = PATTERN_ENTITIES + (NER_ENTITIES if ner_model else ())
        entities = list(supported_entities or available)
        unknown = [e for e in entities if e not in PATTERN_ENTITIES + NER_ENTITIES]
        if unknown:
            raise ConfigError(f"PiiModifier: supported_entities {unknown} are not supported; "
                              f"choose from {list(PATTERN_ENTITIES + NER_ENTITIES)}")
        needs_ner = [e for e in entities if e in NER_ENTITIES]
        if needs_ner and not ner_model:
            raise ConfigError(f"PiiModifier: supported_entities {needs_ner} need an NER model: "
                              f"pass ner_model= a local spaCy pipeline directory")
        if ner_model and not (os.path.isdir(ner_model) or _spacy_package(ner_model)):
            raise ConfigError(f"PiiModifier: ner_model={ner_model!r} is neither a local "
                              f"directory nor an installed spaCy package")
        allowed = {"new_value", "chars_to_mask", "masking_char", "hash_type", "from_end"}
        if set(kwargs) - allowed:
            raise TypeError(f"PiiModifier: unknown options {sorted(set(kwargs) - allowed)}; "
                            f"allowed: {sorted(allowed)}")
        self.language, self.supported_entities = language, entities
        self.anonymize_action, self.batch_size, self.device = anonymize_action, batch_size, device
        self.ner_model, self.score_threshold, self.kwargs = ner_model, score_threshold, kwargs
        self._analyzer: Any = None
        self._anonymizer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = {**self.__dict__, "_analyzer": None, "_anonymizer": None}
        state.pop("_found", None)
        return state

    def setup(self) -> None:
        if self._analyzer is not None:
            return
        try:
            from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
            from presidio_anonymizer import AnonymizerEngine
        except ImportError as e:
            raise ImportError("PiiModifier needs Presidio: install curator-text[pii]") from e
        recognizers = _pattern_recognizers(self.language)
        if self.ner_model:
            from presidio_analyzer.nlp_engine import SpacyNlpEngine
            from presidio_analyzer.predefined_recognizers import SpacyRecognizer

            engine = SpacyNlpEngine(models=[{"lang_code": self.language,
                                             "model_name": self.ner_model}])
            engine.load()
            recognizers.append(SpacyRecognizer(supported_language=self.language,
                                               supported_entities=list(NER_ENTITIES)))
        else:
            engine = _token_only_engine(self.language)
        registry = RecognizerRegistry(recognizers=recognizers,
                                      supported_languages=[self.language])
        self._analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine,
                                        supported_languages=[self.language],
                                        default_score_threshold=self.score_threshold)
        self._anonymizer = AnonymizerEngine()

    def _operators(self) -> dict[str, Any]:
        from presidio_anonymizer.entities import OperatorConfig

        kw = self.kwargs
        params = {"redact": {},
                  "replace": {"new_value": kw["new_value"]} if "new_value" in kw else {},
                  "mask": {"chars_to_mask": kw.get("chars_to_mask", 100),
                           "masking_char": kw.get("masking_char", "*"),
                           "from_end": kw.get("from_end", False)},
                  "hash": {"hash_type": kw.get("hash_type", "sha256")}}[self.anonymize_action]
        return {"DEFAULT": OperatorConfig(self.anonymize_action, params)}

    def redact(self, text: str) -> tuple[str, Counter]:
        """``(anonymized text, Counter of entity types replaced)`` for one text."""
        ensure_setup(self)
        if not text:
            return text, Counter()
        found = self._analyzer.analyze(text=text, language=self.language,
                                       entities=self.supported_entities)
        if not found:
            return text, Counter()
        result = self._anonymizer.anonymize(text=text, analyzer_results=found,
                                            operators=self._operators())
        counts = Counter(item.entity_type for item in result.items)
        self.__dict__.setdefault("_found", Counter()).update(counts)
        return result.text, counts

    def drain_counts(self) -> dict[str, dict[str, int]]:
        """``{PII_COUNTER: {entity type: spans replaced}}`` since the last call (what a stage
        applying this modifier publishes with ``publish_counts``)."""
        found = self.__dict__.pop("_found", None)
        return {PII_COUNTER: dict(sorted(found.items()))} if found else {}

    def analyze(self, text: str) -> list[tuple[int, int, str]]:
        """The ``(start, end, entity_type)`` spans the analyzer finds in ``text``."""
        ensure_setup(self)
        return [(r.start, r.end, r.entity_type) for r in self._analyzer.analyze(
            text=text, language=self.language, entities=self.supported_entities)]

    def modify_document(self, text: str) -> str:
        return self.redact(text or "")[0]


def _spacy_package(name: str) -> bool:
    try:
        import spacy.util

        return bool(spacy.util.is_package(name))
    except ImportError:
        return False


class PiiRedactionStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Redacts ``text_field`` with a :class:`PiiModifier` and adds ``count_field`` (number of PII
    spans replaced per document, int32). Per-entity counts of the task go to its metadata
    (``metadata["pii_counts"]``, e.g. ``{"EMAIL_ADDRESS": 3}``), to the log and to the stage
    counter :data:`PII_COUNTER` (summed over the run in ``result.stats``, the summary and the
    run reports).

    Parameters:
        modifier: the configured :class:`PiiModifier` (default: ``PiiModifier()``).
        text_field: the column redacted in place. count_field: the count column (``"pii"``).
    """

    name = "PiiRedactionStage"
    modality = "text"
    kind = "modifier"
    worker_mode = "process"

    def __init__(self, modifier: PiiModifier | None = None, *, text_field: str = "text",
                 count_field: str = "pii") -> None:
        if modifier is not None and not isinstance(modifier, PiiModifier):
            raise TypeError(f"PiiRedactionStage: modifier must be a PiiModifier, got "
                            f"{type(modifier).__name__}")
        self.modifier = modifier or PiiModifier()
        self.text_field, self.count_field = text_field, count_field

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        return ["data"], [self.text_field, self.count_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        ensure_setup(self.modifier)

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        self.modifier.drain_counts()  # counted below, per task
        texts, counts, total = [], [], Counter()
        for text in table[self.text_field].to_pylist():
            if text is None:
                texts.append(None)
                counts.append(0)
                continue
            new, c = self.modifier.redact(text)
            texts.append(new)
            counts.append(sum(c.values()))
            total.update(c)
        i = table.column_names.index(self.text_field)
        table = table.set_column(i, self.text_field, pa.array(texts, pa.string()))
        col = pa.array(counts, pa.int32())
        if self.count_field in table.column_names:
            table = table.set_column(table.column_names.index(self.count_field),
                                     self.count_field, col)
        else:
            table = table.append_column(self.count_field, col)
        out = task.derive(table)
        out.metadata["pii_counts"] = dict(sorted(total.items()))
        self.publish_counts(PII_COUNTER, total)
        if total:
            log.info("%s: task %s: %s", self.name, task.task_id, dict(total))
        return out
