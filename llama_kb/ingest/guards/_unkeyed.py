"""Secrets with no credential key before them: command lines, SQL, directives, calls, prose.

Each rule names the one place a syntax puts a password, so the value is reported when it
looks like a secret (:func:`~._values.looks_secret`):

* password options of common command-line tools (``docker login -p``, ``sshpass -p``,
  ``redis-cli -a``, ``ldapsearch -w``, ``mysql -p'...'``, ``curl -u user:password``,
  ``rabbitmqctl add_user user password``);
* SQL ``IDENTIFIED BY '...'`` and ``[WITH] [LOGIN] PASSWORD '...'``;
* fixed-field files: ``.pgpass`` lines, pppd's ``chap-secrets`` and Postfix ``sasl_passwd``
  maps; settings named
  after a registry's host holding ``user:password`` (Bundler's ``BUNDLE_<HOST>``);
* calls whose argument is a password by definition (``NetworkCredential(user, password)``,
  ``ConvertTo-SecureString "..."``);
* prose: ``the admin password is ...``, ``password is: ...``, ``admin / <password>``, and
  the same with the verb of four more languages (``le mot de passe du serveur est ...``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_kb.ingest.guards._languages import STEMS_PATTERN
from llama_kb.ingest.guards._values import is_placeholder, looks_secret

__all__ = ["unkeyed_spans"]

# A quoted or bare command-line argument that is not another option.
_ARG = r"(?P<value>'[^']*'|\"[^\"]*\"|(?!-)[^\s'\"`;|&<>()]+)"
# Tools and the short option that takes their password as the next argument.
_PASSWORD_OPTIONS = (
    (r"(?:docker|podman|buildah|skopeo|nerdctl)\s+login", "p"),
    (r"sshpass", "p"),
    (r"redis-cli", "a"),
    (r"ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)", "w"),
    (r"ssh-keygen", "[NP]"),  # the new and the old passphrase
    (r"openssl\s+(?:enc|[a-z]+-\d+-[a-z]+|des\S*|bf\S*)", "[kK]"),  # a pass phrase, a raw key
)
_CLI: tuple[re.Pattern[str], ...] = (
    *(
        re.compile(rf"\b{tool}\b[^\n|;&]*?\s-{flag}[ \t]+{_ARG}")
        for tool, flag in _PASSWORD_OPTIONS
    ),
    re.compile(r"\bcurl\b.*?\s(?:-u|--user)[ \t]*['\"]?[^\s:'\"]+:(?P<value>[^\s'\"@`]+)(?!\S*@)"),
    # mysql -u root -p'secret' (the password is attached to -p; a separate word is the database)
    re.compile(
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b.*?\s-p(?P<value>'[^']*'|\"[^\"]*\"|\S+)"
    ),
    # OpenSSL's pass phrase arguments: ``-passin pass:<value>``, ``-passout pass:<value>``
    re.compile(r"(?<!\S)-pass(?:in|out)?\s+['\"]?pass:(?P<value>[^\s'\"]+)"),
    re.compile(rf"\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+{_ARG}"),
    # Redis ACL rules (``ACL SETUSER`` and ``users.acl`` lines): ``>password`` adds one
    re.compile(r"^\s*(?:ACL\s+SETUSER|user)\s+\S+\s(?:[^\n>]*\s)?>(?P<value>\S+)", re.I),
)
_SQL = re.compile(
    r"\b(?:IDENTIFIED\s+BY|(?:WITH\s+|LOGIN\s+|ENCRYPTED\s+)+PASSWORD)\s+"
    r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s;'\"]+)",
    re.IGNORECASE,
)
# .pgpass: hostname:port:database:username:password, exactly five fields (a ":" inside one
# is escaped), so colon-separated fingerprints are not lines of it
_PGPASS = re.compile(r"^\s*[^\s:#]+:(?:\d+|\*):[^\s:]+:[^\s:]+:(?P<value>(?:[^\s:\\]|\\.)+)\s*$")
# pppd's chap-secrets and pap-secrets: "client server secret addresses", the last an address,
# a range or ``*`` (any)
_PPP_SECRETS = re.compile(
    r"^\s*(?P<q>\"?)[\w.@\\-]+(?P=q)\s+(?:\"?\*\"?|[\w.-]+)\s+(?P<value>\"[^\"\s]+\"|[^\s#\"]+)"
    r"\s+(?:\"?\*\"?|\"?\d{1,3}(?:\.\d{1,3}){3}(?:/\d+)?\"?|-)\s*$"
)
# Postfix sasl_passwd: "[relay]:port user:password"; relay passwords are often letters only
# (a relay names a host; a URL after a reference mark ``[1] https://...`` is not a pair)
_SASL = re.compile(
    r"^\s*\[(?=[^\]]*[A-Za-z])[\w.-]+\](?::\d+)?\s+[^\s:]+:(?!//)(?P<value>\S{8,})\s*$"
)
# A password stored in plain text under a scheme that says so (Dovecot ``{PLAIN}``, LDAP and
# RADIUS ``{CLEARTEXT}``)
_PLAIN_SCHEME = re.compile(
    r"\{(?:PLAIN|CLEAR|CLEARTEXT|PLAINTEXT|PLAIN-TRUNC)\}(?P<value>[^\s:]+)", re.I
)
# A setting named after a host (Bundler's ``BUNDLE_GEMS__ACME__COM``: ``.`` written ``__``)
# holding ``user:password``: package managers keep registry credentials this way
_HOST_KEYED = re.compile(
    r"^\s*(?:export\s+)?[A-Z][A-Z0-9_]*__[A-Z]{2,6}\s*[=:]\s*['\"]?[^\s:'\"]+:"
    r"(?P<value>[^\s'\"]{8,})"
)
_CALLS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\b(?:NetworkCredential|PasswordAuthentication|UsernamePasswordCredentials|"
        r"PasswordCredential)\s*\(\s*[^,()]+,\s*(?P<value>\"[^\"]*\"|'[^']*')"
    ),
    re.compile(r"\bConvertTo-SecureString\s+(?:-String\s+)?(?P<value>\"[^\"]*\"|'[^']*')", re.I),
)
# "the staging admin password is <value>": a credential noun, a few words, "is", the value.
_PROSE: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\b(?:password|passwd|passphrase|pwd|pw|pass|secret|token|key|api[ _-]?key|"
        r"access[ _-]?key|"
        r"mot de passe|passwort|kennwort|contrase[ñn]a|m[ậa]t\s+kh[ẩa]u|kata\s+(?:sandi|laluan)|"
        + STEMS_PATTERN
        + r")"
        r"\b[^.\n:=]{0,40}?\s(?:is|was|est|ist|lautet|es|era|é|è|är|er|on|je|jest|это|είναι|là|"
        r"adalah|ialah)\s*:?\s+"
        r"(?P<value>\S+)",
        re.IGNORECASE,
    ),
    # "log in with admin / <password>" (a digit: "root / KB_FILE" is a path in code)
    re.compile(
        r"\b(?:admin|root|user|username|login)\s+/\s+(?P<value>(?=[^\s\d]*\d)[^\s/()\[\]{}'\"]+)"
        r"(?!\S)",
        re.IGNORECASE,
    ),
)
_TRAILING = ".,;:!?)\"'`"


def unkeyed_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` holding a secret-looking value that no key names."""
    for pattern in (*_CLI, _SQL, _PGPASS, _PPP_SECRETS, _PLAIN_SCHEME, *_CALLS):
        for match in pattern.finditer(line):
            if looks_secret(match.group("value")):
                yield match.start("value"), match.end("value")
    for match in _HOST_KEYED.finditer(line) if "__" in line else ():
        value = match.group("value")
        mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        if (mixed and not is_placeholder(value)) or looks_secret(value):
            yield match.span("value")
    for match in _SASL.finditer(line):
        if not is_placeholder(match.group("value")):
            yield match.start("value"), match.end("value")
    for pattern in _PROSE:
        for match in pattern.finditer(line):
            value = match.group("value").rstrip(_TRAILING)
            if looks_secret(value):
                yield match.start("value"), match.start("value") + len(value)
