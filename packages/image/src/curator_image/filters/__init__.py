"""Image filters: aesthetic and NSFW scores over CLIP embeddings."""

__all__: list[str] = []
