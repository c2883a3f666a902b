"""Tiny models in the published layouts, for tests, examples and benchmarks (torch on use).

Each helper writes files exactly as a user's downloaded model directory holds them, so stages
load them through their normal ``model_dir`` path.
"""

from __future__ import annotations

import os

__all__ = ["make_tiny_transnetv2", "make_cut_detecting_transnetv2", "make_tiny_qwen2_5_vl"]


def make_tiny_transnetv2(path: str, *, F: int = 2, L: int = 3, S: int = 2, D: int = 16,
                         seed: int = 0) -> str:
    """Save a random-weight TransNetV2 (published module names and state-dict keys, smaller
    ``F``/``D``) as ``path/transnetv2-pytorch-weights.pth``; returns ``path``."""
    import torch

    from curator_video.models.transnetv2 import WEIGHTS_NAME, TransNetV2

    torch.manual_seed(seed)
    model = TransNetV2(F=F, L=L, S=S, D=D)
    os.makedirs(path, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(path, WEIGHTS_NAME))
    return path


def make_cut_detecting_transnetv2(path: str, *, sharpness: float = 20.0) -> str:
    """Save a TransNetV2 in the published layout whose weights are set by hand so that the
    network itself flags hard cuts: the colour-histogram branch's first unit is
    ``relu(1 - similarity(frame t, frame t+1))``, ``fc1`` passes it through and ``cls_layer1``
    turns it into ``sigmoid(sharpness * (d - 0.5))``; every other weight is zero. The last
    frame of each shot gets a probability near 1, the others near 0."""
    import torch

    from curator_video.models.transnetv2 import WEIGHTS_NAME, TransNetV2

    model = TransNetV2(F=1, L=3, S=2, D=4)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        fc = model.color_hist_layer.fc                    # lookup window: index 50 is frame t
        fc.weight[0, fc.in_features // 2 + 1] = -1.0      # similarity to frame t+1
        fc.bias[0] = 1.0
        model.fc1.weight[0, 0] = 1.0                      # colour-histogram features come first
        model.cls_layer1.weight[0, 0] = sharpness
        model.cls_layer1.bias[0] = -sharpness / 2
    os.makedirs(path, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(path, WEIGHTS_NAME))
    return path


QWEN_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                       "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
# the parts of Qwen2-VL's chat template the stages use: default system turn, text and
# image/video placeholders, generation prompt
QWEN_CHAT_TEMPLATE = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant."
    "<|im_end|>\n{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def make_tiny_qwen2_5_vl(path: str, *, seed: int = 0) -> str:
    """Save a random-weight ``Qwen2_5_VLForConditionalGeneration`` (2 text and 2 vision
    layers, width 32) with its processor (a byte-level BPE tokenizer with Qwen's special tokens
    trained on a few words, Qwen2-VL image and video processors, a chat template) through
    ``save_pretrained``, as a downloaded Qwen2.5-VL directory is laid out; returns ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2TokenizerFast,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    words = ["a video of a red square moving over a blue background",
             "describe the clip in detail", "the camera pans to the left"]
    bpe.train_from_iterator(words * 4, trainers.BpeTrainer(
        vocab_size=320, special_tokens=QWEN_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = Qwen2TokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", unk_token=None, bos_token=None)
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56 * 4}
    processor = Qwen2_5_VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                    video_processor=Qwen2VLVideoProcessor(**pixels),
                                    tokenizer=tokenizer, chat_template=QWEN_CHAT_TEMPLATE)
    ids = dict(zip(QWEN_SPECIAL_TOKENS, tokenizer.convert_tokens_to_ids(QWEN_SPECIAL_TOKENS),
                   strict=True))
    config = Qwen2_5_VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 2048, "tie_word_embeddings": True,
                     "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]},
                     "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 4,
                       "out_hidden_size": 32, "patch_size": 14, "spatial_merge_size": 2,
                       "temporal_patch_size": 2, "window_size": 56,
                       "fullatt_block_indexes": [1]},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config)
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
