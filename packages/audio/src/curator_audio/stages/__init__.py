"""Audio stages."""
