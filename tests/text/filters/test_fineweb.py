"""datatrove's FineWeb filters: each reason, C4's line removal, the split sink and the report's
per-reason counts, the URL block lists, and the English word tokenizer."""

from __future__ import annotations

import importlib.util

import pyarrow as pa
import pytest
from curator import LocalExecutor, Pipeline
from curator.errors import ConfigError
from curator_text import (
    C4QualityFilter,
    DocumentBatch,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
    URLFilter,
)
from curator_text.filters._english_words import english_words
from curator_text.filters.fineweb import REASONS_COUNTER

SENTENCES = [
    "The committee reviewed the proposal and decided to approve it with minor changes.",
    "Residents of the town gathered in the square to celebrate the harvest festival.",
    "Scientists have discovered a new species of frog in the rainforest of Peru.",
    "The company reported strong earnings for the third quarter of the year.",
    "Students from several schools took part in the annual science competition.",
    "Heavy rain caused flooding in low lying areas of the city on Tuesday.",
    "The museum opened a new exhibition dedicated to modern art and design.",
    "Local farmers say the dry season has been longer than usual this year.",
    "The library will extend its opening hours during the examination period.",
    "A new bridge connecting the two districts is expected to open next spring.",
]
GOOD = "\n".join(SENTENCES)


def _reasons(stage, texts: list[str], **cols) -> list[str]:
    codes, _ = stage.decide(stage.column(pa.table({"text": texts, **cols})))
    return ["" if c == 0 else stage.reasons[c - 1] for c in codes.tolist()]


def test_tokenizer_follows_the_english_rules() -> None:
    assert english_words("I don't think it's a 16-inch U.S. model, Mr. Smith (see http://x.org/a-b).") == [
        "I", "do", "n't", "think", "it", "'s", "a", "16", "-", "inch", "U.S.", "model", ",",
        "Mr.", "Smith", "(", "see", "http://x.org/a-b", ")", "."]
    assert english_words("Traceback (most recent call last):") == [
        "Traceback", "(", "most", "recent", "call", "last", "):"]
    assert english_words("  \n\t ") == []
    assert english_words("Cannot stop gonna win... 10km 5pm") == [
        "Can", "not", "stop", "gon", "na", "win", "...", "10", "km", "5", "pm"]


@pytest.mark.skipif(importlib.util.find_spec("spacy") is None, reason="spaCy not installed")
def test_tokenizer_counts_agree_with_spacy_blank_english() -> None:
    """Checked against the reference: datatrove's English words are spacy.blank('en') tokens
    without the whitespace ones."""
    import spacy

    nlp = spacy.blank("en")
    texts = [GOOD, "Wait... what?! \"Quoted,\" she said -- (really) [1] {x} e.g. i.e. 3.14%",
             "Prices: $5, £3.50, 20€ and 10USD; email me@example.com or visit www.example.com.",
             "She'll've gone; y'all can't; won't; ain't; O'clock; 'cause; ma'am :) <3 C++ 9am.",
             "Hyphen-ated well-known state-of-the-art 2-3 4/5 A/B a.m. p.m. U.K. USA. co-op"]
    for text in texts:
        ref = [t.text.strip() for t in nlp(text) if t.text.strip()]
        assert english_words(text) == ref, text


def test_gopher_quality_reasons() -> None:
    stage = GopherQualityFilter()
    texts = [GOOD, "too short text.", GOOD + " " + " ".join(["#tag"] * 30),
             "\n".join(f"- {s}" for s in SENTENCES),
             "\n".join(f"{s[:-1]}..." for s in SENTENCES), " ".join(["wait... what..."] * 30),
             " ".join(["a an it is so"] * 30), " ".join(["internationalization"] * 60),
             " ".join(["1234 5678 9012 3456 and the cats"] * 20),
             " ".join(["Cats sleep while dogs bark loudly outside"] * 20)]
    assert _reasons(stage, texts) == [
        "", "gopher_short_doc", "gopher_too_many_hashes", "gopher_too_many_bullets",
        "gopher_too_many_end_ellipsis", "gopher_too_many_ellipsis", "gopher_below_avg_threshold",
        "gopher_above_avg_threshold", "gopher_below_alpha_threshold", "gopher_enough_stop_words"]
    assert _reasons(GopherQualityFilter(min_doc_words=None, max_doc_words=5), [GOOD]) == [
        "gopher_long_doc"]


def test_gopher_repetition_reasons() -> None:
    stage = GopherRepetitionFilter()
    texts = [GOOD, "\n\n".join([SENTENCES[0]] * 3 + SENTENCES[1:3]),
             "\n".join([SENTENCES[0]] * 5 + SENTENCES[1:4]),
             GOOD + " " + " ".join(["red apple"] * 40)]
    assert _reasons(stage, texts) == ["", "dup_para_frac", "dup_line_frac", "top_2_gram"]


