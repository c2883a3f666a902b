"""curator-image: image curation stages for Curator."""

__all__: list[str] = []
