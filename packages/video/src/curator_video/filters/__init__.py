"""Clip filters."""