def test_c4_removes_lines_and_keeps_the_edited_text() -> None:
    text = "\n".join(["Menu", *SENTENCES[:5], "Enable Javascript to see more of this page.",
                      "Read our privacy policy here.", SENTENCES[5][:-1] + " [1].", "Home | About"])
    out = C4QualityFilter().process(DocumentBatch(task_id="t", dataset_name="d",
                                                  data=pa.table({"text": [text]})))
    kept = out.to_pyarrow()["text"].to_pylist()[0]
    assert kept == "\n".join([*SENTENCES[:5], SENTENCES[5][:-1] + " ."])
    stage = C4QualityFilter()
    assert _reasons(stage, [GOOD, GOOD + "\nLorem ipsum dolor sit amet.",
                            GOOD + "\nThe value is {x} here.", SENTENCES[0]]) == [
        "", "lorem_ipsum", "curly_bracket", "too_few_sentences"]


def test_fineweb_quality_reasons() -> None:
    stage = FineWebQualityFilter()
    texts = [GOOD, " \n ", "\n".join(s[:-1] for s in SENTENCES), "\n".join(["Short one."] * 9),
             GOOD + "\n" + SENTENCES[0], "\n".join(["Alpha beta gamma.", "Delta."] * 8)]
    assert _reasons(stage, texts) == ["", "empty", "line_punct_ratio", "short_line_ratio",
                                      "char_dup_ratio", "short_line_ratio"]
    many = "\n".join(f"Item {i}." for i in range(40))
    assert _reasons(FineWebQualityFilter(short_line_thr=1.0), [many]) == ["list_ratio"]


def test_url_filter_block_list_directory(tmp_path) -> None:
    d = tmp_path / "lists"
    d.mkdir()
    (d / "domains").write_text("# blocked\nbad.com\nsub.okay.org\n")
    (d / "urls").write_text("https://fine.net/exact/page\n")
    (d / "banned_words.txt").write_text("forbidden\n")
    (d / "soft_banned_words.txt").write_text("spam\nscam\n")
    (d / "banned_subwords.txt").write_text("zzbad\n")
    stage = URLFilter(block_list_dir=str(d))
    urls = ["https://www.bad.com/x", "http://sub.okay.org/a", "https://fine.net/exact/page",
            "https://fine.net/a-forbidden-page", "https://fine.net/spam/scam",
            "https://fine.net/spam/only", "https://ZZBAD.fine.net/", "https://okay.org/a", None]
    assert _reasons(stage, ["x"] * len(urls), url=urls) == [
        "domain", "subdomain", "url", "hard_blacklisted", "soft_blacklisted", "",
        "blacklisted_subword", "", "no_url"]
    with pytest.raises(ConfigError, match="block_list_dir"):
        URLFilter(use_integrated_lists=True)


def test_split_sends_reasons_to_the_sink_and_counts_them_in_the_report() -> None:
    texts = [GOOD, "too short text.", GOOD + "\nLorem ipsum dolor sit amet.", "tiny"]
    batch = DocumentBatch(task_id="b", dataset_name="d",
                          data=pa.table({"text": texts, "n": [0, 1, 2, 3]}))
    stages = [C4QualityFilter(split=True), GopherQualityFilter(split=True)]
    result = Pipeline("fw", stages=stages).run(LocalExecutor(), initial_tasks=[batch],
                                               summary=False, progress=False)
    assert result.ok
    kept = [t.to_pyarrow()["n"].to_pylist() for t in result]
    assert kept == [[0]]
    c4, gq = result.stats.stages
    assert c4.counters[REASONS_COUNTER] == {"lorem_ipsum": 1, "too_few_sentences": 2}
    assert c4.rejected_by_reason == {"lorem_ipsum": 1, "too_few_sentences": 2}
    assert gq.counters == {} and gq.rejected_by_reason == {}
    assert "too_few_sentences" in result.summary()


def test_rejected_record_carries_filter_and_reason() -> None:
    stage = GopherQualityFilter(split=True)
    stage.process(DocumentBatch(task_id="b", dataset_name="d",
                                data=pa.table({"text": ["too short text."]})))
    (rec,) = stage.drain_rejected()
    assert (rec.kind, rec.reason) == ("filtered", "gopher_short_doc")
    assert rec.record["filter"] == "GopherQualityFilter"
    assert rec.record["text"] == "too short text."


def test_english_only() -> None:
    with pytest.raises(ConfigError, match="English only"):
        GopherQualityFilter(language="fr")


@pytest.mark.parametrize("stage", [
    GopherRepetitionFilter(), GopherQualityFilter(), C4QualityFilter(), FineWebQualityFilter(),
    URLFilter(banned_words=["forbidden"])], ids=lambda s: s.name)
def test_stages_keep_the_stage_contract(stage) -> None:
    from curator.testing import check_stage_contract

    batch = DocumentBatch(task_id="c", dataset_name="d", data=pa.table(
        {"text": [GOOD, "short"], "url": ["https://a.org/x", "https://a.org/forbidden"]}))
    check_stage_contract(stage, batch)
