"""Clip embeddings and clip semantic dedup."""
