"""Sensitive-pattern detection: keep credentials out of the knowledge base and prompts.

:func:`find_secrets` names the patterns a text matches (``github_token``, ``private_key`` ...);
:func:`scan` walks a JSON-like item (strings, keys, nested lists and mappings);
:func:`redact` replaces matches with ``[REDACTED:<pattern>]``. Messages built from these
results name the pattern, never the matched text, so a report cannot leak the secret.

The patterns are deliberately precise (known token formats, ``key=value`` assignments,
credentials inside URLs) so that prose *about* passwords or tokens is not rejected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_CREDENTIAL_WORDS = (
    r"password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|apikey|"
    r"access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
    r"api[_-]?token|private[_-]?key|account[_-]?key"
)


@dataclass(frozen=True)
class SensitivePattern:
    """A named regular expression for one kind of credential."""

    name: str
    regex: re.Pattern[str]


def _p(name: str, pattern: str, flags: int = 0) -> SensitivePattern:
    return SensitivePattern(name, re.compile(pattern, flags))


PATTERNS: tuple[SensitivePattern, ...] = (
    _p("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    _p("aws_access_key_id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"),
    _p(
        "aws_secret_access_key",
        r"aws_?secret_?access_?key\W{0,3}[=:]\s*['\"]?[A-Za-z0-9/+]{40}\b",
        re.IGNORECASE,
    ),
    _p("openai_api_key", r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}"),
    _p("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    _p("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # A bearer token has a digit somewhere, which keeps "bearer authentication" out.
    _p(
        "bearer_token",
        r"\bbearer\s+(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{8,}=*",
        re.IGNORECASE,
    ),
    _p("credentials_in_url", r"\b[a-z][a-z0-9+.-]*://[^\s/:@'\"]+:[^\s/@'\"]+@[^\s/]"),
    # password=..., api_key: "..." (quoted), Password=...; in connection strings.
    _p(
        "credential_assignment",
        rf"\b(?:{_CREDENTIAL_WORDS})\s*=\s*['\"]?[^\s'\";,]{{3,}}",
        re.IGNORECASE,
    ),
    _p(
        "credential_assignment",
        rf"['\"]?\b(?:{_CREDENTIAL_WORDS})['\"]?\s*:\s*['\"][^'\"\s]{{3,}}['\"]",
        re.IGNORECASE,
    ),
)

_CREDENTIAL_KEY = re.compile(rf"^(?:{_CREDENTIAL_WORDS}|token|credentials?)$", re.IGNORECASE)


def find_secrets(text: str) -> list[str]:
    """Names of the sensitive patterns ``text`` matches, sorted, without duplicates."""
    return sorted({p.name for p in PATTERNS if p.regex.search(text)})


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
    """``text`` with every sensitive match replaced by ``[REDACTED:<pattern>]``."""
    for pattern in PATTERNS:
        text = pattern.regex.sub(f"[REDACTED:{pattern.name}]", text)
    return text


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
