"""Secrets found by evidence: a credential word, then a secret-shaped value soon after it.

No list of syntaxes: any word that names a credential (``password``, ``Passwort``,
``contraseña``, ``pwd``, ``rootpw``, ``wpa_passphrase``, ``X-Auth``, ``PRIVATE-TOKEN``,
``kMapsKey``, ``-P``), in any case, compound or abbreviation, followed within a short window
by a value after ``=``, ``:``, ``=>``, a quote, a flag, an argument separator, a few words of
prose or a line break. The report is explainable: the kind of word and the value's shape
(:func:`~._evidence.shape_score`) add up to a score, and a pair is a secret when

    strength of the word (strong 2, weak 1) + shape of the value (0-3) - distance >= 3

``distance`` is 1 when more than two filler tokens (words, short tokens) stand between.
Words qualified as not secret (``password_hash``, ``public key``, ``token_ttl``,
``secretKeyRef``, ``key fingerprint``) give no context, and encrypted values (``ENC[...]``)
stop the search. Network gear's clear-text type (``key 0 <value>``) makes a word strong, and
a word naming a credential type with no value (``"type": "random_password",``) takes a
random member of the next line. Three more kinds of context: a user option or
``user:password@host`` pair (``-u user,password``, ``-U 'dom\\user%password'``,
``app:password@tcp(db)``), the column of a table or CSV file whose header names a
credential, and a credential word at the end of a line, whose value is the next line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from llama_kb.ingest.guards._evidence import (
    RANDOM,
    is_encrypted,
    is_word_and_number,
    shape_score,
)
from llama_kb.ingest.guards._languages import PHRASES
from llama_kb.ingest.guards._values import UUID
from llama_kb.ingest.guards._words import (
    KEY_BEFORE,
    NOT_SECRET,
    STRONG,
    WEAK,
    has_hint,
    identifier_words,
    keyed_as_not_secret,
    qualified_before,
    word_strength,
)

__all__ = ["THRESHOLD", "ContextFinding", "context_findings"]

THRESHOLD = 3
_WINDOW_CHARS = 72
_WINDOW_TOKENS = 8

_BEFORE_TOKENS = 3
_COMMENT = re.compile(r"\s#\s|\s//\s")  # a comment ends the window: ``pass  # 0**n``
_IDENT = re.compile(r"[^\W\d][\w.-]*")
# A long random run of base64 (armoured data): the letters inside it are not words (``vPw5G``).
_RANDOM_RUN = re.compile(r"[A-Za-z0-9+/]{24,}")
_DATA_LENGTH = 200
# Scripts written without spaces: their characters next to a value are not part of it.
_CJK = "\u3000-\u9fff\uac00-\ud7af\uff00-\uffef"
_CJK_EDGES = re.compile(f"^[{_CJK}]+|[{_CJK}]+$")
# A quoted string without spaces, or a run between separators (``&`` only before ``key=``).
_TOKEN = re.compile(
    r"\"[^\"\s=:;,(){}\[\]<>]+=*\"|'[^'\s=:;,(){}\[\]<>]+=*'|`[^`\s=:;,(){}\[\]<>]+`|"
    r"(?:[^\s'\"`,;()\[\]{}<>|&=:]|&(?![\w.-]+=))+(?:=+(?=[\s)\]}>,;]|$))?"
)
_QUOTES = "'\"`"
_TOKEN_REST = re.compile(r"[^\s'\"`,;()\[\]{}<>|]*")
# A sentence with no value in it: words, then maybe a full stop, colon or question mark
_SENTENCE = re.compile(r"[\w \t,'’\[\]-]*[.:?!]?")
# Labels of a value that identifies a request or a record, not a credential
_NOT_ANSWER = frozenset(
    {"reference", "request", "order", "ticket", "number", "trace", "correlation", "case"}
    | {"transaction", "invoice", "tracking", "build", "version", "commit", "date", "time"}
)
_LABEL_WORD = re.compile(r"[^\W\d]+")
_LIST_ITEM = re.compile(r"\s*(?:[-*]\s+)?")
_OPENS = frozenset(
    {"api", "auth", "access", "server", "account", "secret", "private", "personal", "service"}
    | {"master", "admin", "bot", "app", "integration", "license", "deploy", "bearer"}
)
# A chat line's time and speaker: ``[14:04] lea:``, ``<lea>``, ``lea:``
_SPEAKER = re.compile(r"\s*(?:\[[\d:. APMapm]{3,12}\]\s*)?(?:<[\w.-]{1,32}>|[\w.-]{1,32}:)\s+")
_KEY_AFTER = re.compile(r"['\"]?=(?!=)|['\"]:|(?<=['\"]):")  # key=, "key":, not a prose colon
_TRAILING = ".!?:#*"
# Symbols right after a digit end a password as people make them (a word, digits, ``!``,
# ``*``, ``=``): they belong to it unless the value is wrapped in emphasis (``**x1**``)
_PASSWORD_END = re.compile(r"\d[!#*=$%&@+_-]+$")
_LEADING = "*#"
# Network devices write a secret's type before it: 0 for clear text (``key 0 <value>``,
# ``password 0 <value>``); 5, 7 or 8 are hashed or obfuscated
_CLEAR_TYPE = re.compile(r"[ \t]+0[ \t]+(?=\S)")
# Quotation marks and the inverted marks of Spanish around a word (``¿Olvidaste``, ``«x»``)
_MARKS = "¿¡«»“”„‘’‹›"
# Options that take a password: ``-p secret``, ``-P 'secret'``, ``/p:secret``, ``-psecret``.
_FLAG = re.compile(r"(?<![\w-])(?:--?|/)[pP](?:[ \t]*[:=][ \t]*|[ \t]+)(?=[^\s-])")
# ``-psecret`` on a command line: the line starts with a command and has no ``=`` or ``(``
_ATTACHED = re.compile(
    r"^\s*[\w.-]+\s[^=()\n]*?(?<=\s)-p(?P<value>[^\s=:'\"(){}\[\],-][^\s'\"(){}\[\],]*)(?=\s|$)"
)
# ``-u user:password``, ``-U 'DOMAIN\\user%password'``, ``user:password@host``, ``u/p@db``.
_PAIRS = (  # (a substring the line must hold, the pattern)
    (
        "-",
        re.compile(
            r"(?<![\w-])(?:-u|-U|--user(?:name)?)[ \t=]+['\"]?[^\s'\"%:,]+[%:,]"
            r"(?P<value>[^\s'\"]+)"
        ),
    ),
    ("@", re.compile(r"(?<![\w/.:@-])[\w.-]+[:/](?P<value>[^\s/@:'\"]{6,})@[\w/(\[]")),
    # a line that is only ``name:password`` (rsync secrets, htpasswd-like files)
    # (a value with ``/`` is a path or an identifier: ``doi:10.1007/...``, ``arXiv:...``)
    (":", re.compile(r"^\s*(?P<name>[\w.@-]+):(?P<value>[^\s:/]{6,})\s*$")),
)
# A quoted value of an object member (``"result": "<value>"``, ``result = "<value>"``)
_MEMBER = re.compile(r"[^\W\d][\w.-]*['\"]?\s*[:=]\s*['\"](?P<value>[^'\"\s]{12,})['\"]")
_ARROW = re.compile(r"[-=]+")  # the start of ``->`` or ``=>`` (``>`` ends a token)
_HUMAN = frozenset({"password", "credential"})  # kinds of words naming what people choose
_Columns = tuple[str, int, dict[int, str]]  # delimiter, cells per row, credential columns


@dataclass(frozen=True)
class ContextFinding:
    """A value in a credential context: where it is and what the word named."""

    line: int
    type: str
    start: int
    end: int


def context_findings(lines: Sequence[str]) -> Iterator[ContextFinding]:
    """Values in a credential context, line by line (``lines[0]`` is line 1), each once."""
    return iter(dict.fromkeys(_contexts(lines)))


def _contexts(lines: Sequence[str]) -> Iterator[ContextFinding]:
    columns: _Columns | None = None
    for index, line in enumerate(lines):
        number = index + 1
        below = enumerate(lines[index + 1 : index + 4], number + 1)
        following = [(n, text) for n, text in below if text.strip()]
        if has_hint(line):
            yield from _word_contexts(number, line, following)
        yield from _flag_contexts(number, line)
        columns = _table_columns(line, columns)
        if columns:
            yield from _column_values(number, line, columns)


def _word_contexts(
    number: int, line: str, following: Sequence[tuple[int, str]]
) -> Iterator[ContextFinding]:
    data = [r.span() for r in _RANDOM_RUN.finditer(line) if _is_data(r.group())]
    idents = (
        m
        for m in _IDENT.finditer(line)
        if has_hint(m.group()) and not any(a <= m.start() < b for a, b in data)
    )
    contexts = [(m, *word_strength(m.group())) for m in idents]
    contexts += [(m, STRONG, kind) for phrase, kind in PHRASES for m in phrase.finditer(line)]
    for match, strength, kind in contexts:
        if not strength or qualified_before(line, match.start()) or _expanded(line, match):
            continue
        rest = _COMMENT.split(line[match.end() : match.end() + _WINDOW_CHARS], 1)[0]
        before = _value_before(line, match.start(), strength) if strength == STRONG else None
        if before:
            yield ContextFinding(number, kind, *before)
        if re.search(r"\w", rest):
            # ``access_token$production$...``: a ``$`` right after the word joins its value
            shift = match.end() + (rest[:1] == "$" and rest[1:2].isalpha())
            clear = _CLEAR_TYPE.match(rest)
            if clear:  # ``key 0 <value>``: network gear's type of a clear-text secret
                shift, strength = match.end() + clear.end(), STRONG
            window_end = match.end() + len(rest)
            # a UUID across ``:`` or ``=`` is a credential under a word saying what it opens
            # (``X-Server-Token``, ``api_token``); other tokens are often UUIDs for idempotency
            # or callbacks (``ClientToken``, ``LifecycleActionToken``)
            uuid_named = bool(_OPENS.intersection(identifier_words(match.group())))
            found = _value_after(
                line[shift:window_end], strength, uuid_named=uuid_named, human=kind in _HUMAN
            )
            if found:  # a value longer than the window ends where its token ends
                end = shift + found[1]
                tail = _TOKEN_REST.match(line, end) if end == window_end else None
                end += len(tail.group()) if tail else 0
                yield ContextFinding(number, kind, shift + found[0], end)
            elif _asks(line, match, strength) and following:
                said = identifier_words(rest)[:1]  # "password reset ...": about something else
                if not NOT_SECRET.intersection(said):
                    yield from _answer(kind, *following[0])
        else:  # the word ends its line: the value is the next line, or the one after a user
            # a weak word (``pass`` in code) looks only at the lines right under it
            adjacent = [(n, t) for i, (n, t) in enumerate(following) if n == number + 1 + i]
            nearby = following if strength == STRONG else adjacent
            below = list(_next_line_value(kind, strength, nearby))
            if not below and strength == STRONG and adjacent:
                below = list(_random_member(kind, *adjacent[0]))
            yield from below
            if not below and _asks(line, match, strength) and following:
                yield from _answer(kind, *following[0])


def _is_data(run: str) -> bool:
    """A random run of base64, or one too long for a credential (an inline image)."""
    return len(run) > _DATA_LENGTH or shape_score(run) == RANDOM


def _next_line_value(
    kind: str, strength: int, following: Sequence[tuple[int, str]]
) -> Iterator[ContextFinding]:
    """The value on the line after a credential word (maybe the next item of a list, as in
    ``args: [--token, <value>]`` written in YAML), or after a lone user name under it."""
    for number, text in following[:2]:
        item = _LIST_ITEM.match(text).end()  # type: ignore[union-attr]
        found = _value_after(text[item : item + _WINDOW_CHARS], strength, max_fillers=0)
        if found:
            yield ContextFinding(number, kind, item + found[0], item + found[1])
            return
        if not _IDENT.fullmatch(text.strip()):  # only a user name may stand between
            return


def _random_member(kind: str, number: int, text: str) -> Iterator[ContextFinding]:
    """A random value of an object on the line under a word naming a credential type
    (Terraform state: ``"type": "random_password",`` then ``{"result": "<value>"}``)."""
    for member in _MEMBER.finditer(text):
        value, start = member.group("value"), member.start("value")
        if shape_score(value) == RANDOM and not keyed_as_not_secret(text, start):
            yield ContextFinding(number, kind, start, member.end("value"))
            return


def _asks(line: str, word: re.Match[str], strength: int) -> bool:
    """Whether ``line`` is a sentence of three or more words (after a chat speaker) naming a
    credential with a word of its own and no value, or a question of two or more naming one
    with a weak word too (``db pass?``): its answer may follow on the next line. Code
    (``gcp: AuthGcp``) is no sentence."""
    speaker = _SPEAKER.match(line)
    sentence = line[speaker.end() if speaker else 0 :]
    words = len(sentence.split())
    question = sentence.rstrip().endswith("?") and words >= 2
    return (
        (question or (strength == STRONG and words >= 3))
        and word.group().isalpha()
        and bool(_SENTENCE.fullmatch(sentence.strip()))
    )


def _answer(kind: str, number: int, text: str) -> Iterator[ContextFinding]:
    """The value that answers a sentence naming a credential on the line before (a chat
    reply ``[14:04] lea: <value>``, a tool's ``New value: <value>``): the distance leaves
    the word weak, and only a label or a speaker may stand before the value."""
    speaker = _SPEAKER.match(text)
    offset = speaker.end() if speaker else 0
    found = _value_after(text[offset : offset + _WINDOW_CHARS], WEAK, max_fillers=2)
    # whole words label a value; a name (``svc_build``, a user before ``/``) does not
    label = [w.lower() for w in _LABEL_WORD.findall(text[: offset + found[0]])] if found else []
    if found and not NOT_SECRET.union(_NOT_ANSWER).intersection(label):
        yield ContextFinding(number, kind, offset + found[0], offset + found[1])


def _value_before(line: str, start: int, strength: int) -> tuple[int, int] | None:
    """``Use <value> as the password``: a value a few words before a strong word."""
    window = max(0, start - _WINDOW_CHARS // 2)
    tokens = [t for t in _TOKEN.finditer(line[window:start]) if t.start() or not window]
    tokens = tokens[-_BEFORE_TOKENS:]
    for token in reversed(tokens):
        if KEY_BEFORE.search(line, 0, window + token.start()):
            return None  # the value of another key (``"iv": "...", "auth_tag"``)
        value = _unwrapped(token.group())
        if value.endswith("="):  # a key right before the word names its value (``x=pg-auth``)
            return None
        if strength + shape_score(value) - 1 >= THRESHOLD:
            start = window + token.start() + token.group().index(value)
            return start, start + len(value)
    return None


def _value_after(
    rest: str,
    strength: int,
    max_fillers: int = _WINDOW_TOKENS,
    uuid_named: bool = True,
    human: bool = True,
) -> tuple[int, int] | None:
    """Span of the first value in ``rest`` scoring at least :data:`THRESHOLD`; ``human``:
    the word names what people choose (a password), so a word and a number counts."""
    if is_encrypted(rest.lstrip(" \t'\"`=:>-")):
        return None
    fillers = -1
    for token in _TOKEN.finditer(rest):
        arrow = _ARROW.fullmatch(token.group()) and rest[token.end() : token.end() + 1] == ">"
        fillers += not arrow or fillers < 0  # ``pw for jenkins -> <value>``: no filler
        if fillers > max_fillers:
            return None
        value = _unwrapped(token.group())
        adjacent = not fillers and not rest[: token.start()].strip(" \t-_")
        if (adjacent and value.lower() in NOT_SECRET) or is_encrypted(value):
            return None  # "key fingerprint", "password hash", "secret ENC[...]"
        if token.group().endswith("$") and rest[token.end() : token.end() + 1] == "{":
            return None  # the value is built from a variable: ``neo4j/${NEO4J_PASSWORD}``
        score = shape_score(value)
        if not human and is_word_and_number(value):
            score = 0  # tokens and keys are generated: ``token budget: Gemini15`` is a name
        bound = not fillers and not rest[: token.start()].strip(" \t-_:='\"")
        bound = adjacent or (bound and uuid_named)
        if bound and strength == STRONG and UUID.match(value):
            # "consul token <uuid>", "X-Server-Token: <uuid>": bound to a strong word, a UUID
            # is the credential
            score = RANDOM
        if strength + score - (fillers > 2) >= THRESHOLD:
            start = token.start() + token.group().index(value)
            return start, start + len(value)
        if _KEY_AFTER.match(rest, token.end()) and _IDENT.fullmatch(value):
            return None  # another key: what follows is its value (``&code_verifier=...``)
    return None


def _expanded(line: str, word: re.Match[str]) -> bool:
    """Whether ``word`` names a variable inside a shell or template expansion (``${X#p}``)."""
    opened = line.rfind("${", 0, word.start())
    return opened >= 0 and "}" not in line[opened : word.start()]


def _unwrapped(token: str) -> str:
    """The value in a token: no quotes, emphasis or closing punctuation; ``""`` for ``x...``.

    Inside quotes every character is the value's, a closing question mark too."""
    if token.rstrip(_QUOTES).endswith(("...", "…")):
        return ""
    if len(token) > 2 and token[0] in _QUOTES and token[-1] == token[0]:
        return token[1:-1]
    bare = _CJK_EDGES.sub("", token.strip(_QUOTES)).strip(_MARKS)
    value = bare.lstrip(_LEADING)
    closed = value.rstrip(".?:" if value == bare else ".?:*")
    return closed if _PASSWORD_END.search(closed) else value.rstrip(_TRAILING)


def _flag_contexts(number: int, line: str) -> Iterator[ContextFinding]:
    for flag in _FLAG.finditer(line):
        found = _value_after(line[flag.end() : flag.end() + _WINDOW_CHARS], WEAK, 0)
        if found:
            yield ContextFinding(number, "password", flag.end() + found[0], flag.end() + found[1])
    for match in _ATTACHED.finditer(line) if "-p" in line else ():
        value = match.group("value").strip("'\"")
        if WEAK + shape_score(value) >= THRESHOLD:
            yield ContextFinding(number, "password", match.start("value"), match.end("value"))
    for needle, pattern in _PAIRS:
        for match in pattern.finditer(line) if needle in line else ():
            value = match.group("value").strip("'\"").rstrip(_TRAILING)
            name = match.groupdict().get("name") or ""
            if NOT_SECRET.intersection(identifier_words(name)):  # SHA256:<fingerprint>
                continue
            if WEAK + shape_score(value) >= THRESHOLD:
                start = match.start("value")
                yield ContextFinding(number, "password", start, start + len(value))


def _table_columns(line: str, columns: _Columns | None) -> _Columns | None:
    """The delimiter, width and credential columns of a header line, kept while rows follow.

    A header is a line of two or more names (``username,password,role``, a Markdown table
    head); a row has the header's delimiter and number of cells.
    """
    delimiter = next((d for d in "|\t,;" if d in line), "")
    same_delimiter = (
        delimiter in (columns[0], "" if columns[0] == " " else delimiter) if columns else False
    )
    if columns and same_delimiter and len(_cells(line, columns[0])) == columns[1]:
        return columns
    if not delimiter and line.lstrip().startswith("#") and "  " in line.strip():
        # a comment heading aligned columns: "# client  server  secret  IP"
        line, delimiter = line.lstrip()[1:], " "
    cells = [c.strip().strip("'\"") for c in _cells(line, delimiter)] if delimiter else []
    if len([c for c in cells if c]) < 2 or not all(not c or _IDENT.fullmatch(c) for c in cells):
        return None
    kinds = {}
    for i, cell in enumerate(cells):
        strength, kind = word_strength(cell) if cell else (0, "")
        if strength == STRONG:
            kinds[i] = kind
    return (delimiter, len(cells), kinds) if kinds else None


def _cells(line: str, delimiter: str) -> list[str]:
    """A row's cells; ``" "`` stands for runs of white space."""
    return line.split() if delimiter == " " else line.split(delimiter)


def _column_values(number: int, line: str, columns: _Columns) -> Iterator[ContextFinding]:
    delimiter, _, kinds = columns
    position = 0
    for i, cell in enumerate(_cells(line, delimiter)):
        value = _unwrapped(cell.strip())
        position = line.index(cell, position)
        if i in kinds and STRONG + shape_score(value) >= THRESHOLD:
            start = line.index(value, position)
            yield ContextFinding(number, kinds[i], start, start + len(value))
        position += len(cell)
