"""Other text stages: ids, splitting and joining documents."""

from curator_text.stages.add_id import AddId
from curator_text.stages.splitting import DocumentJoiner, DocumentSplitter

__all__ = ["AddId", "DocumentSplitter", "DocumentJoiner"]
