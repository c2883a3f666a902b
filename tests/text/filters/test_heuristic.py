"""Every heuristic/code filter, with hand-made documents on both sides of its threshold,
through both the per-document API and the vectorised batch API."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import filters as F

NORMAL = ("The quick brown fox jumps over the lazy dog. It was a sunny day and the children "
          "played in the park with their friends.")
CODE = "\n".join(["import os", "# read the file", "def f(x):", "    return x + 1"] * 3)

CASES = [
    (F.WordCountFilter(min_words=3, max_words=5), "one two three", "one two"),
    (F.WordCountFilter(min_words=3, max_words=5), "a b c d e", "a b c d e f"),
    (F.NonAlphaNumericFilter(), NORMAL, "!!!! ???? ---- ...."),
    (F.NonAlphaNumericFilter(), NORMAL, ""),
    (F.SymbolsToWordsFilter(), NORMAL, "# title # more # tags ... wow"),
    (F.NumbersFilter(), NORMAL, "1234567890 12345 call 555 0100"),
    (F.UrlsFilter(), NORMAL, "see https://example.com/a/very/long/path/to/page now"),
    (F.BulletsFilter(), "• one\nplain line\n• two", "• one\n● two\n\n◦ three\n  ○ four"),
    (F.WhiteSpaceFilter(), NORMAL, "a     b     c          d"),
    (F.ParenthesesFilter(), NORMAL, "(a)[b]{c}(d)"),
    (F.LongWordFilter(max_word_length=10), "short words only", "a supercalifragilistic word"),
    (F.BoilerPlateStringFilter(), "Real content here.\n\nMore real content.\n\nThe end.",
     "Real content.\n\nRead our privacy policy."),
    (F.BoilerPlateStringFilter(remove_if_at_top_or_bottom=False,
                               max_boilerplate_string_ratio=0.4),
     "A long paragraph of real text that goes on and on for a while.\n\nterms of use\n\nend.",
     "x\n\nsee our terms of use and cookie policy here now"),
    (F.MeanWordLengthFilter(), NORMAL, "a b c d e f g"),
    (F.MeanWordLengthFilter(), NORMAL, "incomprehensibilities extraordinarily"),
    (F.PunctuationFilter(), "One.\nTwo!\nThree", "no end\nno end either\nnope\nstill no"),
    (F.EllipsisFilter(), "One.\nTwo.\nThree.\nFour...", "One...\nTwo…\nThree."),
    (F.CommonEnglishWordsFilter(), NORMAL, "Lorem ipsum dolor sit amet consectetur"),
    (F.WordsWithoutAlphabetsFilter(), NORMAL, "123 456 789 !!! ok"),
    (F.PornographicUrlsFilter(), NORMAL + " https://example.com", "visit http://pornsite.com"),
    (F.SubstringFilter("hello", "prefix"), "hello world", "world hello"),
    (F.SubstringFilter("world", "suffix"), "hello world", "world hello"),
    (F.SubstringFilter("lo wo", "any"), "hello world", "helloworld"),
    (F.RepeatedLinesFilter(), "a\nb\nc\nd", "a\na\na\nb"),
    (F.RepeatedParagraphsFilter(), "a\n\nb\n\nc", "a\n\na\n\na\n\nb"),
    (F.RepeatedLinesByCharFilter(), "aaaa\nbbbb\ncccc", "long repeated line\nlong repeated line\nx"),
    (F.RepeatedParagraphsByCharFilter(), "aaaa\n\nbbbb", "long para\n\nlong para\n\nx"),
    (F.RepeatingTopNGramsFilter(), NORMAL, "buy now buy now buy now cheap stuff"),
    (F.RepeatingDuplicateNGramsFilter(), NORMAL, "buy now buy now click here click here"),
    (F.IncompleteStoryFilter(), "Once upon a time they lived happily.", "Once upon a time they"),
    (F.PythonCommentToCodeFilter(), CODE, "x = 1\ny = 2\nz = 3"),
    (F.PythonCommentToCodeFilter(), CODE, "# only\n# comments\n# here"),
    (F.GeneralCommentToCodeFilter("text/x-c++"), "int x = 1; // set x\nint y = 2;",
     "int x = 1;\nint y = 2;"),
    (F.NumberOfLinesOfCodeFilter(min_lines=3, max_lines=5), "a\nb\nc", "a\nb"),
    (F.NumberOfLinesOfCodeFilter(min_lines=3, max_lines=5), "a\nb\nc\nd\ne", "a\nb\nc\nd\ne\nf"),
    (F.XMLHeaderFilter(), "<root>data</root>", '<?xml version="1.0"?><root/>'),
    (F.AlphaFilter(), "def main(): return value", "1234 5678 = {} [] 99"),
    (F.HTMLBoilerplateFilter(min_lang_content_num_chars=20),
     "<html><body><p>" + NORMAL + "</p></body></html>",
     "<html><head><script>var a = 1;</script></head><body><div></div></body></html>"),
    (F.PerExtensionFilter(extension=".py"), CODE, "x" * 2000),
]


@pytest.mark.parametrize(("flt", "keep", "drop"), CASES,
                         ids=[f"{type(c[0]).__name__}-{i}" for i, c in enumerate(CASES)])
def test_filter_both_sides_of_threshold(flt, keep, drop) -> None:
    assert flt.keep_document(flt.score_document(keep)), "document should be kept"
    assert not flt.keep_document(flt.score_document(drop)), "document should be removed"
    scores = pa.array(flt.score_batch(pa.array([keep, drop])))
    assert pa.array(flt.keep_batch(scores)).to_pylist() == [True, False]


def test_every_listed_filter_has_a_case() -> None:
    tested = {type(c[0]) for c in CASES}
    assert set(F.HEURISTIC_FILTERS) <= tested


def test_vectorised_scores_match_per_document_formula() -> None:
    docs = [NORMAL, "a b", "", "x  y\n\nz"]
    wc = F.WordCountFilter()
    assert list(wc.score_batch(pa.array(docs))) == [len(d.split()) for d in docs]
    mwl = F.MeanWordLengthFilter()
    batch = list(mwl.score_batch(pa.array(docs)))
    assert batch == pytest.approx([mwl.score_document(d) for d in docs])


def test_top_ngram_ties_are_deterministic() -> None:
    flt = F.RepeatingTopNGramsFilter(n=1, max_repeating_ngram_ratio=0.3)
    a = "aa b aa b cccc cccc"
    b = "cccc b aa cccc aa b"
    # same multiset of words in another order: same score (longest of the most frequent,
    # "cccc", occurs twice in 19 characters)
    assert flt.score_document(a) == flt.score_document(b) == pytest.approx(8 / 19)
    assert list(flt.score_batch(pa.array([a, b]))) == pytest.approx([8 / 19, 8 / 19])


def test_bad_parameters_raise() -> None:
    with pytest.raises(ValueError, match="position"):
        F.SubstringFilter("x", position="middle")


def test_fast_paths_match_python_on_ascii_and_unicode() -> None:
    from curator_text.filters import _vec as v

    docs = ["", " ", "  a  b\tc\n", "héllo wörld 12 ①", "x", NORMAL, "  naïve  café  ", "ab\u3000cd"]
    texts = pa.array(docs).slice(1)  # a sliced array exercises the offsets
    assert list(v.fast_word_counts(texts)) == [len(d.split()) for d in docs[1:]]
    alnum = v.class_count(texts, v.ASCII_ALNUM, r"[\p{L}\p{N}]")
    assert list(alnum) == [sum(c.isalnum() for c in d) for d in docs[1:]]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_top_ngram_batch_matches_document_scores(n) -> None:
    import random

    rng = random.Random(n)
    vocab = ["a", "bb", "ccc", "Dd", "é", "ff"]
    docs = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 30))) for _ in range(60)]
    docs += ["", "  ", "x", "buy now buy now buy now", NORMAL]
    flt = F.RepeatingTopNGramsFilter(n=n)
    expected = [flt.score_document(d) for d in docs]
    assert list(flt.score_batch(pa.array(docs))) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("", (0, 0.0)), ("\n", (0, 0.0)), ("ab\ncdef", (4, 3.0)), ("abcd\n\n", (4, 4 / 3))])
def test_per_extension_line_statistics_is_nemo_curators_helper(text, expected) -> None:
    """NeMo Curator's ``_line_statistics``: (longest line, mean line length without breaks)."""
    assert F.PerExtensionFilter()._line_statistics(text) == pytest.approx(expected)


def test_per_extension_filter_limits_the_mean_line_length() -> None:
    flt = F.PerExtensionFilter(extension="py")
    short = "\n".join(["x = 1"] * 50)
    long_lines = "\n".join(["y = " + "a" * 150] * 5)  # mean over 100
    assert flt.score_document(short) == 1
    assert flt._line_statistics(long_lines)[1] > 100
    assert flt.score_document(long_lines) == 0
