"""TaskDecontamination: NeMo Curator's task-decontamination rules on a hashed n-gram index.

Benchmark texts (questions, answers, ...) from local JSONL/Parquet files become n-grams of
``max_ngram_size`` lower-cased words (a text of ``min_ngram_size`` to ``max_ngram_size - 1``
words is one n-gram of its own length). The index keeps only 64-bit hashes in sorted NumPy
arrays (8 bytes per n-gram + 2 for its benchmark). A document containing one is split: the match
plus ``remove_char_each_side`` characters on each side (widened to the nearest ``.!?``) is cut
out, parts of at most ``min_document_length`` characters are dropped, the rest is searched again;
a document left with no part or with more than ``max_splits`` parts is removed whole. Removed
text goes to the rejected sink with the benchmark's name."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
from curator.dedup.io import write_parquet, write_table
from curator.errors import ConfigError
from curator.io import expand_paths, join_path
from curator.stages.base import ProcessingStage, StageIO
from curator.stages.lifecycle import ensure_setup

from curator_text.tasks import DocumentBatch

__all__ = ["TaskDecontamination", "TaskNGramCounter", "NGramIndex", "get_words",
           "read_match_counts"]

_WORD = re.compile(r"\w+")
_PRIME = np.uint64(1099511628211)
_PUNCT = ".!?"


def get_words(text: str) -> tuple[list[str], list[int]]:
    """Lower-cased ``\\w+`` words of ``text`` and their character offsets."""
    words, positions = [], []
    for m in _WORD.finditer(text.lower()):
        words.append(m.group(0))
        positions.append(m.start())
    return words, positions


def _word_hashes(words: list[str], cache: dict[str, int]) -> np.ndarray:
    out = np.empty(len(words), dtype=np.uint64)
    for i, w in enumerate(words):
        h = cache.get(w)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
            if len(cache) < 2_000_000:
                cache[w] = h
        out[i] = h
    return out


def _ngram_hashes(wh: np.ndarray, n: int) -> np.ndarray:
    """Hash of every run of ``n`` consecutive word hashes (uint64 arithmetic wraps)."""
    count = len(wh) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    acc = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            acc = acc * _PRIME + wh[k:k + count]
        return acc ^ np.uint64(n)


class NGramIndex:
    """Hashes of benchmark n-grams with the benchmark each came from."""

    def __init__(self, max_ngram_size: int = 13, min_ngram_size: int = 8) -> None:
        self.max_ngram_size, self.min_ngram_size = max_ngram_size, min_ngram_size
        self.names: list[str] = []
        self._parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.hashes = np.empty(0, dtype=np.uint64)
        self.sources = np.empty(0, dtype=np.uint16)
        self.lengths: list[int] = []
        self._cache: dict[str, int] = {}

    def add(self, name: str, texts: Iterable[str]) -> None:
        """Add the n-grams of ``texts`` under benchmark ``name``."""
        if name not in self.names:
            self.names.append(name)
        src = self.names.index(name)
        found, lengths = [], set(self.lengths)
        for text in texts:
            if not text:
                continue
            words, _ = get_words(text)
            if len(words) < self.min_ngram_size:
                continue
            n = min(len(words), self.max_ngram_size)
            lengths.add(n)
            found.append(_ngram_hashes(_word_hashes(words, self._cache), n))
        if found:
            h = np.concatenate(found)
            self._parts.append((h, np.full(len(h), src, dtype=np.uint16)))
        self.lengths = sorted(lengths, reverse=True)

    def freeze(self) -> NGramIndex:
        """Sort and deduplicate (call after the last :meth:`add`)."""
        if self._parts:
            h = np.concatenate([self.hashes, *[p[0] for p in self._parts]])
            s = np.concatenate([self.sources, *[p[1] for p in self._parts]])
            order = np.argsort(h, kind="stable")
            h, s = h[order], s[order]
            keep = np.ones(len(h), bool)
            keep[1:] = h[1:] != h[:-1]
            self.hashes, self.sources = h[keep], s[keep]
            self._parts = []
        return self

    def __len__(self) -> int:
        return len(self.hashes)

    def keep_only(self, hashes: np.ndarray) -> None:
        """Keep only the n-grams whose hashes are in ``hashes`` (call after :meth:`freeze`)."""
        keep = np.isin(self.hashes, np.asarray(hashes, dtype=np.uint64))
        self.hashes, self.sources = self.hashes[keep], self.sources[keep]

    def find(self, words: list[str]) -> tuple[int, int, int, str] | None:
        """``(first word, number of words, n-gram hash, benchmark)`` of the earliest (then
        longest) n-gram of ``words`` in the index, or None."""
        if not len(self.hashes) or not words:
            return None
        wh = _word_hashes(words, self._cache)
        best: tuple[int, int, int, str] | None = None
        for n in self.lengths:
            hs = _ngram_hashes(wh, n)
            if not len(hs):
                continue
            pos = np.searchsorted(self.hashes, hs)
            pos[pos == len(self.hashes)] = 0
            hit = np.flatnonzero(self.hashes[pos] == hs)
            if len(hit) and (best is None or hit[0] < best[0]):
                best = (int(hit[0]), n, int(hs[hit[0]]),
                        self.names[int(self.sources[pos[hit[0]]])])
        return best

    def first_match(self, words: list[str]) -> tuple[int, int, str] | None:
        """``(first word, number of words, benchmark)`` of :meth:`find`, or None."""
        found = self.find(words)
        return None if found is None else (found[0], found[1], found[3])

    def count(self, words: list[str]) -> list[int]:
        """Hashes of the non-overlapping matches in ``words``, left to right (NeMo's counting
        pass: after a match the search goes on after it)."""
        out, start = [], 0
        while (found := self.find(words[start:])) is not None:
            out.append(found[2])
            start += found[0] + found[1]
        return out


def _read_benchmark(path: str, fields: list[str] | None) -> list[str]:
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    if path.endswith(".parquet"):
        table = pq.read_table(path)
    elif path.endswith((".jsonl", ".json")):
        table = pj.read_json(path)
    else:
        raise ValueError(f"TaskDecontamination: benchmark file {path!r} must be .jsonl or "
                         f".parquet")
    cols = fields or [c for c in table.column_names
                      if pa.types.is_string(table[c].type)
                      or pa.types.is_large_string(table[c].type)]
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        raise ValueError(f"TaskDecontamination: {path} has no column(s) {missing} (columns: "
                         f"{table.column_names})")
    texts: list[str] = []
    for c in cols:
        texts.extend(str(v) for v in table[c].to_pylist() if v is not None)
    return texts


class TaskDecontamination(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Removes benchmark text from documents (NeMo Curator's task-decontamination rules; see the
    module docstring). One row becomes as many rows as clean parts remain (other columns
    copied).

    Parameters:
        tasks: benchmark files: ``{"name": path or [paths]}`` or a list of paths (named by file
            stem); JSONL or Parquet.
        fields: benchmark columns holding text (default: every string column).
        text_field: the document column.
        max_ngram_size: n-gram length in words (13). min_ngram_size: shorter benchmark texts are
            ignored (8).
        min_document_length: parts of at most this many characters are dropped (200).
        remove_char_each_side: characters cut on each side of a match (200).
        max_splits: a document split into more parts is removed whole (10).
        max_matches: with ``match_counts``, an n-gram matched more than this many times in the
            whole dataset is too common to be contamination and is not removed (10).
        match_counts: directory written by :meth:`counter` run over the same dataset first
            (NeMo's counting pass); only the n-grams it matched at most ``max_matches`` times
            are then removed. Without it every benchmark n-gram is removed.
        removed_dir: also write the documents removed whole there (JSONL, one file per batch).
    """

    name = "TaskDecontamination"
    modality = "text"
    kind = "filter"

    def __init__(self, tasks: dict[str, str | list[str]] | list[str], *,
                 fields: list[str] | None = None, text_field: str = "text",
                 max_ngram_size: int = 13, min_ngram_size: int = 8,
                 min_document_length: int = 200, remove_char_each_side: int = 200,
                 max_splits: int = 10, max_matches: int = 10,
                 match_counts: str | None = None, removed_dir: str | None = None) -> None:
        if isinstance(tasks, list | tuple):
            tasks = {os.path.basename(p).split(".")[0]: p for p in tasks}
        if not tasks:
            raise ConfigError("TaskDecontamination: tasks (benchmark files) is empty")
        self.tasks = {k: [v] if isinstance(v, str) else list(v) for k, v in tasks.items()}
        for name, paths in self.tasks.items():
            for p in paths:
                if not os.path.isfile(p):
                    raise ConfigError(f"TaskDecontamination: benchmark {name!r} file {p!r} does "
                                      f"not exist")
        if not 1 <= min_ngram_size <= max_ngram_size:
            raise ConfigError("TaskDecontamination: need 1 <= min_ngram_size <= max_ngram_size")
        self.fields, self.text_field = fields, text_field
        self.max_ngram_size, self.min_ngram_size = max_ngram_size, min_ngram_size
        self.min_document_length = min_document_length
        self.remove_char_each_side, self.max_splits = remove_char_each_side, max_splits
        if max_matches < 1:
            raise ConfigError(f"TaskDecontamination: max_matches must be >= 1, got {max_matches}")
        self.max_matches, self.match_counts = max_matches, match_counts
        self.removed_dir = removed_dir
        self._index: NGramIndex | None = None
        self.too_common = 0

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_index": None}

    def inputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def outputs(self) -> StageIO:
        return ["data"], [self.text_field]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        index = NGramIndex(self.max_ngram_size, self.min_ngram_size)
        for name, paths in self.tasks.items():
            for p in paths:
                index.add(name, _read_benchmark(p, self.fields))
        self._index = index.freeze()
        if self.match_counts is not None:
            counts = read_match_counts(self.match_counts)
            common = counts["count"] > self.max_matches
            self.too_common = int(common.sum())
            index.keep_only(counts["hash"][~common])

    def counter(self, counts_dir: str) -> TaskNGramCounter:
        """The counting pass to run over the whole dataset before this stage with
        ``match_counts=counts_dir`` (same benchmarks and n-gram settings)."""
        return TaskNGramCounter(self.tasks, counts_dir, fields=self.fields,
                                text_field=self.text_field, max_ngram_size=self.max_ngram_size,
                                min_ngram_size=self.min_ngram_size)

    def _split(self, text: str, start: int, end: int) -> tuple[str, str, int, int]:
        """NeMo's split: the part before (ending at a ``.!?``) and after the removed window."""
        pos = start - self.remove_char_each_side
        while pos > 0 and text[pos] not in _PUNCT:
            pos -= 1
        first = text[:pos + 1] if pos > 0 else ""
        pos = end + self.remove_char_each_side
        while pos < len(text) and text[pos] not in _PUNCT:
            pos += 1
        second = text[pos + 1:] if pos + 1 < len(text) else ""
        return first, second, len(first), len(text) - len(second)

    def decontaminate(self, text: str) -> tuple[list[str], list[dict[str, Any]]]:
        """Clean parts of ``text`` and the removed spans (``benchmark``, ``ngram``,
        ``removed``)."""
        ensure_setup(self)
        assert self._index is not None
        todo, clean, removed = [text], [], []
        while todo:
            part = todo.pop(0)
            words, positions = get_words(part)
            match = self._index.first_match(words)
            if match is None:
                clean.append(part)
                continue
            i, n, bench = match
            start = positions[i]
            end = positions[i + n - 1] + len(words[i + n - 1])
            first, second, cut_from, cut_to = self._split(part, start, end)
            removed.append({"benchmark": bench, "ngram": " ".join(words[i:i + n]),
                            "removed": part[cut_from:cut_to]})
            if len(first) > self.min_document_length:
                clean.append(first)
            else:
                removed[-1]["removed"] = part[:cut_to]
            if len(second) > self.min_document_length:
                todo.append(second)
            elif second:
                removed.append({"benchmark": bench, "ngram": "", "removed": second,
                                "reason": "short remainder"})
        return clean, removed

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        take, texts, removed_whole = [], [], []
        others = [c for c in table.column_names if c != self.text_field]
        rows = table.select(others).to_pylist() if others else [{}] * table.num_rows
        for r, text in enumerate(table[self.text_field].to_pylist()):
            if not text:
                take.append(r)
                texts.append(text)
                continue
            parts, removed = self.decontaminate(text)
            if removed and (not parts or len(parts) > self.max_splits):
                why = "no clean part left" if not parts else f"{len(parts)} parts > max_splits"
                self.reject(task, f"contaminated by {removed[0]['benchmark']}: {why}",
                            kind="filtered", record={**rows[r], self.text_field: text,
                                                     "benchmark": removed[0]["benchmark"],
                                                     "ngram": removed[0]["ngram"]})
                removed_whole.append(r)
                continue
            for span in removed:
                self.reject(task, f"contaminated by {span['benchmark']}", kind="filtered",
                            record={**rows[r], **span})
            take.extend([r] * len(parts))
            texts.extend(parts)
        if self.removed_dir and removed_whole:
            write_table(table.take(pa.array(removed_whole, pa.int64())),
                        join_path(self.removed_dir, f"{_file_name(task.task_id)}.jsonl"))
        out = table.take(pa.array(take, pa.int64()))
        i = out.column_names.index(self.text_field)
        out = out.set_column(i, self.text_field, pa.array(texts, table[self.text_field].type))
        return task.derive(out)


