"""Ingestion: file discovery, readers for each supported format, and chunking."""
