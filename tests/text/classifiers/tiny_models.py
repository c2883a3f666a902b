"""Builders of tiny real models and tokenizers in the published layouts (shared by the
classifier and tokenization tests)."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = ("the cat sat on mat dog ran far away a big red house tree blue sky green grass "
         "math lesson teaches algebra students learn buy now cheap deal click here").split()


def save_tokenizer(path: Path, max_len: int = 64) -> int:
    """A word-level fast tokenizer with [CLS] ... [SEP] framing; returns the vocab size."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                            cls_token="[CLS]", sep_token="[SEP]",
                            model_max_length=max_len).save_pretrained(str(path))
    return len(vocab)


def save_backbone_config(path: Path, vocab_size: int) -> None:
    from transformers import DebertaV2Config

    DebertaV2Config(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                    relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"],
                    position_biased_input=False, norm_rel_ebd="layer_norm", share_att_key=True,
                    type_vocab_size=0, pad_token_id=0).save_pretrained(str(path))


def read_json(path: str) -> dict:
    return json.loads(Path(path).read_text())
