"""Modify and the text modifiers, with NeMo Curator's behaviour."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import (
    BoilerPlateStringModifier,
    DocumentBatch,
    DocumentModifier,
    FastTextLabelModifier,
    LineRemover,
    MarkdownRemover,
    Modify,
    NewlineNormalizer,
    QuotationRemover,
    QuotationUnifier,
    Slicer,
    UnicodeReformatter,
    UrlRemover,
)


@pytest.mark.parametrize(("modifier", "before", "after"), [
    # NeMo's defaults fix mojibake but keep curly quotes (uncurl_quotes=False)
    (UnicodeReformatter(), "The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.",
     "The Mona Lisa doesn’t have eyebrows."),
    (UnicodeReformatter(uncurl_quotes=True), "The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.",
     "The Mona Lisa doesn't have eyebrows."),
    # NeMo's defaults: no ligature / width fixes, no line-break fixes, no NFC
    (UnicodeReformatter(), "ﬁne ｆｕｌｌ a\r\nb", "ﬁne ｆｕｌｌ a\r\nb"),
    (QuotationUnifier(), "“Hi,” she said. ‘Yes’", "\"Hi,\" she said. 'Yes'"),
    (NewlineNormalizer(), "a\n\n\n\nb\n\nc", "a\n\nb\n\nc"),
    # \r\n runs collapse to two \r\n; a lone \r is kept (NeMo)
    (NewlineNormalizer(), "a\r\n\r\n\r\n\r\nb\rc", "a\r\n\r\nb\rc"),
    (NewlineNormalizer(), "a\r\n\r\nb", "a\r\n\r\nb"),
    (UrlRemover(), "see https://x.com/a?b=1 now", "see  now"),
    # case-insensitive, www. and Unicode whitespace end a URL as Python's \S does
    (UrlRemover(), "HTTPS://X.COM/A and WWW.Example.org/x\u00a0end http://a.b\u3000c",
     " and \u00a0end \u3000c"),
    (LineRemover(["Advertisement"]), "a\nAdvertisement\nb", "a\nb"),
    # exact match: indented or padded lines are kept (NeMo does not strip)
    (LineRemover(["Advertisement"]), "a\n  Advertisement\nAdvertisement \nb",
     "a\n  Advertisement\nAdvertisement \nb"),
    # links become their URL; headings are not touched (NeMo)
    (MarkdownRemover(), "# Title\n**bold** and *it* [link](http://x)",
     "# Title\nbold and it http://x"),
    (MarkdownRemover(), "***both*** and _under_ and **a *b* c**", "both and under and a b c"),
    (MarkdownRemover(), "*a\nb*", "*a\nb*"),  # marks never pair across lines
    (BoilerPlateStringModifier(), "Privacy policy\n\nbody\n\nmore", "body\n\nmore"),
    (BoilerPlateStringModifier(), "a\n\nPrivacy & Cookies Policy here\n\nb",
     "a\n\nPrivacy & Cookies Policy here\n\nb"),  # in the middle: kept
    (BoilerPlateStringModifier(), "a\n\nLorem ipsum dolor", ""),
    (BoilerPlateStringModifier(remove_if_at_top_or_bottom=False), "a\n\nb uses cookies", ""),
    (BoilerPlateStringModifier(), "terms of use\n\nprivacy overview", "terms of use\n\n"
                                                                        "privacy overview"),
    (Slicer(left="START", right="END", include_left=False, include_right=False),
     "junk START keep this END junk", "keep this"),
    (Slicer(left=2, right=5), "abcdefg", "cde"),
    (QuotationRemover(), '"quoted text"', "quoted text"),
    (QuotationRemover(), '"a"', "a"),
    (QuotationRemover(), '""', '""'),  # two characters or fewer once stripped
    (QuotationRemover(), '"title"\nbody "x"', '"title"\nbody "x"'),  # first line ends with "
    (QuotationRemover(), '"title\nbody"', "title\nbody"),
    (FastTextLabelModifier("__label__hq"), "line one\nline __label__two",
     "__label__hq line one line  two"),
])
def test_modifier(modifier, before, after) -> None:
    modifier.setup()
    assert modifier.modify_document(before) == after
    assert modifier.modify_batch(pa.array([before])).to_pylist() == [after]


def test_modifier_names_are_class_names() -> None:
    assert UrlRemover().name == "UrlRemover"
    assert Modify(UrlRemover()).name == "UrlRemover"
    assert Modify([UrlRemover(), str.lower]).name == "modifier_chain_of_UrlRemover_lower"


def test_modify_stage_chains_and_keeps_other_columns() -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": ["“a”\n\n\n\nb", None], "k": [1, 2]}))
    stage = Modify([QuotationUnifier(), NewlineNormalizer(), str.upper])
    stage.setup()
    out = stage.process(batch).to_pyarrow()
    assert out["text"].to_pylist() == ['"A"\n\nB', ""]
    assert out["k"].to_pylist() == [1, 2]
    assert stage.worker_mode == "process"  # a pure-Python modifier is in the chain
    assert Modify(QuotationUnifier()).worker_mode == "thread"


def test_modify_with_input_and_output_field_lists() -> None:
    batch = DocumentBatch(dataset_name="d", data=pa.table(
        {"title": ["See WWW.A.COM", "x"], "body": ["**b**", "y\n\n\n\nz"]}))
    stage = Modify([UrlRemover(), MarkdownRemover(), NewlineNormalizer()],
                   input_fields=["title", "body", "body"],
                   output_fields=["clean_title", None, "clean_body"])
    assert stage.inputs() == (["data"], ["body", "title"])
    assert stage.outputs() == (["data"], ["body", "clean_body", "clean_title"])
    out = stage.process(batch).to_pyarrow()
    assert out["title"].to_pylist() == ["See WWW.A.COM", "x"]  # untouched
    assert out["clean_title"].to_pylist() == ["See ", "x"]
    assert out["body"].to_pylist() == ["b", "y\n\n\n\nz"]  # in place (output None)
    assert out["clean_body"].to_pylist() == ["b", "y\n\nz"]


def test_modify_multi_input_modifier() -> None:
    class Concat(DocumentModifier):
        def modify_document(self, title: str, body: str) -> str:
            return f"{title}: {body}"

    batch = DocumentBatch(dataset_name="d", data={"title": ["T"], "body": ["B"], "n": [3]})
    out = Modify([Concat(), lambda n: n * 2], input_fields=[["title", "body"], ["n"]],
                 output_fields=["doc", "n2"]).process(batch).to_pyarrow()
    assert out["doc"].to_pylist() == ["T: B"]
    assert out["n2"].to_pylist() == [6]
    with pytest.raises(ValueError, match="output_fields must be provided"):
        Modify(Concat(), input_fields=[["title", "body"]])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"modifier_fn": 42}, "DocumentModifier or callable"),
    ({"modifier_fn": []}, "empty"),
    ({"modifier_fn": [str.upper, str.lower], "input_fields": ["a", "b", "c"]},
     r"input fields \(3\)"),
    ({"modifier_fn": [str.upper, str.lower], "output_fields": ["a", "b", "c"]},
     r"output fields \(3\)"),
])
def test_modify_rejects_bad_arguments(kwargs, match) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        Modify(**kwargs)


def test_modify_text_field_alias_still_works() -> None:
    batch = DocumentBatch("t", "d", pa.table({"body": ["https://a.b x"]}))
    out = Modify(UrlRemover(), text_field="body").process(batch).to_pyarrow()
    assert out["body"].to_pylist() == [" x"]


def _nemo_reference() -> dict:
    """NeMo Curator's documented patterns, run with Python's ``re`` (the behaviour to match)."""
    import re

    def markdown(text: str) -> str:
        out = []
        for line in text.split("\n"):
            for pattern in (r"\*\*(.*?)\*\*", r"\*(.*?)\*", r"_(.*?)_"):
                line = re.sub(pattern, r"\1", line)
            out.append(re.sub(r"\[.*?\]\((.*?)\)", r"\1", line))
        return "\n".join(out)

    url = re.compile(r"https?://\S+|www\.\S+", flags=re.IGNORECASE)
    return {
        UrlRemover: lambda t: url.sub("", t),
        MarkdownRemover: markdown,
        NewlineNormalizer: lambda t: re.sub(r"(\r\n){3,}", "\r\n\r\n",
                                            re.sub(r"(\n){3,}", "\n\n", t)),
    }


@pytest.mark.parametrize("cls", [UrlRemover, MarkdownRemover, NewlineNormalizer])
def test_vectorised_modifiers_match_python_re_on_random_text(cls) -> None:
    import random

    rng = random.Random(7)
    pieces = ["a", "Z", "é", "字", " ", "\n", "\r", "\r\n", "\t", "\u00a0", "\u3000", "\x0b",
              "*", "**", "_", "[", "]", "(", ")", "http://", "HTTPS://", "wWw.", ".", "/"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    ref = _nemo_reference()[cls]
    got = cls().modify_batch(pa.array(texts, pa.string())).to_pylist()
    assert got == [ref(t) for t in texts]


class _LoadsALexicon(DocumentModifier):
    def setup(self) -> None:
        self.lexicon = {"a": "b"}

    def modify_document(self, text: str) -> str:
        return text


def test_only_modifiers_with_a_setup_ask_for_a_long_lived_worker() -> None:
    assert not Modify(UrlRemover()).has_worker_state
    assert not Modify(str.upper).has_worker_state
    assert Modify([UrlRemover(), _LoadsALexicon()]).has_worker_state
