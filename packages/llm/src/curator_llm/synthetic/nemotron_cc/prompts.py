"""Prompts of the Nemotron-CC synthetic-data tasks, under NeMo Curator's names.

The wording is Curator's own, written from the task definitions of the Nemotron-CC paper (Su et
al., 2024, "Nemotron-CC: Transforming Common Crawl into a Refined Long-Horizon Pretraining
Dataset"): low-quality documents are rephrased in Wikipedia style; high-quality documents are
turned into question-answer pairs of varied kinds, distilled into concise clear text,
rewritten as textbook-like knowledge passages, or condensed into a list of key facts.

Every template has one placeholder, ``{document}`` (``template.format(document=text)``), as in
NeMo Curator. The fixed phrases that the post-processing steps look for are kept: the answer
openers ``"Here is a paraphrased version:"`` and ``"Paraphrased Text:"`` (removed by a
``Slicer``), the ``"Question:"`` / ``"Answer:"`` tags and the QA opener line that
:class:`~curator_llm.synthetic.nemotron_cc.nemotron_cc.DiverseQAPostProcessingStage` parses,
``"Passage:"`` headings (removed by a ``LineRemover``) and ``"- "`` bullets.
"""

from __future__ import annotations

__all__ = [
    "NEMOTRON_CC_SYSTEM_PROMPT",
    "NEMOTRON_CC_DISTILL_SYSTEM_PROMPT",
    "WIKIPEDIA_REPHRASING_PROMPT_TEMPLATE",
    "DIVERSE_QA_PROMPT_TEMPLATE",
    "DISTILL_PROMPT_TEMPLATE",
    "EXTRACT_KNOWLEDGE_PROMPT_TEMPLATE",
    "KNOWLEDGE_LIST_PROMPT_TEMPLATE",
]

NEMOTRON_CC_SYSTEM_PROMPT = (
    "You are a knowledgeable writing assistant. You answer a user's request carefully, "
    "completely and courteously, and you stay faithful to the text the user provides."
)
"""System prompt of the rephrasing, QA, knowledge-extraction and knowledge-list tasks."""

NEMOTRON_CC_DISTILL_SYSTEM_PROMPT = (
    "You are an expert editor with strong reasoning skills. You write precise, factual and "
    "well-considered text, and you never add claims the source does not support."
)
"""System prompt of the distill task."""

WIKIPEDIA_REPHRASING_PROMPT_TEMPLATE = """Rewrite the passage below in the style of a Wikipedia article: neutral, encyclopedic, \
well-formed English, with the same facts and nothing added. Vary the wording and sentence structure rather than \
copying the original. Start your reply on its own line with "Here is a paraphrased version:".

Text: {document}"""
"""Low-quality documents: rephrase in Wikipedia style (placeholder ``{document}``)."""

DIVERSE_QA_PROMPT_TEMPLATE = """Task: write question-answer pairs that test understanding of the text below.

Guidelines:
1. Every question must be answerable from the text alone; every answer must be correct and self-contained, \
so that a reader who never saw the text understands it.
2. Use a mix of question kinds: yes/no questions, open questions, multiple-choice questions with the options \
listed, comparisons, and questions that need a short chain of reasoning.
3. Cover the important facts, figures, names and ideas of the text, not minor details.
4. Do not refer to "the text" or "the passage" in the questions.
5. Write in clear English, without markdown.
6. Put each question and each answer on its own line, the question starting with "Question:" and the answer \
starting with "Answer:".
7. Write at most 8 pairs.

Text:
{document}

Reply in this format:
Here are the questions and answers based on the provided text:
- Question: [first question]
- Answer: [first answer]
- Question: [second question]
- Answer: [second answer]
..."""
"""High-quality documents: diverse question-answer pairs (placeholder ``{document}``); parsed by
``DiverseQAPostProcessingStage``."""

DISTILL_PROMPT_TEMPLATE = """Your job is to distill the text below into a shorter, clearer version.

Guidelines:
1. Keep every piece of information that matters: key facts, figures, definitions, arguments and conclusions.
2. Drop filler, repetition, advertising, navigation text and anything unrelated to the main subject.
3. Write plain, well-organised English prose in full sentences, without markdown or lists.
4. Do not add facts, opinions or commentary of your own.

Text:
{document}

Now write the distilled version. Start your reply with "Paraphrased Text:"."""
"""High-quality documents: concise, clear paraphrase (placeholder ``{document}``)."""

EXTRACT_KNOWLEDGE_PROMPT_TEMPLATE = """Your job is to turn the knowledge in the text below into passages that read like a \
textbook or an encyclopedia.

Guidelines:
1. Keep the factual and instructive content: concepts, facts, explanations, procedures, numbers.
2. Leave out personal remarks, advertising, navigation text, dates of posting and other content with no \
lasting value.
3. Rewrite in clear, complete English sentences; do not copy long stretches verbatim.
4. Do not add knowledge that the text does not contain.
5. Give each passage a heading line of the form "Passage:" and keep passages short and focused.

Text:
{document}

Now write the knowledge passages."""
"""High-quality documents: textbook-style knowledge passages (placeholder ``{document}``)."""

KNOWLEDGE_LIST_PROMPT_TEMPLATE = """Read the text below and list the key pieces of information it contains.

Guidelines:
1. One fact, figure, definition or statement per item, written as a complete sentence.
2. Keep only information of lasting value; leave out opinions, advertising and navigation text.
3. Start every item with "- "; indent a continuation line of an item with two spaces.
4. Do not add anything the text does not say.

Text:
{document}

Now write the list of key information."""
"""High-quality documents: bulleted list of key facts (placeholder ``{document}``); reshaped by
``KnowledgeListPostProcessingStage``."""
