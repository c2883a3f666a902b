"""Image I/O: WebDataset shard reader and writer."""

__all__: list[str] = []
