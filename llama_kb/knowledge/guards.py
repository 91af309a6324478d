"""Sensitive-pattern detection: keep credentials out of the knowledge base and prompts.

:func:`find_secrets` names the patterns a text matches (``github_token``, ``private_key`` ...);
:func:`scan` walks a JSON-like item (strings, keys, nested lists and mappings);
:func:`redact` replaces matches with ``[REDACTED:<pattern>]``. Messages built from these
results name the pattern, never the matched text, so a report cannot leak the secret.

Detection is shared with ingestion (:mod:`llama_kb.ingest.guards.secrets`). The patterns are
deliberately precise (known token formats, ``key=value`` assignments,
credentials inside URLs) so that prose *about* passwords or tokens is not rejected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from llama_kb.ingest.guards.secrets import (
    CREDENTIAL_WORDS,
    PATTERNS,
    SecretScanner,
    SensitivePattern,
)

__all__ = ["PATTERNS", "SensitivePattern", "describe", "find_secrets", "redact", "scan"]

_SCANNER = SecretScanner()

_CREDENTIAL_KEY = re.compile(rf"^(?:{CREDENTIAL_WORDS}|token|credentials?)$", re.IGNORECASE)


def find_secrets(text: str) -> list[str]:
    """Types of the secrets in ``text``, sorted, without duplicates.

    Detection is :class:`~llama_kb.ingest.guards.secrets.SecretScanner` (detect-secrets
    plugins plus :data:`PATTERNS`), the same scanner ingestion uses.
    """
    return _SCANNER.types(text)


def scan(item: Any) -> list[str]:
    """Sensitive pattern names found anywhere in a JSON-like ``item``.

    Strings are matched against :data:`PATTERNS`; a mapping key that names a credential
    (``password``, ``api_key``, ``token`` ...) with a non-empty value counts as
    ``credential_property``.

    Args:
        item: A string, number, list or mapping (nested).

    Returns:
        The pattern names, sorted, without duplicates; empty when nothing was found.
    """
    found: set[str] = set()
    for text in _strings(item, found):
        found.update(find_secrets(text))
    return sorted(found)


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<type>]``."""
    return _SCANNER.redact(text)


def describe(names: Iterable[str]) -> str:
    """A rejection reason naming the patterns (never the matched text)."""
    listed = ", ".join(names)
    return f"contains sensitive data ({listed}); remove credentials before loading knowledge"


def _strings(item: Any, found: set[str]) -> Iterable[str]:
    if isinstance(item, str):
        yield item
    elif isinstance(item, Mapping):
        for key, value in item.items():
            key_text = str(key)
            if _CREDENTIAL_KEY.match(key_text.strip()) and value not in (None, "", [], {}):
                found.add("credential_property")
            yield key_text
            yield from _strings(value, found)
    elif isinstance(item, list | tuple):
        for value in item:
            yield from _strings(value, found)
