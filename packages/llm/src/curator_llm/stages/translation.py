"""LLM translation of long documents: segment, translate each segment, reassemble.

NeMo Curator's names (``nemo_curator.stages.text.experimental.translation``):
:class:`TranslationStage` (composite) = :class:`SegmentationStage` ->
:class:`SegmentTranslationStage` -> :class:`ReassemblyStage`. A long document is split into
lines (``mode="coarse"``) or sentences (``mode="fine"``) so every request stays short; lines
with nothing to translate (blank, numbers, markup, JSON) are carried over as they are; the
translated pieces are joined back with the original separators. A document with a segment whose
request failed after the client's retries goes whole to the rejected-records sink with the
reason; the other documents are kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator import CompositeStage, ProcessingStage
from curator.errors import ConfigError
from curator_text.tasks import DocumentBatch

from curator_llm.stages.generation import as_client, chat_messages, generate
from curator_llm.stages.stats import publish_client_stats

if TYPE_CHECKING:
    from curator.stages.node_info import WorkerMetadata

    from curator_llm.client import AsyncLLMClient, GenerationConfig

__all__ = ["TranslationStage", "SegmentationStage", "SegmentTranslationStage",
           "ReassemblyStage", "TRANSLATION_SYSTEM_PROMPT", "TRANSLATION_PROMPT_TEMPLATE",
           "TRANSLATION_FAILED", "is_line_translatable_content", "split_segments"]

TRANSLATION_SYSTEM_PROMPT = ("You are a careful professional translator. You render the "
                             "meaning of a text faithfully and fluently in the target language.")
TRANSLATION_PROMPT_TEMPLATE = (
    "Translate this {source_lang} text into {target_lang}. Leave code, URLs, XML or HTML tags "
    "and formulas exactly as they are. Reply with the translation only, between \u3018 and "
    "\u3019.\n\n{source_lang}: {src}")
"""User prompt of a segment (placeholders ``{source_lang}``, ``{target_lang}``, ``{src}``)."""

TRANSLATION_FAILED = "llm_translation_failed"
"""Reason of a document one of whose segments could not be translated."""

_SEG = "_seg_segments"
_META = "_seg_metadata"
_DOC = "_seg_doc_id"
_OUT = "_translated"
_ERR = "_seg_error"
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+")


def is_line_translatable_content(line: str) -> bool:
    """Whether ``line`` has something to translate: some letter, and it is not one markup tag
    (``<...>``) or a JSON object/array."""
    stripped = line.strip()
    if not any(ch.isalpha() for ch in stripped):
        return False
    if stripped.startswith("<") and stripped.endswith(">"):
        return False
    if (stripped[:1], stripped[-1:]) in (("{", "}"), ("[", "]")):
        try:
            return not isinstance(json.loads(stripped), dict | list)
        except ValueError:
            return True
    return True


def split_segments(text: str, mode: str = "coarse") -> list[tuple[str, str, bool]]:
    """``text`` as ``(piece, separator after it, translate?)`` triples whose concatenation
    ``piece + separator`` gives back ``text``: one per line (``"coarse"``) or per sentence of
    each line (``"fine"``)."""
    out: list[tuple[str, str, bool]] = []
    for line in re.split(r"(?<=\n)", text):
        body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if mode == "fine" and is_line_translatable_content(body):
            parts = _SENTENCE_END.split(body)
            seps = _SENTENCE_END.findall(body)
            for i, part in enumerate(parts):
                sep = seps[i] if i < len(seps) else newline
                out.append((part, sep, is_line_translatable_content(part)))
        elif body or newline:
            out.append((body, newline, is_line_translatable_content(body)))
    return out


@dataclass(kw_only=True)
class SegmentationStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Splits each document's ``text_field`` into segments, one output row per segment
    (columns ``_seg_segments``, ``_seg_metadata``, ``_seg_doc_id`` beside the document's own),
    for :class:`SegmentTranslationStage`; :class:`ReassemblyStage` joins them back.
    ``mode``: ``"coarse"`` (lines) or ``"fine"`` (sentences, split on end punctuation).
    A document shorter than ``min_segment_chars`` is one segment. Rows where ``skipme_field``
    is set and not 0 pass through untranslated."""

    source_lang: str
    text_field: str = "text"
    mode: str = "coarse"
    min_segment_chars: int = 0
    skipme_field: str | None = None
    name: str = "SegmentationStage"
    modality = "text"

    def __post_init__(self) -> None:
        self.source_lang = self.source_lang.strip()
        if not self.source_lang:
            raise ConfigError("SegmentationStage requires a non-empty 'source_lang'")
        if not isinstance(self.text_field, str) or "*" in self.text_field:
            raise ConfigError(f"{self.name}: text_field must be one column name; lists of "
                              f"fields and wildcard paths ({self.text_field!r}) are not "
                              f"offered (see docs/migrating-from-nemo-curator.md)")
        if self.mode not in ("coarse", "fine"):
            raise ConfigError(f"{self.name}: mode must be 'coarse' or 'fine', got {self.mode!r}")

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [_SEG, _META, _DOC]

    def _units(self, text: Any, skip: bool) -> list[tuple[str, str, bool]]:
        if not isinstance(text, str):
            return [("", "", False)]
        if skip or (self.min_segment_chars > 0 and len(text) < self.min_segment_chars):
            return [(text, "", not skip and is_line_translatable_content(text))]
        return split_segments(text, self.mode) or [("", "", False)]

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        import pandas as pd

        df = batch.to_pandas()
        rows: list[dict[str, Any]] = []
        for doc, record in enumerate(df.to_dict(orient="records")):
            skip = self.skipme_field is not None and record.get(self.skipme_field) not in (0, None)
            units = self._units(record[self.text_field], skip)
            for i, (piece, sep, translate) in enumerate(units):
                meta = {"index": i, "count": len(units), "separator": sep,
                        "translate": translate}
                rows.append({**record, _SEG: piece, _META: json.dumps(meta), _DOC: doc})
        columns = [*df.columns, _SEG, _META, _DOC]
        return batch.derive(pd.DataFrame(rows, columns=columns))


