"""Credentials given by position, with no credential word right before the value.

Each rule is a category of place that holds a password by convention, not one tool:

* a password piped to a command that reads it from standard input
  (``echo '...' | sudo -S``, ``--password-stdin``, ``passwd --stdin``, ``chpasswd``);
* the argument after a Windows-style user option (``net use ... /user:DOM\\user <password>``);
* a line of two quoted fields, user then password (pgbouncer's ``userlist.txt``);
* the quoted arguments of a call whose name says it logs in or connects
  (``DBI->connect(dsn, "user", "...")``, ``ldap.simple_bind_s(dn, "...")``);
* ``log in as <user> with <value>``;
* the random path segment of a webhook URL (``/hooks/<id>``);
* an app password of four groups of four letters after a credential word;
* a mnemonic seed phrase under a key that names it.

A value is reported when the weak evidence of its position plus its shape
(:func:`~._evidence.shape_score`) reaches the threshold of :mod:`._context`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_kb.ingest.guards._context import THRESHOLD
from llama_kb.ingest.guards._evidence import entropy, is_name, shape_score

__all__ = ["positional_spans"]

_WEAK = 1
_QUOTED = r"'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<bare>[^\s'\"|;&]+)"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (  # (a substring the line holds, pattern)
    (
        "|",
        re.compile(
            rf"\b(?:echo|printf)\s+(?:-[neE]\s+)?(?:{_QUOTED})\s*\|\s*[^|\n]*?"
            r"(?:\s-S\b|--password-stdin\b|--stdin\b|\bchpasswd\b)"
        ),
    ),
    ("/", re.compile(r"(?<!\S)/u(?:ser)?:\S+\s+(?P<bare>[^\s/][^\s]*)", re.IGNORECASE)),
    ('"', re.compile(r"^\s*\"[^\"\s]+\"\s+\"(?P<q2>[^\"\s]+)\"\s*$")),
    (
        " as ",
        re.compile(
            r"\b(?:ssh|log\s?in|login|sign\s?in|connect)\b[^\n]{0,30}?\bas\s+[\w.@\\-]+\s+"
            r"(?:with|using)\s+(?:the\s+password\s+)?(?P<bare>[^\s,;]+)",
            re.IGNORECASE,
        ),
    ),
)
_CALL = re.compile(
    r"(?P<name>[\w.>$-]*(?:login|logon|connect|signin|bind|auth)\w*)"
    r"(?<!Error)(?<!Exception)\s*\((?P<args>[^()\n]*)\)",
    re.IGNORECASE,
)
_ARGUMENT = re.compile(r"'(?P<q1>[^'\s]*)'|\"(?P<q2>[^\"\s]*)\"")  # a message has spaces
_WEBHOOK = re.compile(r"https?://[^\s/]+/(?:[^\s?#]*/)?(?:web)?hooks?/(?P<bare>[A-Za-z0-9_-]{20,})")
_APP_PASSWORD = re.compile(
    r"\b(?:password|passcode|passwort|contrase[ñn]a)\b[^\n]{0,40}?"
    r"(?<![\w-])(?P<bare>[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4})(?![\w-])",
    re.IGNORECASE,
)
_MNEMONIC = re.compile(
    r"(?:mnemonic|seed[ _-]?phrase|recovery[ _-]?phrase|seed[ _-]?words)\w*['\"]?\s*[:=]\s*['\"]?"
    r"(?P<bare>[a-z]{3,8}(?: [a-z]{3,8}){11,23})\b",
    re.IGNORECASE,
)
_VOWELS = re.compile("[aeiouy]", re.IGNORECASE)


def positional_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` holding a credential given by its position."""
    for needle, pattern in _RULES:
        for match in pattern.finditer(line) if needle in line else ():
            yield from _scored(match)
    for call in _CALL.finditer(line):
        offset = call.start("args")
        for argument in _ARGUMENT.finditer(call.group("args")):
            value = argument.group("q1") or argument.group("q2") or ""
            if "=" not in value and ":" not in value and _WEAK + shape_score(value) >= THRESHOLD:
                group = "q1" if argument.group("q1") is not None else "q2"
                yield offset + argument.start(group), offset + argument.end(group)
    for hook in _WEBHOOK.finditer(line) if "hook" in line else ():
        token = hook.group("bare")
        if _random_id(token):
            yield hook.span("bare")
    for match in _APP_PASSWORD.finditer(line):
        groups = match.group("bare").split(match.group("sep"))
        if any(not _VOWELS.search(g) for g in groups):  # random letters, not four words
            yield match.span("bare")
    for match in _MNEMONIC.finditer(line):
        yield match.span("bare")


def _scored(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    for group in ("q1", "q2", "bare"):
        value = match.groupdict().get(group)
        if value is not None:
            value = value.rstrip(".,;:!?")
            if _WEAK + shape_score(value) >= THRESHOLD:
                start = match.start(group)
                yield start, start + len(value)
            return


def _random_id(token: str) -> bool:
    has_both = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    return has_both and not is_name(token) and entropy(token) >= 3.5
