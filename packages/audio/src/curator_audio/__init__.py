"""curator-audio: audio curation stages for Curator."""

__all__: list[str] = []
