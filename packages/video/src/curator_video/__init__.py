"""curator-video: video curation stages for Curator."""

__all__: list[str] = []
