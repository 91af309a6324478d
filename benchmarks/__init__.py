"""Benchmarks for llama-kb; run ``python -m benchmarks --help``."""
