"""PII redaction on Microsoft Presidio: pattern recognizers without any downloaded model, NER
entities with a local spaCy model."""

from curator_text.pii.modifier import (
    NER_ENTITIES,
    PATTERN_ENTITIES,
    PII_COUNTER,
    PiiModifier,
    PiiRedactionStage,
)

__all__ = ["PiiModifier", "PiiRedactionStage", "PATTERN_ENTITIES", "NER_ENTITIES",
           "PII_COUNTER"]