@dataclass(kw_only=True)
class SegmentTranslationStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Translates each segment row made by :class:`SegmentationStage` from ``source_lang`` to
    ``target_lang`` through ``client`` / ``model_name`` (``_translated`` column); segments with
    nothing to translate are copied. The answer is the text between the last ``\u3018`` and
    ``\u3019`` when the model used them, else the whole answer, stripped. A segment whose request
    failed keeps the reason in ``_seg_error`` so :class:`ReassemblyStage` rejects its
    document whole."""

    source_lang: str
    target_lang: str
    client: AsyncLLMClient | None = None
    model_name: str = ""
    generation_config: GenerationConfig | None = None
    system_prompt: str = TRANSLATION_SYSTEM_PROMPT
    prompt_template: str = TRANSLATION_PROMPT_TEMPLATE
    name: str = "SegmentTranslationStage"
    modality = "text"

    def __post_init__(self) -> None:
        self.client = as_client(self.client)
        if self.client is None or not self.model_name:
            raise ConfigError(f"{self.name}: give client= (e.g. AsyncOpenAIClient(base_url=...)) "
                              f"and model_name= of the served model")

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [_SEG, _META]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [_OUT, _ERR]

    def setup(self, worker_metadata: WorkerMetadata | None = None) -> None:
        self.client.setup()

    @staticmethod
    def _extract(answer: str) -> str:
        left, right = answer.rfind("\u3018"), answer.rfind("\u3019")
        if 0 <= left < right:
            return answer[left + 1:right].strip()
        return answer.replace("\u3018", "").replace("\u3019", "").strip()

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        df = batch.to_pandas().copy()
        metas = [json.loads(m) for m in df[_META]]
        todo = [i for i, m in enumerate(metas) if m["translate"]]
        segments = df[_SEG].tolist()
        conversations = [chat_messages(self.system_prompt, self.prompt_template.format(
            source_lang=self.source_lang, target_lang=self.target_lang, src=segments[i]))
            for i in todo]
        generations = generate(self.client, self.model_name, conversations,
                               self.generation_config)
        publish_client_stats(self, self.client)
        translated: list[str | None] = list(segments)
        errors: list[str | None] = [None] * len(segments)
        for i, outcome in zip(todo, generations, strict=True):
            text = self._extract(outcome.texts[0]) if outcome.ok and outcome.texts else ""
            if not outcome.ok:
                translated[i], errors[i] = None, str(outcome)
            elif not text:
                translated[i], errors[i] = None, "the model returned no translation"
            else:
                translated[i] = text
        df[_OUT] = translated
        df[_ERR] = errors
        return batch.derive(df)


@dataclass(kw_only=True)
class ReassemblyStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Joins the translated segments of each document back in order with their original
    separators into ``output_field`` (``replace_source_fields=True``: into ``text_field``
    instead) and drops the segment columns: one row per document again. A document with a
    failed segment goes whole (its original columns) to the rejected-records sink with the
    reasons."""

    text_field: str = "text"
    output_field: str = "translated_text"
    replace_source_fields: bool = False
    name: str = "ReassemblyStage"
    modality = "text"

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [_SEG, _META, _DOC, _OUT]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field if self.replace_source_fields else self.output_field]

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        import pandas as pd

        df = batch.to_pandas()
        seg_cols = {_SEG, _META, _DOC, _OUT, _ERR}
        rows: list[dict[str, Any]] = []
        columns = [c for c in df.columns if c not in seg_cols]
        for _, group in df.groupby(_DOC, sort=True):
            metas = [json.loads(m) for m in group[_META]]
            order = sorted(range(len(metas)), key=lambda k: metas[k]["index"])
            record = {c: group.iloc[0][c] for c in columns}
            errors = [e for e in group.get(_ERR, pd.Series(dtype=object)) if isinstance(e, str)]
            if errors or len(order) != metas[0]["count"]:
                missing = metas[0]["count"] - len(order)
                why = "; ".join(errors) or f"{missing} segment(s) missing"
                self.reject(batch, TRANSLATION_FAILED, record=record, error=why)
                continue
            pieces = group[_OUT].tolist()
            text = "".join(str(pieces[k]) + metas[k]["separator"] for k in order)
            record[self.text_field if self.replace_source_fields else self.output_field] = text
            rows.append(record)
        out_cols = columns + ([] if self.replace_source_fields or self.output_field in columns
                              else [self.output_field])
        return batch.derive(pd.DataFrame(rows, columns=out_cols))


