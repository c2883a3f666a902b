"""The Nemotron-CC synthetic-data stages (NeMo Curator's names and defaults).

Generation stages (one request per document, see :class:`BaseSyntheticStage`):
:class:`WikipediaParaphrasingStage` (low-quality documents), :class:`DiverseQAStage`,
:class:`DistillStage`, :class:`ExtractKnowledgeStage`, :class:`KnowledgeListStage`
(high-quality documents). Post-processing stages reshape the raw answers by NeMo Curator's rules
and send the answers those rules reject to the rejected-records sink with the reason:
:class:`DiverseQAPostProcessingStage`, :class:`KnowledgeListPostProcessingStage`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from curator import ProcessingStage
from curator_text.tasks import DocumentBatch

from curator_llm.synthetic.nemotron_cc.base import BaseSyntheticStage
from curator_llm.synthetic.nemotron_cc.prompts import (
    DISTILL_PROMPT_TEMPLATE,
    DIVERSE_QA_PROMPT_TEMPLATE,
    EXTRACT_KNOWLEDGE_PROMPT_TEMPLATE,
    KNOWLEDGE_LIST_PROMPT_TEMPLATE,
    NEMOTRON_CC_DISTILL_SYSTEM_PROMPT,
    NEMOTRON_CC_SYSTEM_PROMPT,
    WIKIPEDIA_REPHRASING_PROMPT_TEMPLATE,
)

__all__ = [
    "WikipediaParaphrasingStage",
    "DiverseQAStage",
    "DiverseQAPostProcessingStage",
    "DistillStage",
    "ExtractKnowledgeStage",
    "KnowledgeListStage",
    "KnowledgeListPostProcessingStage",
    "QA_UNPARSABLE",
    "KNOWLEDGE_LIST_EMPTY",
]

QA_UNPARSABLE = "diverse_qa_unparsable"
"""Reason of a DiverseQA answer with no question-answer pair that NeMo's rules can parse."""

KNOWLEDGE_LIST_EMPTY = "knowledge_list_empty"
"""Reason of a knowledge-list answer with no item left after NeMo's reshaping."""

DIVERSE_QA_PREFIX = "Here are the questions and answers based on the provided text:"


@dataclass
class WikipediaParaphrasingStage(BaseSyntheticStage):
    """Rephrases each document in Wikipedia style (Nemotron-CC's task for low-quality
    documents): ``input_field`` ``"text"`` -> ``output_field`` ``"rephrased"``. The answer starts
    with ``"Here is a paraphrased version:"`` (remove it with a ``Slicer``)."""

    system_prompt: str = NEMOTRON_CC_SYSTEM_PROMPT
    prompt: str = WIKIPEDIA_REPHRASING_PROMPT_TEMPLATE
    input_field: str = "text"
    output_field: str = "rephrased"
    name: str = "WikipediaParaphrasing"


@dataclass
class DiverseQAStage(BaseSyntheticStage):
    """Writes question-answer pairs of varied kinds about each document: ``"text"`` ->
    ``"diverse_qa"`` (raw answer; :class:`DiverseQAPostProcessingStage` parses it).
    ``tokenizer``, ``prefix`` and ``max_num_pairs`` are NeMo Curator's fields, kept so
    configurations carry over; the post-processing stage is the one that uses them."""

    system_prompt: str = NEMOTRON_CC_SYSTEM_PROMPT
    prompt: str = DIVERSE_QA_PROMPT_TEMPLATE
    input_field: str = "text"
    output_field: str = "diverse_qa"
    tokenizer: Any = None  # a transformers tokenizer
    prefix: str = DIVERSE_QA_PREFIX
    max_num_pairs: int = 10
    name: str = "DiverseQA"


@dataclass
class DistillStage(BaseSyntheticStage):
    """Distills each document into a concise, clear paraphrase: ``"text"`` -> ``"distill"``.
    The answer starts with ``"Paraphrased Text:"``."""

    system_prompt: str = NEMOTRON_CC_DISTILL_SYSTEM_PROMPT
    prompt: str = DISTILL_PROMPT_TEMPLATE
    input_field: str = "text"
    output_field: str = "distill"
    name: str = "Distill"


@dataclass
class ExtractKnowledgeStage(BaseSyntheticStage):
    """Rewrites the knowledge of each document as textbook-like passages: ``"text"`` ->
    ``"extract_knowledge"`` (``"Passage:"`` heading lines; remove them with a
    ``LineRemover``)."""

    system_prompt: str = NEMOTRON_CC_SYSTEM_PROMPT
    prompt: str = EXTRACT_KNOWLEDGE_PROMPT_TEMPLATE
    input_field: str = "text"
    output_field: str = "extract_knowledge"
    name: str = "ExtractKnowledge"


@dataclass
class KnowledgeListStage(BaseSyntheticStage):
    """Lists the key facts of each document: ``"text"`` -> ``"knowledge_list"`` (raw
    answer; :class:`KnowledgeListPostProcessingStage` reshapes it)."""

    system_prompt: str = NEMOTRON_CC_SYSTEM_PROMPT
    prompt: str = KNOWLEDGE_LIST_PROMPT_TEMPLATE
    input_field: str = "text"
    output_field: str = "knowledge_list"
    name: str = "KnowledgeList"


