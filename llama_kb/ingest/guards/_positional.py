"""Credentials given by position, with no credential word right before the value.

Each rule is a category of place that holds a password by convention, not one tool:

* a password piped to a command that reads it from standard input
  (``echo '...' | sudo -S``, ``--password-stdin``, ``passwd --stdin``, ``chpasswd``) or
  encodes it for a secret or a header (``echo -n '...' | base64``);
* the argument after a Windows-style user option (``net use ... /user:DOM\\user <password>``);
* a line of two quoted fields, user then password (pgbouncer's ``userlist.txt``);
* the quoted arguments of a call whose name says it logs in or connects
  (``DBI->connect(dsn, "user", "...")``, ``ldap.simple_bind_s(dn, "...")``), and the first
  argument of a client library's class (``vendor.Client("...")``) when random or a UUID;
* ``log in as <user> with <value>``;
* the random path segment of a webhook URL (``/hooks/<id>``);
* an app password of four groups of four letters after a credential word;
* a mnemonic seed phrase under a key that names it;
* two-factor recovery codes after the words that name them, or listed under them.

A value is reported when the weak evidence of its position plus its shape
(:func:`~._evidence.shape_score`) reaches the threshold of :mod:`._context`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_kb.ingest.guards._context import THRESHOLD
from llama_kb.ingest.guards._evidence import RANDOM, entropy, is_name, shape_score

__all__ = ["positional_spans", "recovery_list_findings"]

_WEAK = 1
_PAIR = 2
_QUOTED = r"'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<bare>[^\s'\"|;&]+)"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (  # (a substring the line holds, pattern)
    (
        "|",
        re.compile(
            rf"\b(?:echo|printf)\s+(?:-[neE]\s+|'%s[^'\s]*'\s+|\"%s[^\"\s]*\"\s+)?(?:{_QUOTED})"
            r"\s*\|\s*[^|\n]*?"
            r"(?:\s-S\b|--password-stdin\b|--stdin\b|\bchpasswd\b|\bbase64\b)"
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
    r"(?<![\w.>$-])(?P<name>[\w.>$-]*)(?<!Error)(?<!Exception)\s*\((?P<args>[^()\n]*)\)"
)
# Calls named for logging in, connecting or making an API client take credentials
# (``Client(...)``, ``pyairtable.Api(...)``, ``ShopifyAPI(...)``), and so do calls that
# create a user or set a password (``create_user(name, mail, ...)``).
_LOGIN_NAME = re.compile(
    r"login|logon|connect|signin|bind|auth|client|api$|(?:create|add|new)_?user|"
    r"(?:set|change|reset)_?password",
    re.IGNORECASE,
)
# A class of a client library's module (``deepl.Translator``, ``mercadopago.SDK``): its
# first argument is the credential the client is made with, unless the class names a value
# type (``uuid.UUID``, ``decimal.Decimal``)
_SDK_CLASS = re.compile(r"^(?:[a-z][a-z0-9_]*\.)+[A-Z]\w*$")
_VALUE_TYPE = re.compile(
    r"uuid|guid|id$|hash|digest|hex|decimal|date|time|version|path|url|uri|param|query|header|"
    r"cookie|pattern|regex|format|template",
    re.I,
)
# A UUID, maybe with a short suffix (``<uuid>:fx``), given to a client is an API key
_UUID_KEY = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?::[a-z]{1,4})?$", re.I
)
# A host as first argument: ``mysqli("localhost", user, password, db)``
_HOST = re.compile(r"^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+|[a-z][\w+]*://\S*)$")
# Commands and calls that create a user take its password: ``createUser``, ``useradd``.
_NEW_USER = re.compile(
    r"\b(?:(?:create|add|new)[_-]?user|useradd|adduser|net\s+user)(?P<args>[ \t][^\n|;&]*)",
    re.IGNORECASE,
)
_WORD = re.compile(r"'(?P<q1>[^'\s]*)'|\"(?P<q2>[^\"\s]*)\"|(?P<bare>(?<!\S)[^\s'\"/-]\S*)")
_ARGUMENT = re.compile(r"'(?P<q1>[^'\s]*)'|\"(?P<q2>[^\"\s]*)\"")  # a message has spaces
# A random segment after any path segment naming a hook (``/hooks/``, ``/IncomingWebhook/``)
_WEBHOOK = re.compile(
    r"https?://[^\s/]+/(?:[^\s?#]*/)?[^\s/?#]*hooks?[^\s/?#]*/(?P<bare>[A-Za-z0-9_-]{20,})",
    re.IGNORECASE,
)
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
# Two-factor recovery codes (GitHub, Google, Django OTP): ``xxxxx-xxxxx`` groups in a list
_RECOVERY = re.compile(
    r"\b(?:recovery|backup|scratch|emergency)[ _-]+codes?\b[^\n]{0,12}?[:\s]\s*"
    r"(?P<bare>(?=[a-z-]*\d)[a-z0-9]{4,5}-[a-z0-9]{4,5})(?![\w-])",
    re.IGNORECASE,
)
_VOWELS = re.compile("[aeiouy]", re.IGNORECASE)
# A heading naming one-time codes, then a list of them, one per line
_CODES_HEADING = re.compile(
    r"\b(?:recovery|backup|scratch|emergency|one[- ]time|two[- ]factor|2fa|mfa)\b[^\n]{0,20}?"
    r"\bcodes?\b",
    re.IGNORECASE,
)
_LISTED_CODE = re.compile(
    r"^\s*(?:\d{1,2}[.)]\s*|[-*•]\s*)?(?P<code>\d{4}[ -]?\d{4}|\d{6,10}|"
    r"(?=[a-zA-Z]*\d)(?=\d*[a-zA-Z])[a-zA-Z0-9]{4,5}-?[a-zA-Z0-9]{4,5})\s*$"
)
_MAX_CODES = 16


def positional_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` holding a credential given by its position."""
    for needle, pattern in _RULES:
        for match in pattern.finditer(line) if needle in line else ():
            yield from _scored(match)
    for call in _CALL.finditer(line) if "(" in line else ():
        yield from _call_arguments(call)
    for match in _NEW_USER.finditer(line):
        offset = match.start("args")
        for index, word in enumerate(_WORD.finditer(match.group("args"))):
            group = next(g for g in ("q1", "q2", "bare") if word.group(g) is not None)
            if _WEAK + (index > 0) + shape_score(word.group(group)) >= THRESHOLD:  # after user
                yield offset + word.start(group), offset + word.end(group)
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
    for match in _RECOVERY.finditer(line):
        yield match.span("bare")


