"""Image deduplication: exact (content hash) and semantic (CLIP embeddings) on core's algorithm."""

__all__: list[str] = []
