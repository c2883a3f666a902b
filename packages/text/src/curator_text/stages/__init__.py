"""Other text stages."""

from curator_text.stages.add_id import AddId

__all__ = ["AddId"]
