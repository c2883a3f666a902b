"""Filters that need a local resource: HistogramFilter (a generated histogram file in NeMo
Curator's layout), TokenCountFilter and TokenizerFertilityFilter (tiny real tokenizers built
here: a Hugging Face tokenizer saved in transformers' layout and a SentencePiece model)."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from curator_text import DocumentBatch
from curator_text import filters as F
from curator_text.filters.histogram import HISTOGRAM_SUBDIR

CORPUS = ["the cat sat on the mat", "a dog ran in the park", "birds sing in the trees",
          "the sun is warm today", "we read a good book"] * 4


def _batch(texts: list[str]) -> DocumentBatch:
    return DocumentBatch(task_id="t", dataset_name="d", data=pa.table({"text": texts}))


@pytest.fixture(scope="module")
def hf_tokenizer_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    path = tmp_path_factory.mktemp("hf_tok")
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(str(path))
    return str(path)


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    import sentencepiece as spm

    prefix = tmp_path_factory.mktemp("spm") / "tok"
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_prefix=str(prefix),
                                   vocab_size=70, model_type="bpe", minloglevel=2,
                                   num_threads=1)
    return f"{prefix}.model"


def test_histogram_filter_reads_nemo_layout(tmp_path) -> None:
    hist = tmp_path / HISTOGRAM_SUBDIR
    hist.mkdir(parents=True)
    # one character per line, most frequent first; "]" ends the list ("z" below it is unused)
    (hist / "en").write_text("".join(f"{c} {100 - i}\n" for i, c in enumerate("abcdeht "))
                             + "] 1\nz 1\n", encoding="utf-8")
    flt = F.HistogramFilter(lang="en", threshold=0.8, cache_dir=str(tmp_path))
    assert flt.score_document("the cat ate") == 1  # 11/11 characters in the histogram
    assert flt.score_document("zzz the") == 0  # "z" comes after "]": 4/7 <= 0.8
    out = F.ScoreFilter(flt).process(_batch(["bead the cab", "xyz quiz"])).to_pyarrow()
    assert out["text"].to_pylist() == ["bead the cab"]


def test_histogram_filter_never_downloads(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="histograms.tar.gz"):
        F.HistogramFilter(lang="en", cache_dir=str(tmp_path))


def test_token_count_filter_with_local_tokenizer_dir_and_object(hf_tokenizer_dir) -> None:
    from transformers import AutoTokenizer

    flt = F.TokenCountFilter(hf_model_name=hf_tokenizer_dir, min_tokens=3, max_tokens=5)
    stage = F.ScoreFilter(flt, score_field="tokens")
    stage.setup()
    out = stage.process(_batch(["the cat", "the cat sat", "the cat sat on the mat"]))
    assert out.to_pyarrow()["text"].to_pylist() == ["the cat sat"]
    assert out.to_pyarrow()["tokens"].to_pylist() == [3]
    assert pickle.loads(pickle.dumps(flt))._tokenizer is None  # reloaded in each worker
    tok = AutoTokenizer.from_pretrained(hf_tokenizer_dir)
    by_object = F.TokenCountFilter(tokenizer=tok, max_tokens=2)
    assert by_object.score_document("the sun is warm") == 4
    with pytest.raises(ValueError, match="exactly one"):
        F.TokenCountFilter()
    with pytest.raises(ValueError, match="local_files_only"):
        F.TokenCountFilter(hf_model_name=hf_tokenizer_dir,
                           transformers_init_kwargs={"local_files_only": False})


def test_tokenizer_fertility_with_sentencepiece_model(spm_model) -> None:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor()
    sp.Load(spm_model)
    text = "the cat sat on the mat"
    flt = F.TokenizerFertilityFilter(path_to_tokenizer=spm_model, min_char_to_token_ratio=2.5)
    assert flt.score_document(text) == pytest.approx(len(text) / len(sp.encode_as_pieces(text)))
    assert flt.score_document("") == -1
    unknown = "xqzj vkwp qqzx"  # characters outside the corpus: about one token each
    out = F.ScoreFilter(flt).process(_batch([text, unknown])).to_pyarrow()
    assert out["text"].to_pylist() == [text]
    with pytest.raises(ValueError, match="path_to_tokenizer"):
        F.TokenizerFertilityFilter(path_to_tokenizer=None)


def test_tokenizer_fertility_with_hf_tokenizer_dir(hf_tokenizer_dir) -> None:
    flt = F.TokenizerFertilityFilter(path_to_tokenizer=hf_tokenizer_dir)
    assert flt.score_document("the cat sat") == pytest.approx(11 / 3)
    assert pickle.loads(pickle.dumps(flt)).score_document("the cat") == pytest.approx(7 / 2)
