"""Guards on ingested input: resource limits, record validation and secret scanning.

* :mod:`~llama_kb.ingest.guards.limits`: file size, special files, decompressed size (zip
  bombs), text length, JSON depth; readers consult the active limits.
* :mod:`~llama_kb.ingest.guards.records`: a document is validated whole before any write.
* :mod:`~llama_kb.ingest.guards.secrets`: precise patterns, credential words followed by
  secret-shaped values, prefixed random tokens and detect-secrets plugins.

:func:`screen_documents` applies record validation and the secret mode to what a reader
returned; the pipeline calls it before it writes anything. Titles, text and metadata
values are scanned.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_kb.config import LimitsConfig, SecretsConfig
from llama_kb.ingest.guards.limits import current_limits, use_limits
from llama_kb.ingest.guards.records import document_problem
from llama_kb.ingest.guards.secrets import SecretFinding, SecretScanner
from llama_kb.types import IngestFailure, Segment, SourceDocument

__all__ = [
    "Screened",
    "SecretFinding",
    "SecretScanner",
    "current_limits",
    "document_problem",
    "screen_documents",
    "use_limits",
]

logger = logging.getLogger(__name__)


@dataclass
class Screened:
    """Documents that may be written, and what was refused or flagged (by source)."""

    documents: list[SourceDocument] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)
    warnings: list[IngestFailure] = field(default_factory=list)


def screen_documents(
    docs: Sequence[SourceDocument],
    limits: LimitsConfig,
    secrets: SecretsConfig,
    scanner: SecretScanner | None = None,
) -> Screened:
    """Validate each document and apply the secret mode (see :class:`SecretsConfig`).

    Reports name the document's file, the line within the document and the secret type;
    never the secret.
    """
    result = Screened()
    mode = secrets.documents
    scanner = scanner or SecretScanner(entropy=secrets.entropy)
    for doc in docs:
        problem = document_problem(doc, limits)
        if problem:
            result.failures.append(IngestFailure(_where(doc), problem))
            continue
        findings = [] if mode == "off" else _scan(doc, scanner)
        if not findings:
            result.documents.append(doc)
            continue
        listed = "; ".join(findings[:10])
        more = f" and {len(findings) - 10} more" if len(findings) > 10 else ""
        if mode == "reject":
            reason = f"contains secrets ({listed}{more}); remove them or set secrets.documents"
            result.failures.append(IngestFailure(_where(doc), reason))
            continue
        action = "redacted" if mode == "redact" else "ingested anyway (secrets.documents=warn)"
        result.warnings.append(IngestFailure(_where(doc), f"secrets {action}: {listed}{more}"))
        logger.warning("%s: secrets %s: %s%s", _where(doc), action, listed, more)
        result.documents.append(_redacted(doc, scanner) if mode == "redact" else doc)
    return result


def _where(doc: SourceDocument) -> str:
    return doc.source_path if doc.doc_id == doc.source_path else f"{doc.source_path} ({doc.doc_id})"


def _scan(doc: SourceDocument, scanner: SecretScanner) -> list[str]:
    """Where and what: ``line N: <type>`` counted in ``doc.text`` (``title: <type>`` for the
    title), then ``metadata['key']: <type>`` for metadata values (document and segments)."""
    found = [dataclasses.replace(f, line=0) for f in scanner.scan(doc.title or "")]
    offset = 0
    for segment in doc.segments:
        found.extend(
            dataclasses.replace(f, line=f.line + offset) for f in scanner.scan(segment.text)
        )
        offset += segment.text.count("\n") + 2
    described = [f.describe() for f in found]
    for metadata in (doc.metadata, *(s.metadata for s in doc.segments)):
        for key, value in metadata.items():
            described.extend(f"metadata[{key!r}]: {t}" for t in _value_types(key, value, scanner))
    return list(dict.fromkeys(described))


def _value_types(key: str, value: Any, scanner: SecretScanner) -> list[str]:
    """Secret types in one metadata value; the key is scanned with it (``password: ...``)."""
    values = value if isinstance(value, list | tuple) else [value]
    return sorted({t for v in values if isinstance(v, str) for t in scanner.types(f"{key}: {v}")})


def _redacted(doc: SourceDocument, scanner: SecretScanner) -> SourceDocument:
    segments = tuple(
        Segment(scanner.redact(s.text), _redacted_metadata(s.metadata, scanner))
        for s in doc.segments
    )
    title = scanner.redact(doc.title) if doc.title else doc.title
    metadata = _redacted_metadata(doc.metadata, scanner)
    return dataclasses.replace(doc, segments=segments, title=title, metadata=metadata)


def _redacted_metadata(metadata: dict[str, Any], scanner: SecretScanner) -> dict[str, Any]:
    """A value holding a secret is replaced whole by ``[REDACTED:<type>]``."""
    cleaned = dict(metadata)
    for key, value in metadata.items():
        types = _value_types(key, value, scanner)
        if types:
            cleaned[key] = f"[REDACTED:{types[0]}]"
    return cleaned