def parse_qa_pairs(generated: str, prefix: str = DIVERSE_QA_PREFIX) -> tuple[list[str], str]:
    """NeMo Curator's DiverseQA parsing: the question-answer pairs of ``generated`` (each
    ``"Question: ..."`` with the lines that follow it) and ``""``, or no pairs and why.

    Blank lines are dropped, a leading ``"- "`` is removed from each line, and a first line
    equal to ``prefix`` is skipped; any other line before the first ``"Question:"`` line makes
    the whole answer unparsable."""
    lines = [line.strip() for line in generated.split("\n") if line.strip()]
    if not lines:
        return [], "the answer is empty"
    lines = [line[2:].strip() if line.startswith("- ") else line for line in lines]
    if lines[0] == prefix:
        lines = lines[1:]
    pairs: list[str] = []
    for line in lines:
        if line.startswith("Question:"):
            pairs.append(line)
        elif pairs:
            pairs[-1] += "\n" + line
        else:
            return [], f"a line before the first 'Question:' line: {line[:80]!r}"
    if not pairs:
        return [], "no line starts with 'Question:'"
    return pairs, ""


@dataclass
class DiverseQAPostProcessingStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Parses the raw DiverseQA answers in ``qa_field`` by NeMo Curator's rules
    (:func:`parse_qa_pairs`), shuffles the pairs, keeps a random number of them (1 to
    ``max_num_pairs``; with a ``tokenizer``, up to ``max_num_pairs * tokens(text) / 150``), and
    writes ``f"{text}\\n\\n{pairs joined by blank lines}"`` back to ``qa_field``.

    An answer NeMo Curator would turn into ``""`` (nothing parsable), or a null one, goes to the
    rejected-records sink with the reason instead, and its row leaves the batch. The shuffle and
    the number kept come from a random generator seeded with ``seed`` and the row's text and
    answer, so a re-run gives the same output (NeMo Curator uses the unseeded global
    ``random``).
    """

    input_field: str = "text"
    qa_field: str = "diverse_qa"
    tokenizer: Any = None  # a transformers tokenizer
    prefix: str = DIVERSE_QA_PREFIX
    max_num_pairs: int = 10
    seed: int = 0
    name: str = "DiverseQAPostProcessing"
    modality = "text"

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.input_field, self.qa_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.qa_field]

    def _format(self, text: str, pairs: list[str]) -> str:
        rng = random.Random(f"{self.seed}\x00{text}\x00{chr(1).join(pairs)}")
        rng.shuffle(pairs)
        if self.tokenizer is not None:
            num_tokens = len(self.tokenizer.tokenize(text))
            upper = max(1, int(self.max_num_pairs * num_tokens / 150))
        else:
            upper = self.max_num_pairs
        pairs = pairs[: rng.randint(1, upper)]
        return f"{text}\n\n" + "\n\n".join(pairs)

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        df = batch.to_pandas()
        keep: list[int] = []
        values: list[str] = []
        for i, row in enumerate(df.to_dict(orient="records")):
            generated = row.get(self.qa_field)
            if not isinstance(generated, str):
                self.reject(batch, QA_UNPARSABLE, record=row,
                            error=f"'{self.qa_field}' is {generated!r}, not an answer")
                continue
            pairs, why = parse_qa_pairs(generated, self.prefix)
            if not pairs:
                self.reject(batch, QA_UNPARSABLE, record=row, error=why)
                continue
            keep.append(i)
            values.append(self._format(str(row[self.input_field]), pairs))
        out = df.iloc[keep].copy() if len(keep) != len(df) else df.copy()
        out[self.qa_field] = values
        return batch.derive(out.reset_index(drop=True))


def format_knowledge_list(generated: str) -> str:
    """NeMo Curator's knowledge-list reshaping: a first line that is not a ``-`` item is
    dropped; a leading ``"- "`` or two-space indent is removed from the other lines."""
    lines: list[str] = []
    for idx, line in enumerate(generated.split("\n")):
        if idx == 0 and not line.startswith("-"):
            continue
        if line.startswith(("  ", "- ")):
            lines.append(line[2:].strip())
        else:
            lines.append(line)
    return "\n".join(lines)


@dataclass
class KnowledgeListPostProcessingStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Reshapes the raw knowledge lists in ``input_field`` in place by NeMo Curator's rules
    (:func:`format_knowledge_list`): one item per line, bullets and indents removed.

    A null answer, or one with nothing left after reshaping, goes to the rejected-records sink
    with the reason (NeMo Curator writes ``""``) and its row leaves the batch."""

    input_field: str = "knowledge_list"
    name: str = "KnowledgeListPostProcessing"
    modality = "text"

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.input_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.input_field]

    def process(self, batch: DocumentBatch) -> DocumentBatch:
        df = batch.to_pandas()
        keep: list[int] = []
        values: list[str] = []
        for i, row in enumerate(df.to_dict(orient="records")):
            generated = row.get(self.input_field)
            formatted = format_knowledge_list(generated) if isinstance(generated, str) else ""
            if not formatted.strip():
                self.reject(batch, KNOWLEDGE_LIST_EMPTY, record=row,
                            error="no list item left after reshaping" if isinstance(
                                generated, str) else f"'{self.input_field}' is {generated!r}")
                continue
            keep.append(i)
            values.append(formatted)
        out = df.iloc[keep].copy() if len(keep) != len(df) else df.copy()
        out[self.input_field] = values
        return batch.derive(out.reset_index(drop=True))