def recovery_list_findings(lines: list[str]) -> Iterator[tuple[int, int, int]]:
    """``(line, start, end)`` of two-factor codes listed under a heading that names them
    (``Google backup codes ...`` then ``1. 7397 4710``), two or more of them."""
    for index, line in enumerate(lines):
        if ("ode" not in line and "ODE" not in line) or not _CODES_HEADING.search(line):
            continue
        listed = []
        for number, below in enumerate(lines[index + 1 : index + 1 + _MAX_CODES], index + 2):
            code = _LISTED_CODE.match(below)
            if code is None:
                if below.strip():
                    break
                continue
            listed.append((number, *code.span("code")))
        if len(listed) >= 2:
            yield from listed


def _call_arguments(call: re.Match[str]) -> Iterator[tuple[int, int]]:
    """Quoted arguments of a call named for logging in or connecting, and the arguments after
    a host and a user (``mysqli("localhost", "shop", "<password>")``).

    A password comes after the host and user: from the third argument on, the position adds
    to the evidence.
    """
    arguments = list(_ARGUMENT.finditer(call.group("args")))
    values = [a.group("q1") if a.group("q1") is not None else a.group("q2") for a in arguments]
    named = bool(_LOGIN_NAME.search(call.group("name")))
    host_first = len(values) >= 3 and bool(_HOST.match(values[0]))
    offset = call.start("args")
    if _sdk_client(call.group("name")) and values:
        first = values[0]
        token = not any(c in first for c in "=&: ")  # not a query, a mapping or a sentence
        if _UUID_KEY.match(first) or (token and shape_score(first) == RANDOM):
            group = "q1" if arguments[0].group("q1") is not None else "q2"
            yield offset + arguments[0].start(group), offset + arguments[0].end(group)
    if not (named or host_first):
        return
    for index, (argument, value) in enumerate(zip(arguments, values, strict=True)):
        # at most 2: the value's shape must add to it
        evidence = min(_PAIR, (_WEAK if named else 0) + (index >= 2) + (index >= 2 and host_first))
        if "=" not in value and ":" not in value and evidence + shape_score(value) >= THRESHOLD:
            group = "q1" if argument.group("q1") is not None else "q2"
            yield offset + argument.start(group), offset + argument.end(group)


def _sdk_client(name: str) -> bool:
    """Whether ``name`` is a class of a client library's module, not a value type."""
    return bool(_SDK_CLASS.match(name)) and not _VALUE_TYPE.search(name.rsplit(".", 1)[-1])


def _scored(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    for group in ("q1", "q2", "bare"):
        value = match.groupdict().get(group)
        if value is not None:
            value = value.rstrip(".,;:!?") if group == "bare" else value  # quoted: all of it
            if _WEAK + shape_score(value) >= THRESHOLD:
                start = match.start(group)
                yield start, start + len(value)
            return


def _random_id(token: str) -> bool:
    has_both = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    return has_both and not is_name(token) and entropy(token) >= 3.5
