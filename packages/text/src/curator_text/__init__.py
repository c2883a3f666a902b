"""curator-text: text curation stages for Curator."""

from curator_text.tasks import DocumentBatch

__all__ = ["DocumentBatch"]
