"""Image processing stages: embedding, filters, dedup removal."""

__all__: list[str] = []
