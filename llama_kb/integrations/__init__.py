"""Faces of llama-kb for other frameworks and protocols (imported only on demand)."""