@dataclass(kw_only=True)
class TranslationStage(CompositeStage[DocumentBatch, DocumentBatch]):
    """Translates documents with a served model (NeMo Curator's composite): segmentation by
    lines or sentences (``segmentation_mode``), one request per segment, reassembly into
    ``output_field``. NeMo Curator's ``source_lang``, ``target_lang``, ``text_field`` (one
    column), ``output_field``, ``segmentation_mode``, ``min_segment_chars``, ``client``,
    ``model_name``, ``generation_config`` are offered; its non-LLM backends, faithfulness
    scoring and message reconstruction are not (see the migration guide)."""

    source_lang: str
    target_lang: str
    text_field: str = "text"
    output_field: str = "translated_text"
    segmentation_mode: str = "coarse"
    min_segment_chars: int = 0
    client: AsyncLLMClient | None = None
    model_name: str = ""
    generation_config: GenerationConfig | None = None
    name: str = "TranslationStage"
    modality = "text"

    def __post_init__(self) -> None:
        self.client = as_client(self.client)
        self.source_lang = self.source_lang.strip()
        self.target_lang = self.target_lang.strip()
        if not self.source_lang or not self.target_lang:
            raise ConfigError("TranslationStage requires non-empty 'source_lang' and "
                              "'target_lang'")

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.output_field]

    def decompose(self) -> list[ProcessingStage]:
        return [
            SegmentationStage(source_lang=self.source_lang, text_field=self.text_field,
                              mode=self.segmentation_mode,
                              min_segment_chars=self.min_segment_chars),
            SegmentTranslationStage(source_lang=self.source_lang, target_lang=self.target_lang,
                                    client=self.client, model_name=self.model_name,
                                    generation_config=self.generation_config),
            ReassemblyStage(text_field=self.text_field, output_field=self.output_field),
        ]
