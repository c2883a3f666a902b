"""A small real text corpus with no download: prose paragraphs of the Python language reference
that ships with every Python (``pydoc_data.topics``), one document per topic."""

from __future__ import annotations

import json
import os

__all__ = ["TOPICS", "documents", "write_corpus"]

TOPICS = ("for", "while", "with", "try", "if", "lambda", "import", "class", "truth", "booleans",
          "assert", "return")


def _prose(text: str, max_chars: int) -> str:
    """The topic's prose paragraphs (no title, grammar or code blocks), up to ``max_chars``."""
    paragraphs: list[str] = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if any(line.startswith((" ", "*", "=")) for line in lines) or not block.strip():
            continue
        paragraphs.append(" ".join(line.strip() for line in lines))
    out = ""
    for p in paragraphs[1:] if len(paragraphs) > 1 and len(paragraphs[0]) < 40 else paragraphs:
        if out and len(out) + len(p) > max_chars:
            break
        out = f"{out}\n{p}" if out else p
    return out[:max_chars]


def documents(n: int = 4, max_chars: int = 600) -> list[dict[str, object]]:
    """``n`` documents ``{"id", "topic", "text"}`` from the Python language reference."""
    from pydoc_data.topics import topics

    docs = [{"id": i, "topic": t, "text": _prose(topics[t], max_chars)}
            for i, t in enumerate(TOPICS) if t in topics]
    return [d for d in docs if len(str(d["text"])) > 200][:n]


def write_corpus(path: str, n: int = 4, max_chars: int = 600) -> str:
    """Write :func:`documents` as JSONL to ``path`` (atomically); returns ``path``."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for doc in documents(n, max_chars):
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path
