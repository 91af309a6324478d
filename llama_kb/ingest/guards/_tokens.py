"""Unkeyed tokens with a vendor-like shape: a short lower-case prefix, a separator, a random body.

Most providers now issue tokens as ``<prefix>_<random>`` (``xai-``, ``pnu_``, ``bkua_``,
``dp.st.prd.``, ``sk.``, ``fm2_``, ``s.``), so the shape is evidence without any key before it
and without a list of prefixes. A quoted key id and secret joined by ``:`` is the same
evidence. The body must be random: upper case, lower case and digits mixed (or 32+ hex digits,
alone or inside it; or 40+ characters of one case and digits well mixed),
at least 28 characters (object ids such as Stripe's ``cus_`` and ``pi_`` are shorter) and high
entropy; kebab-case names, version strings and words are not. Prefixes that name a digest or a
one-time value (``sha512-``, ``nonce-``) and keys meant to be published (``pk_live_``,
``phc_``) are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_kb.ingest.guards._evidence import entropy, is_name
from llama_kb.ingest.guards._values import is_identifier, is_placeholder, is_public
from llama_kb.ingest.guards._words import keyed_as_not_secret

__all__ = ["vendor_token_spans"]

_SHAPE = re.compile(
    r"(?<![\w./+$%-])(?P<prefix>[a-z][a-z0-9]{0,9}(?:[._-][a-z0-9]{1,10}){0,3}|[A-Z][A-Z0-9]{1,7})[._-]"
    r"(?P<body>[A-Za-z0-9_+/-]{28,}={0,2})(?![\w+/=]|[.-]\w)"
)
# A quoted ``<key id>:<secret>`` (Ably's ``app.key:secret``, ``client_id:client_secret``)
_ID_SECRET = re.compile(
    r"(?<=['\"])(?P<prefix>[A-Za-z][\w.-]{2,39}):(?P<body>[A-Za-z0-9_+/-]{24,}={0,2})(?=['\"])"
)
_HEX = re.compile(r"^[0-9a-f]{32,}$")
_HEX_RUN = re.compile(r"[0-9a-f]{32,}")
_NOT_SECRET_PREFIX = re.compile(
    r"^(?:sha\d*|md5|blake\w*|h\d|hash|nonce|state|code|challenge|integrity|id|uuid|commit|"
    r"build|rev|etag|trace|span|req|request|session|img|image|file|asset|static|chunk|v\d*)$"
)


def vendor_token_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` holding a prefixed random token."""
    for match in _ID_SECRET.finditer(line) if ":" in line else ():
        first = re.split(r"[._-]", match.group("prefix"))[0].lower()
        body = match.group("body")
        if not _NOT_SECRET_PREFIX.match(first) and not is_identifier(body) and _random(body):
            yield match.span("body")
    for match in _SHAPE.finditer(line):
        prefix, body = match.group("prefix"), match.group("body").rstrip("=")
        first = re.split(r"[._-]", prefix)[0].lower()
        if _NOT_SECRET_PREFIX.match(first) or is_public(match.group()) or is_placeholder(body):
            continue
        if keyed_as_not_secret(line, match.start()):  # "KeyId": "mrk-..."
            continue
        if _random(body):
            yield match.start(), match.end()


def _random(body: str) -> bool:
    if is_name(body):  # test_BlockMatrix_2x2_inverse, kernel32.Wow64EnableWow64FsRedirection
        return False
    core = body.replace("-", "").replace("_", "")
    if _HEX.match(core.lower()) and core.lower() == core:
        return any(c.isalpha() for c in core) and any(c.isdigit() for c in core)
    run = _HEX_RUN.search(core)  # APP_USR-<digits>-<32 hex digits>-<digits>
    if run and any(c.isalpha() for c in run.group()) and any(c.isdigit() for c in run.group()):
        return True
    lower, upper = any(c.islower() for c in core), any(c.isupper() for c in core)
    digits = sum(c.isdigit() for c in core)
    if lower and upper and digits:
        return len(core) >= 28 and entropy(core[:200]) >= 4.0
    # one case and digits (base36): long, with digits and letters well mixed
    share = digits / len(core)
    return len(core) >= 40 and 0.15 <= share <= 0.85 and entropy(core[:200]) >= 4.2
