"""NeMo Curator parity of the text filters: the per-document formulas from NeMo Curator's
documentation, Chinese/Japanese word segmentation, its BoilerPlateStringFilter example, the URL
pattern, chains of filters, plain functions and PerExtensionFilter(metadata_file=...)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from curator_text import DocumentBatch
from curator_text import filters as F

# ---- NeMo Curator's formulas, written out per document --------------------------------------

BULLETS = set("•‣⁃⁌⁍∙○●◘◦⦾⦿")
ELLIPSES = {"...", "[...]", "…", "(...)", "[…]", "-»", "read more..", "read more"}
URL = re.compile(r"https?://(?:[A-Za-z0-9$\-_@.&+/:=?#~]|[!*\(\),]|(?:%[0-9A-Fa-f]{2}))+")
COMMON = {"the", "be", "to", "of", "and", "that", "have", "with"}


def _lines(t: str) -> list[str]:
    return [x for x in t.split("\n") if x.strip()]


def _symbol_word(w: str) -> bool:
    w = w.strip()
    return w in ELLIPSES or (bool(w) and len(re.findall("#+", w)) / len(w) > 0.5)


def _common(t: str, cutoff: int = 2) -> int:
    n = 0
    for w in t.strip().split():
        n += w in COMMON
        if n >= cutoff:
            return n
    return n


REFERENCE = [
    (F.NonAlphaNumericFilter(),
     lambda t: (len(t) - len(re.findall("[a-zA-Z0-9\n?!,.]", t))) / len(t)),
    (F.SymbolsToWordsFilter(),
     lambda t: sum(map(_symbol_word, t.strip().split())) / len(t.strip().split())),
    (F.NumbersFilter(), lambda t: sum(c.isdecimal() for c in t) / len(t)),
    (F.UrlsFilter(), lambda t: sum(map(len, URL.findall(t))) / len(t)),
    (F.BulletsFilter(),
     lambda t: sum(x.strip()[:1] in BULLETS for x in _lines(t)) / len(_lines(t))),
    (F.WhiteSpaceFilter(), lambda t: sum(c in "\t\n\r\b " for c in t) / len(t)),
    (F.ParenthesesFilter(), lambda t: sum(c in "{}⟨⟩[]()" for c in t) / len(t)),
    (F.LongWordFilter(max_word_length=8), lambda t: max(len(w) for w in t.strip().split())),
    (F.WordCountFilter(min_words=8), lambda t: len(t.strip().split())),
    (F.MeanWordLengthFilter(), lambda t: sum(map(len, t.split())) / len(t.split())),
    (F.PunctuationFilter(max_num_sentences_without_endmark_ratio=0.5),
     lambda t: sum(not x.strip().endswith((".", "?", "!", '"', "'")) for x in _lines(t))
     / len(_lines(t))),
    (F.EllipsisFilter(),
     lambda t: sum(any(x.strip().lower().endswith(e) for e in ELLIPSES) for x in _lines(t))
     / len(_lines(t))),
    (F.CommonEnglishWordsFilter(), _common),
    (F.CommonEnglishWordsFilter(stop_at_false=False), lambda t: _common(t, cutoff=10**9)),
    (F.WordsWithoutAlphabetsFilter(),
     lambda t: sum(any(c.isalpha() for c in w) for w in t.split()) / len(t.split())),
    (F.PornographicUrlsFilter(), lambda t: int(any("porn" in u for u in URL.findall(t)))),
]

DOCS = [
    "The cat sat on the mat.\nIt was happy with that.",
    "• first point\n• second point\n\n• third\nnot a bullet line",
    "- dash lines\n* star lines\nare not bullets in NeMo",
    "Wait for it...\nRead more\nand then [...]\nthe end.",
    "# heading #\n#a#b# ### tags ... … -» words here",
    "see http://example.com/page<bad> and https://a.b/c?d=1&e=%20f, now",
    "visit http://example.com/porn-stuff or HTTP://PORN.example",
    "\ttabs\tand\rcarriage\breturns   and   spaces   ",
    "(round) [square] {curly} ⟨angle⟩ brackets",
    "numbers 12345 and ٣٤٥ digits 2026",
    "héllo wörld, naïve café!? déjà vu.",
    "THE AND OF are capitals; the and of are not",
    "123 456 789 !!! ok",
    "a supercalifragilistic word\n\n\nblank lines above   \n  \n",
    "quote endings \"\nand 'single'\nnone here\n",
    "ideographic\u3000space line\n\u3000\n\u00a0 \nthe of and to with\nREAD MORE",
]


@pytest.mark.parametrize("flt_ref", REFERENCE, ids=[type(r[0]).__name__ for r in REFERENCE])
def test_english_scores_and_decisions_match_nemo_formulas(flt_ref) -> None:
    flt, ref = flt_ref
    expected = [ref(d) for d in DOCS]
    batch = list(flt.score_batch(pa.array(DOCS)))
    assert batch == pytest.approx(expected), type(flt).__name__
    assert [flt.score_document(d) for d in DOCS] == pytest.approx(expected)
    keep = pa.array(flt.keep_batch(pa.array(batch))).to_pylist()
    assert keep == [flt.keep_document(s) for s in expected]


def test_empty_documents_score_one_as_in_nemo() -> None:
    for flt in (F.NonAlphaNumericFilter(), F.NumbersFilter(), F.UrlsFilter(),
                F.WhiteSpaceFilter(), F.ParenthesesFilter()):
        assert list(flt.score_batch(pa.array([""]))) == [1.0], type(flt).__name__


# ---- Chinese and Japanese words ----------------------------------------------------------------

ZH = "我爱北京天安门。今天天气很好"
JA = "すもももももももものうち。今日は良い天気です"


def test_zh_and_ja_word_counts_as_nemo_counts_them() -> None:
    # jieba: 我/爱/北京/天安门/。/今天天气/很/好; MeCab (unidic-lite): すもも/も/もも/も/もも/の/
    # うち/。/今日/は/良い/天気/です
    assert F.WordCountFilter(lang="zh").score_document(ZH) == 8
    assert F.WordCountFilter(lang="ja").score_document(JA) == 13
    assert F.WordCountFilter(lang="zh").score_document("你好 世界") == 3  # jieba keeps " "
    assert F.MeanWordLengthFilter(lang="zh").score_document(ZH) == pytest.approx(14 / 8)
    assert F.LongWordFilter(lang="zh").score_document(ZH) == 4
    assert F.WordsWithoutAlphabetsFilter(lang="ja").score_document(JA) == pytest.approx(12 / 13)
    # jieba makes each "…" a word of its own: 好/…/…/… (3 ellipsis words out of 4)
    assert F.SymbolsToWordsFilter(lang="zh").score_document("好………") == pytest.approx(3 / 4)
    assert F.SymbolsToWordsFilter(lang="zh").score_document("你好 … 世界") == pytest.approx(1 / 5)


def test_zh_documents_are_kept_by_word_count_through_the_stage() -> None:
    texts = [ZH * 10, "短"]
    batch = DocumentBatch(task_id="t", dataset_name="d", data=pa.table({"text": texts}))
    stage = F.ScoreFilter(F.WordCountFilter(min_words=50, lang="zh"), score_field="words")
    assert stage.worker_mode == "process"  # segmentation is per document
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == [ZH * 10]
    assert out["words"].to_pylist() == [80]
    assert F.ScoreFilter(F.WordCountFilter()).worker_mode == "thread"  # English stays vectorised


# ---- BoilerPlateStringFilter, HTML, URLs ------------------------------------------------------

def test_boilerplate_on_nemo_documented_example() -> None:
    docs = ["nothing\t here",
            "1\n\n2\n\n3\n\n4\n\n5\n\n6\n\nterms of use\n\n privacy policy\n\n cookie policy"
            "\n\nuses cookies",
            "too much \n\n privacy & cookies policy"]
    batch = DocumentBatch(task_id="t", dataset_name="d", data=pa.table({"text": docs}))
    out = F.ScoreFilter(F.BoilerPlateStringFilter(), score_field="bp").process(batch)
    assert out.to_pyarrow()["text"].to_pylist() == docs[:2]
    assert out.to_pyarrow()["bp"].to_pylist() == pytest.approx([0.0, 0.4])
    flt = F.BoilerPlateStringFilter()
    assert flt.score_document("real text\n\nLorem Ipsum dolor\n\nmore\n\nmore") == 1.0
    assert flt.score_document("Intro\n\nPrivacy Overview\n\nbody\n\nbody\n\nend") == 0.2


def test_html_boilerplate_measures_visible_text_without_collapsing_whitespace() -> None:
    visible = "word\n\n\n\n\n" * 30  # 300 visible characters, 119 once whitespace collapses
    html = f"<html><head><script>var x = 1;</script></head><body><p>{visible}</p></body></html>"
    flt = F.HTMLBoilerplateFilter(min_lang_content_num_chars=150)
    assert flt.score_document(html) == pytest.approx(len(visible) / len(html))
    assert flt.keep_document(flt.score_document(html))
    assert flt.score_document("<p>too short</p>") == 0


def test_url_pattern_stops_at_markup_and_url_regex_parameter() -> None:
    text = "see http://example.com/page<bad> here"
    assert F.UrlsFilter().score_document(text) == pytest.approx(
        len("http://example.com/page") / len(text))
    greedy = F.UrlsFilter(url_regex=r"https?://\S+")
    assert greedy.score_document(text) == pytest.approx(
        len("http://example.com/page<bad>") / len(text))
    assert list(greedy.score_batch(pa.array([text, ""]))) == pytest.approx(
        [len("http://example.com/page<bad>") / len(text), 1.0])
    assert F.PornographicUrlsFilter(url_regex=re.compile(r"www\.\S+")).score_document(
        "go to www.porn.example") == 1


# ---- chains of filters and plain functions ------------------------------------------------------

def _batch(**cols) -> DocumentBatch:
    return DocumentBatch(task_id="t", dataset_name="d", data=pa.table(cols))


TEXTS = ["one two three four", "one", "one two three http://a.example/very/long/path/x", "a b c"]


def test_score_filter_with_a_chain_of_filters() -> None:
    stage = F.ScoreFilter([F.WordCountFilter(min_words=3), F.UrlsFilter()],
                          score_field=["wc", "url"])
    out = stage.process(_batch(text=TEXTS)).to_pyarrow()
    assert out["text"].to_pylist() == [TEXTS[0], TEXTS[3]]
    assert out["wc"].to_pylist() == [4, 3]
    inverted = F.ScoreFilter([F.WordCountFilter(min_words=3), F.UrlsFilter()],
                             invert=[False, True]).process(_batch(text=TEXTS)).to_pyarrow()
    assert inverted["text"].to_pylist() == [TEXTS[2]]
    with pytest.raises(ValueError, match="score_field"):
        F.ScoreFilter([F.WordCountFilter(), F.UrlsFilter()], score_field="s")
    with pytest.raises(ValueError, match="invert"):
        F.ScoreFilter([F.WordCountFilter(), F.UrlsFilter()], invert=[True, False, True])


def test_split_mode_names_the_filter_of_the_chain_that_dropped() -> None:
    stage = F.ScoreFilter([F.WordCountFilter(min_words=3), F.UrlsFilter()], split=True)
    stage.process(_batch(text=TEXTS))
    reasons = [(r.record["text"], r.record["filter"]) for r in stage.drain_rejected()]
    assert reasons == [(TEXTS[1], "WordCountFilter"), (TEXTS[2], "UrlsFilter")]


def test_score_and_filter_with_plain_functions_and_lists() -> None:
    def n_chars(text: str) -> int:
        return len(text)

    scored = F.Score([n_chars, F.WordCountFilter()], score_field=["chars", "words"]).process(
        _batch(text=TEXTS)).to_pyarrow()
    assert scored["chars"].to_pylist() == [len(t) for t in TEXTS]
    assert scored["words"].to_pylist() == [4, 1, 4, 3]
    one = F.Score(n_chars, "chars").process(_batch(text=TEXTS))  # NeMo's positional order
    assert one.to_pyarrow()["chars"].to_pylist() == [len(t) for t in TEXTS]
    kept = F.Filter(lambda n: n > 5, filter_field="chars").process(one).to_pyarrow()
    assert kept["text"].to_pylist() == [TEXTS[0], TEXTS[2]]
    both = F.Filter([F.WordCountFilter(min_words=3), lambda n: n < 20],
                    filter_field=["words", "chars"], invert=[False, True]).process(
        _batch(text=TEXTS, words=[4, 1, 4, 3], chars=[len(t) for t in TEXTS])).to_pyarrow()
    assert both["text"].to_pylist() == [TEXTS[2]]
    with pytest.raises(ValueError, match="filter_field"):
        F.Filter([F.WordCountFilter(), F.UrlsFilter()], filter_field="x")
    with pytest.raises(TypeError, match="score_fn"):
        F.Score("len", score_field="x")


# ---- PerExtensionFilter -----------------------------------------------------------------------

CODE = "\n".join(["import os", "def f(x):", "    return x + 1"] * 5)


def test_per_extension_filter_with_metadata_file(tmp_path) -> None:
    meta = tmp_path / "meta.csv"
    meta.write_text("language,extension,Include,Alphanum_threshold,Long_line_threshold,"
                    "Alpha filter\n"
                    "python,py,1,0.25,20,\n"
                    "python,pyx,0,,,\n"
                    "c-sharp,cs,1,,1000,0.9\n")
    flt = F.PerExtensionFilter("Python", "py", metadata_file=str(meta))
    assert flt.score_document(CODE) == 1
    assert flt.score_document(CODE + "\n" + "x" * 21) == 0  # a line longer than 20
    assert flt.score_document("!!!! ---- ;;;; ====") == 0  # too few alphanumerics
    assert F.PerExtensionFilter("python", "pyx", metadata_file=str(meta)).score_document(
        CODE) == 0  # Include = 0
    assert F.PerExtensionFilter("python", "rs", metadata_file=str(meta)).score_document(
        CODE) == 0  # extension not listed
    assert F.PerExtensionFilter("C#", "cs", metadata_file=str(meta)).score_document(CODE) == 0
    with pytest.raises(ValueError, match="cobol"):
        F.PerExtensionFilter("cobol", "cbl", metadata_file=str(meta))


def test_per_extension_filter_uses_packaged_table_by_default() -> None:
    assert F.PerExtensionFilter("Python", "py").score_document(CODE) == 1
    assert F.PerExtensionFilter("C#", "cs").score_document(CODE) == 1
    assert F.PerExtensionFilter("C#", "csx").score_document(CODE) == 0  # excluded in the table
    long_mean = "\n".join(["y" * 150] * 3)  # mean line length over 100
    assert F.PerExtensionFilter("Python", "py").score_document(long_mean) == 0


def test_nemo_style_custom_filter_hooks_are_called() -> None:
    class Vocab(F.DocumentFilter):
        def __init__(self) -> None:
            super().__init__()
            self._name = "vocab"
            self.calls: list[str] = []

        def model_check_or_download(self) -> None:
            self.calls.append("check")

        def load_model(self) -> None:
            self.calls.append("load")
            self.words = {"cat", "dog"}

        def score_document(self, text: str) -> int:
            return sum(w in self.words for w in text.split())

        def keep_document(self, score: int) -> bool:
            return score > 0

    flt = Vocab()
    stage = F.ScoreFilter(flt)
    stage.setup_on_node()
    stage.setup()
    assert flt.calls == ["check", "load"]
    assert flt.sentences is None and flt.paragraphs is None and flt.ngrams is None
    out = stage.process(_batch(text=["a cat", "a bird"])).to_pyarrow()
    assert out["text"].to_pylist() == ["a cat"]
    assert stage.name == "ScoreFilter[vocab]"


# ---- code filters -----------------------------------------------------------------------------

def test_python_comment_ratio_counts_docstrings_and_comments_as_nemo() -> None:
    src = '"""Doc."""\n# c1\nx = 1  # c2\ndef f():\n    """Fn doc."""\n'
    # docstrings "Doc." + "\n" + "Fn doc." (12) and the untokenized comments "# c1# c2" (8)
    assert F.PythonCommentToCodeFilter().score_document(src) == pytest.approx(20 / len(src))
    assert F.PythonCommentToCodeFilter().score_document("def (:\n# broken") == 0


def test_general_comment_ratio_counts_comment_text_without_markers() -> None:
    c = 'int x = 1; // set x\n/* block */ char *s = "// not";'
    # " set x" and " block " joined by a space; the "//" inside the string is not a comment
    assert F.GeneralCommentToCodeFilter("text/x-c").score_document(c) == pytest.approx(14 / len(c))
    sh = 'echo "# not" # real\n'
    assert F.GeneralCommentToCodeFilter("text/x-shellscript").score_document(sh) == (
        pytest.approx(5 / len(sh)))
    py = "x = 1  # c2\n# c1\n"
    assert F.GeneralCommentToCodeFilter("text/x-python").score_document(py) == (
        pytest.approx(len(" c2  c1") / len(py)))


def test_number_of_lines_is_newlines_plus_one() -> None:
    docs = ["", "a", "a\nb\n", "a\n\n\nb"]
    flt = F.NumberOfLinesOfCodeFilter()
    assert list(flt.score_batch(pa.array(docs))) == [d.count("\n") + 1 for d in docs] == [
        1, 1, 3, 4]


# ---- repetition filters -----------------------------------------------------------------------

def test_repeated_lines_count_only_non_blank_lines() -> None:
    text = "a\n\n\nb\na\n\n"  # non-blank lines: a, b, a
    assert F.RepeatedLinesFilter().score_document(text) == pytest.approx(2 / 3)
    assert F.RepeatedLinesByCharFilter().score_document("ab\n\n\ncd\nab\n") == (
        pytest.approx(4 / 6))


def test_repeating_duplicate_ngrams_as_nemo_counts_them() -> None:
    flt = F.RepeatingDuplicateNGramsFilter(n=2)
    # n-grams ab ba AB BA AB: the repeats add 2+1, 1+1 and 1+1 characters (words + spaces)
    assert flt.score_document("a b a b a b") == pytest.approx(7 / 11)
    assert flt.score_document("A b a b") == 0  # case-sensitive: no repeated n-gram
    assert flt.score_document("one") == 1.0  # fewer than n words
    zh = F.RepeatingDuplicateNGramsFilter(n=2, lang="zh")
    # jieba: 北京/天安门/北京/天安门; the repeat adds 2 + 3 characters and one "space" (NeMo adds
    # it for every language)
    assert zh.score_document("北京天安门北京天安门") == pytest.approx(6 / 10)


def test_repeating_top_ngrams_as_nemo_scores_them() -> None:
    flt = F.RepeatingTopNGramsFilter(n=2)
    # the top bigram "ab c" occurs 3 times in the raw text (once inside "xab c"): 12 of 15 chars
    text = "ab c ab c xab c"
    assert flt.score_document(text) == pytest.approx(12 / 15)
    # case-sensitive: "now buy" and "buy now" (2 each, the top) both cover 14 characters
    spam = "Buy now buy now buy now cheap stuff here"
    assert flt.score_document(spam) == pytest.approx(14 / len(spam))
    assert flt.score_document("one") == 1.0  # fewer than n words
    assert list(flt.score_batch(pa.array([text, spam, "one", ""]))) == pytest.approx(
        [12 / 15, 14 / len(spam), 1.0, 1.0])
    zh = F.RepeatingTopNGramsFilter(n=1, lang="zh")
    assert not zh.vectorized
    assert zh.score_document("北京天安门北京天安门") == pytest.approx(6 / 10)  # "天安门" x2


def test_repeating_top_ngrams_batch_matches_documents_with_large_keys() -> None:
    import random

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(300)]  # 300**8 keys do not fit in int64: the other path
    docs = [" ".join(rng.choice(vocab[:4] if i % 3 else vocab) for _ in range(rng.randint(0, 40)))
            for i in range(40)]
    flt = F.RepeatingTopNGramsFilter(n=8)
    assert list(flt.score_batch(pa.array(docs))) == pytest.approx(
        [flt.score_document(d) for d in docs])


def test_a_chain_with_one_score_field_for_several_filters_is_refused():
    """Two filters writing one score column would lose the first's scores (NeMo refuses it)."""
    from curator import ConfigError

    two = [F.WordCountFilter(), F.UrlsFilter()]
    for stage in (F.ScoreFilter, F.Score):
        for score_field in ("s", ["s"]):
            with pytest.raises(ConfigError, match="one name per filter"):
                stage(two, score_field=score_field)
