"""A migrating NeMo Curator user's text pipeline, written as NeMo's docs write it, runs on Curator
with only its imports changed and keeps exactly the documents NeMo keeps, with NeMo's text.

The expected output is worked out from NeMo's documented formulas (below, with Python's ``re``),
not from our implementation.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from tests.text.filters.test_fasttext import _train as train_fasttext

# ---- the user's NeMo Curator script, verbatim (NeMo >= 1.0 module paths) ---------------------
NEMO_SCRIPT = '''
from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.text.filters import ScoreFilter
from nemo_curator.stages.text.filters.heuristic import NonAlphaNumericFilter, WordCountFilter
from nemo_curator.stages.text.io.reader import JsonlReader
from nemo_curator.stages.text.io.writer import JsonlWriter
from nemo_curator.stages.text.modifiers import Modify, NewlineNormalizer, UrlRemover
from nemo_curator.stages.text.modifiers.unicode import UnicodeReformatter
from nemo_curator.stages.text.modules import AddId


def build(input_dir, output_dir):
    return Pipeline(
        name="nemo_text",
        description="clean, filter and id web text",
        stages=[
            JsonlReader(input_dir, fields=["text", "url"]),
            Modify(modifier_fn=UnicodeReformatter()),
            Modify(modifier_fn=[UrlRemover(), NewlineNormalizer()], input_fields="text"),
            ScoreFilter(
                filter_obj=[WordCountFilter(min_words=5),
                            NonAlphaNumericFilter(max_non_alpha_numeric_to_text_ratio=0.25)],
                text_field="text",
            ),
            AddId(id_field="doc_id"),
            JsonlWriter(output_dir),
        ],
    )
'''


def migrate_imports(source: str) -> str:
    """The one change docs/migrating-from-nemo-curator.md asks for: ``curator migrate``."""
    from curator.migrate import migrate_source

    result = migrate_source(source)
    assert not result.unmapped, result.unmapped
    return result.text


DOCS = [
    # mojibake fixed (curly quote kept, NeMo's ftfy defaults), upper-case URL removed
    {"url": "u1", "text": "The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows, see HTTPS://Example.COM/Mona "
                         "for more pictures today."},
    {"url": "u2", "text": "Too short."},  # 2 words < 5
    {"url": "u3", "text": "### $$$ %%% ^^^ &&& *** ((( ))) ~~~ @@@ [[[ ]]] +++ === <<< >>>"},
    # \r\n runs collapse to two; a lone \r stays
    {"url": "u4", "text": "First line of a longer story\r\n\r\n\r\n\r\nthen the rest\rof it here."},
    # only URLs make it long enough: NeMo removes them (any case) and drops it
    {"url": "u5", "text": "Read HTTP://A.B/C HTTP://D.E/F WWW.G.H/I HTTPS://J.K/L now"},
    {"url": "u6", "text": "A plain and ordinary sentence that is long enough to keep."},
]

EXPECTED_TEXT = {
    "u1": "The Mona Lisa doesn’t have eyebrows, see  for more pictures today.",
    "u4": "First line of a longer story\r\n\r\nthen the rest\rof it here.",
    "u6": "A plain and ordinary sentence that is long enough to keep.",
}


def _nemo_keeps(text: str) -> bool:
    """NeMo's WordCountFilter (en: whitespace words of the stripped text) and
    NonAlphaNumericFilter ((chars - matches of [a-zA-Z0-9\\n?!,.]) / chars <= cutoff)."""
    words = len(text.strip().split())
    ratio = (len(text) - len(re.findall(r"[a-zA-Z0-9\n?!,.]", text))) / len(text) if text else 1
    return 5 <= words <= 100000 and ratio <= 0.25


def test_expected_output_follows_nemo_formulas() -> None:
    assert {d["url"] for d in DOCS if _nemo_keeps(EXPECTED_TEXT.get(d["url"], d["text"]))} \
        >= set(EXPECTED_TEXT)
    assert not _nemo_keeps(re.sub(r"(?i)https?://\S+|www\.\S+", "", DOCS[4]["text"]))
    assert not _nemo_keeps(DOCS[1]["text"]) and not _nemo_keeps(DOCS[2]["text"])


def test_nemo_text_pipeline_runs_with_only_imports_changed(tmp_path: Path) -> None:
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for i in range(2):  # two source files: two tasks, ids unique across them
        with open(in_dir / f"part{i}.jsonl", "w", encoding="utf-8") as f:
            for d in DOCS[i::2]:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")

    migrated = migrate_imports(NEMO_SCRIPT)
    assert "nemo_curator" not in migrated
    assert migrated.count("\n") == NEMO_SCRIPT.count("\n")  # only import lines changed
    namespace: dict = {}
    exec(compile(migrated, "nemo_user_script.py", "exec"), namespace)
    pipeline = namespace["build"](str(in_dir), str(tmp_path / "out"))
    pipeline.run()

    rows = [json.loads(line) for p in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines()]
    assert {r["url"]: r["text"] for r in rows} == EXPECTED_TEXT
    assert all(set(r) == {"text", "url", "doc_id"} for r in rows)
    ids = [r["doc_id"] for r in rows]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r".+_\d+", i) for i in ids)  # NeMo's "{task_id}_{row}"


# ---- a multilingual NeMo pipeline: fastText language id, then Chinese word counts ------------
NEMO_LANG_SCRIPT = '''
from nemo_curator.pipeline import Pipeline
from nemo_curator.stages.text.filters import ScoreFilter
from nemo_curator.stages.text.filters.fasttext import FastTextLangId
from nemo_curator.stages.text.filters.heuristic import WordCountFilter
from nemo_curator.stages.text.io.reader import JsonlReader
from nemo_curator.stages.text.io.writer import JsonlWriter
from nemo_curator.stages.text.modules import AddId


def build(input_dir, output_dir, model_path):
    return Pipeline(name="nemo_zh", stages=[
        JsonlReader(input_dir),
        ScoreFilter(FastTextLangId(model_path=model_path, min_langid_score=0.0, lang="zho"),
                    score_field="language"),
        ScoreFilter(WordCountFilter(min_words=4, lang="zh"), score_field="word_count"),
        AddId(id_field="id", id_prefix="zh"),
        JsonlWriter(output_dir),
    ])
'''

EN = ["the committee published a detailed report on economic growth",
      "researchers explain the results of the experiment in the paper",
      "the history of the city is described in this careful article"]
ZH = ["我喜欢吃苹果和香蕉", "今天天气很好我们去公园散步", "研究人员在论文中解释了实验结果", "你好"]


def _train_langid(tmp_path: Path) -> str:
    lines = [f"__label__eng_Latn {t}" for t in EN] + [f"__label__zho_Hans {t}" for t in ZH]
    return train_fasttext(tmp_path, lines * 5, "langid", epoch=30, lr=0.1, minn=1, maxn=2)


def test_nemo_multilingual_pipeline_counts_chinese_words_as_nemo(tmp_path: Path) -> None:
    import jieba

    model_path = _train_langid(tmp_path)
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    with open(in_dir / "docs.jsonl", "w", encoding="utf-8") as f:
        for t in EN + ZH:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")

    namespace: dict = {}
    exec(compile(migrate_imports(NEMO_LANG_SCRIPT), "nemo_zh.py", "exec"), namespace)
    namespace["build"](str(in_dir), str(tmp_path / "out"), model_path).run()

    rows = [json.loads(line) for p in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines()]
    # NeMo: zh words are jieba tokens of the stripped text; "你好" has fewer than 4
    expected = {t: len(list(jieba.cut(t.strip()))) for t in ZH}
    expected = {t: n for t, n in expected.items() if n >= 4}
    assert len(expected) == 3
    assert {r["text"]: r["word_count"] for r in rows} == expected
    for r in rows:
        prob, label = ast.literal_eval(r["language"])  # NeMo's str([prob, label])
        assert label == "zho_Hans" and 0.0 <= prob <= 1.0
        assert re.fullmatch(r"zh_.+_\d+", r["id"])
