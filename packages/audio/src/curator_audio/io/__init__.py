"""Manifest readers and writers."""
