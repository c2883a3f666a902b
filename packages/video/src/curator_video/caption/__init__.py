"""Clip captioning with vision-language models."""
