"""Splitting videos into clips."""
