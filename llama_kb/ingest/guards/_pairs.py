"""Credentials given as the second half of a user-then-password pair.

A user name right before a value is evidence in itself, whatever the syntax:

* prose after a word for logging in: ``log in with qa_user / <value>``, ``the login is admin
  and <value>``, ``credentials: jdoe, <value>``;
* a user option followed by the password option of the same family: ``/RU user /RP
  <value>``, ``-U user -P <value>``, ``--dbuser u --dbpass <value>``;
* labels of a user and a password (``u: jdoe p: <value>``), a default account glued to its
  password (``admin/<value>``) and an e-mail address followed by its password (``mail:<value>``,
  ``<mail> with <value>``), the last two with a value shaped like a password;
* a key id followed by its secret (``<AKID> <secret>``, ``('<sid>', '<token>')``), the
  secret random;
* a block of two lines alone, a user name then a password (OpenVPN's ``auth-user-pass``
  file);
* a line naming a user followed by a line in the same syntax (``login: jdoe`` then
  ``initial: <value>``, ``$USER3$=svc`` then ``$USER4$=<value>``), unless the second key
  names another field of a connection (``host``, ``database``, ``role``...).

The pair is strong evidence, so a value needs only a small shape score
(:func:`~._evidence.shape_score`): a password built like a name (a word, digits, then a
short tail after ``-`` or ``.``) counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from llama_kb.ingest.guards._context import THRESHOLD
from llama_kb.ingest.guards._evidence import RANDOM, shape_score
from llama_kb.ingest.guards._words import identifier_words, keyed_as_not_secret

__all__ = ["pair_findings"]

_PAIR = 2
_USER = r"(?P<user>[\w.@\\-]+)"
_VALUE = r"(?P<value>[^\s,;'\"()\[\]{}<>=]+)"
_PROSE = re.compile(  # prose, not code: no "(" or "=" between the word and the value
    r"\b(?:log[ -]?in|logon|sign[ -]?in|credentials?|creds)\b[^\n(=]{0,24}?(?<![\w@.\\-])"
    + _USER
    + r"(?:\s+/|,|\s+and|\s+with)\s+"
    + _VALUE,
    re.IGNORECASE,
)
_OPTIONS = re.compile(
    r"(?<!\S)(?P<dash>--?|/)(?P<family>[A-Za-z]{0,6}?)u(?:ser(?:name)?)?[ \t]*[ :=][ \t]*"
    r"['\"]?[^\s'\"]+['\"]?\s+(?P=dash)(?P=family)p(?:ass(?:word)?|wd?)?[ \t]*[ :=][ \t]*"
    r"['\"]?" + _VALUE,
    re.IGNORECASE,
)
# ``u: jdoe p: <value>``, ``user=jdoe pw=<value>``: labels of a user and a password
_LABELS = re.compile(
    r"(?<![\w-])(?:u|usr|user|username|login|benutzer|usuario)\s*[:=]\s*[\w.@\\-]+[\s,;/|]+"
    r"(?:p|pw|pwd|pass|passwd|password)\s*[:=]\s*" + _VALUE,
    re.IGNORECASE,
)
# Where the user alone is the evidence, the value must look like a password (shape 2+):
# a default account glued to its password (``admin/<value>``), and an e-mail address
# followed by its password (combo lists ``mail:password``, ``uses <mail> with <value>``).
_SHAPED_PAIRS = (
    re.compile(
        r"(?<![\w/.-])(?:admin|administrator|root|sa|postgres|guest|ubuntu|oracle|elastic|"
        r"sysadmin|superuser|operator)/(?P<value>[^\s/()\[\]{}'\"<>,;]+)(?![\w/])",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?:[ \t]*[:|;,][ \t]*|[ \t]+(?:with|and|/|"
        r"pass(?:word)?:?|pw:?)[ \t]+)(?P<value>[^\s,;'\"()\[\]{}<>=/]+)"
    ),
)
# ``key: value`` or ``key=value``, quoted or not, maybe with a trailing comma (JSON)
_LINE = re.compile(
    r"^\s*(?P<q>['\"]?)(?P<key>[\w.$-]+)(?P=q)\s*(?P<sep>[:=])\s*['\"]?(?P<value>[^\s#;,'\"()]+)"
    r"['\"]?,?\s*$"
)
# A key id right before its secret, as access-key pairs are given by position (``mc alias set
# NAME URL <id> <secret>``, ``twilio('<sid>', '<token>')``): upper-case letters and digits
# with a letter past F (not a hex digest), or two letters and 32 hex digits.
_KEY_ID = re.compile(
    r"(?<![\w/+=-])['\"]?(?P<id>(?=[A-Z0-9]*[G-Z])(?=[A-Z]*[0-9])[A-Z0-9]{16,32}|[A-Z]{2}[0-9a-f]{32})"
    r"['\"]?(?:[ \t]*,[ \t]*|[ \t]+)['\"]?(?P<value>[A-Za-z0-9/+_-]{30,}={0,2})(?![\w/+=-])"
)
# A credential file's two lines: a user name alone, then a password alone
_LONE_USER = re.compile(r"^\s*(?P<user>[A-Za-z][\w.@\\-]{1,63})\s*$")
_LONE_VALUE = re.compile(r"^\s*(?P<value>[^\s#;]\S{5,127})\s*$")
# What may stand above a file's content: a comment, a heading, a banner or a command
_HEADING = re.compile(r"^(?:#|//|;|-{2,}|={2,}|\$ |>|\*\*).*|.*[:-]{2,}$|.*:$")
_UPPER_HEX = re.compile(r"^[0-9A-F]+$")
_DIGEST = re.compile(r"^(?:sha\d*|md5|blake\w*)[-:_]", re.IGNORECASE)  # sha256-<base64>
_USER_WORDS = frozenset({"user", "username", "login", "benutzer", "usuario"})
# Fields beside a user name that are not its password.
_OTHER_FIELDS = frozenset(
    {"host", "hostname", "server", "port", "database", "db", "schema", "role", "email", "mail"}
    | {"domain", "realm", "tenant", "region", "group", "home", "shell", "gid", "version"}
    | {"dbname", "table", "proto", "protocol", "team", "org", "project", "branch", "tag"}
)


def pair_findings(lines: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """``(line, start, end)`` of each password given after its user (line 1 is ``lines[0]``)."""
    for number, line in enumerate(lines, 1):
        for pattern in (_PROSE, _OPTIONS, _LABELS):
            for match in pattern.finditer(line):
                value = match.group("value").rstrip(".!?:")
                if _is_value(value):
                    yield number, match.start("value"), match.start("value") + len(value)
        for pattern in _SHAPED_PAIRS:
            for match in pattern.finditer(line) if "/" in line or "@" in line else ():
                value = match.group("value").rstrip(".?:")
                if shape_score(value) >= 2:
                    yield number, match.start("value"), match.start("value") + len(value)
        for match in _KEY_ID.finditer(line):
            value = match.group("value")
            digest = _UPPER_HEX.match(value) or _DIGEST.match(value)
            if shape_score(value) == RANDOM and not digest:
                yield number, *match.span("value")
        if number < len(lines):
            yield from _line_pair(number, line, lines[number])
    yield from _lone_pairs(lines)


def _lone_pairs(lines: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """A block of two lines, a user name then a password alone (OpenVPN's ``auth-user-pass``
    file, ``--passwordfile`` and ``.my.secrets`` files): the block stands alone, after the
    start, a blank line, a comment or a heading, and before the end or a blank line."""
    for index in range(len(lines) - 1):
        user, value = _LONE_USER.match(lines[index]), _LONE_VALUE.match(lines[index + 1])
        if user is None or value is None or shape_score(user["user"]) >= _PAIR:
            continue
        above = lines[index - 1].strip() if index else ""
        below = lines[index + 2].strip() if index + 2 < len(lines) else ""
        if (above and not _HEADING.match(above)) or below:
            continue
        if shape_score(value["value"]) >= _PAIR:
            yield index + 2, *value.span("value")


def _line_pair(number: int, line: str, following: str) -> Iterator[tuple[int, int, int]]:
    first, second = _LINE.match(line), _LINE.match(following)
    if first is None or second is None or first["sep"] != second["sep"]:
        return
    if not _USER_WORDS.intersection(identifier_words(first["key"])) or _is_value(first["value"]):
        return
    if _OTHER_FIELDS.intersection(identifier_words(second["key"])):
        return
    start = second.start("value")
    if not keyed_as_not_secret(following, start) and _is_value(second["value"]):
        yield number + 1, start, second.end("value")


def _is_value(value: str) -> bool:
    return _PAIR + shape_score(value.strip("'\"")) >= THRESHOLD
