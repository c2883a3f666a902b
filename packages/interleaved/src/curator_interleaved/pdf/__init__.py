"""PDFs (placeholder)."""