def _file_name(task_id: str) -> str:
    """A file name for ``task_id``: its safe characters plus a short hash (ids may hold ``/``)."""
    safe = re.sub(r"[^\w.-]", "_", task_id)[:80]
    return f"{safe}-{hashlib.blake2b(task_id.encode(), digest_size=4).hexdigest()}"


def read_match_counts(path: str) -> dict[str, np.ndarray]:
    """Total matches per n-gram hash over every file :class:`TaskNGramCounter` wrote under
    ``path``: ``{"hash": uint64 array, "count": int64 array}``."""
    import pyarrow.parquet as pq

    try:
        files = expand_paths(path, [".parquet"])
    except FileNotFoundError as exc:
        raise ConfigError(f"TaskDecontamination: match_counts {path!r} has no counts; run "
                          f"stage.counter({path!r}) over the dataset first") from exc
    tables = [pq.read_table(f) for f in files]
    if not tables:
        return {"hash": np.empty(0, np.uint64), "count": np.empty(0, np.int64)}
    table = pa.concat_tables(tables).group_by("hash").aggregate([("count", "sum")])
    return {"hash": table["hash"].to_numpy(), "count": table["count_sum"].to_numpy()}


class TaskNGramCounter(TaskDecontamination):
    """NeMo's counting pass: counts how often each benchmark n-gram is matched in the documents
    (non-overlapping, left to right) and writes the counts of each batch to ``counts_dir``
    (Parquet: ``hash``, ``count``); batches pass through unchanged. Build it with
    :meth:`TaskDecontamination.counter` so both passes use the same settings."""

    name = "TaskNGramCounter"
    kind = "stage"

    def __init__(self, tasks: dict[str, str | list[str]] | list[str], counts_dir: str, *,
                 fields: list[str] | None = None, text_field: str = "text",
                 max_ngram_size: int = 13, min_ngram_size: int = 8) -> None:
        super().__init__(tasks, fields=fields, text_field=text_field,
                         max_ngram_size=max_ngram_size, min_ngram_size=min_ngram_size)
        self.counts_dir = counts_dir

    def outputs(self) -> StageIO:
        return ["data"], []

    def process(self, task: DocumentBatch) -> DocumentBatch:
        assert self._index is not None, f"{self.name}: setup() was not called"
        table = task.to_pyarrow()
        if self.text_field not in table.column_names:
            raise KeyError(f"{self.name}: text_field {self.text_field!r} not in columns "
                           f"{table.column_names}")
        found: list[int] = []
        for text in table[self.text_field].to_pylist():
            if text:
                found.extend(self._index.count(get_words(text)[0]))
        hashes, counts = np.unique(np.asarray(found, dtype=np.uint64), return_counts=True)
        write_parquet(pa.table({"hash": pa.array(hashes, pa.uint64()),
                                "count": pa.array(counts.astype(np.int64), pa.int64())}),
                      join_path(self.counts_dir, f"{_file_name(task.task_id)}.parquet"))
        return task
