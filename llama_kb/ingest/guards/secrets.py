"""Secret detection on text: vendor formats, credential assignments, evidence, detect-secrets.

:class:`SecretScanner` combines eight detectors and reports :class:`SecretFinding` objects
(line, type, character span) that never carry the secret itself. Escaped quotes (JSON logged
inside a string) are undone first, and offsets mapped back:

* :data:`PATTERNS`, precise expressions for token and key-file formats (AWS, GitHub, OpenAI
  and Anthropic, Google, Stripe, npm, PyPI, Docker, Vault, DigitalOcean, Shopify, Azure,
  SendGrid, Telegram, Discord webhooks, Firebase, age, Nostr, PuTTY, OpenVPN, base64 PEM
  and DER private keys and Java key stores, checksum-verified Bitcoin keys and Stellar seeds),
  bearer, basic and other ``Authorization`` credentials, credentials, tokens and API keys in
  URLs, session cookies;
* :mod:`~llama_kb.ingest.guards._assignments`: a credential key (``DB_PASSWORD``,
  ``accessToken``, ``api_key``, ``requirepass``) bound to a secret-looking value in any
  syntax (``.env``, shell ``export`` / ``set -x``, YAML, TOML, JSON, INI, XML attributes and
  elements, properties, Terraform, connection and query strings, directive lines, Dockerfile
  ``ENV``, systemd ``Environment=``, ``env["KEY"] = ...``, ``define('KEY', ...)``), and,
  through :mod:`~llama_kb.ingest.guards._unkeyed`, values no key names: password options of
  common command-line tools (``curl -u``, ``mysql -p``, ``docker login -p``, ``redis-cli
  -a``, ``ldapsearch -w``), SQL ``IDENTIFIED BY``, ``.pgpass`` and ``sasl_passwd`` lines,
  ``NetworkCredential(...)`` and prose (``the password is ...``), all reported as
  ``credential_assignment``;
* :mod:`~llama_kb.ingest.guards._context`, general evidence rather than listed forms: any
  credential word (``pass``, ``pwd``, ``secret``, ``token``, ``key``, ``auth``, ``psk``,
  ``Passwort``, ``mot de passe``... in any case, compound or abbreviation), password option
  (``-P``, ``/p:``) or user pair (``-u user,password``, ``user:password@host``), followed
  within a short window by a value whose shape scores as a secret
  (:mod:`~llama_kb.ingest.guards._evidence`), and table columns whose header names a
  credential; reported as the kind of word (``password``, ``token``, ``key``...);
* :mod:`~llama_kb.ingest.guards._positional`: credentials given by position with no word
  before them (a password piped to ``sudo -S``, the argument after ``/user:``, login-call
  arguments, ``log in as <user> with <value>``, webhook paths, app passwords, seed
  phrases), reported as ``positional_credential``;
* :mod:`~llama_kb.ingest.guards._named`: a value beside the field that names it (Kubernetes
  ``env`` lists, ``{"name": ..., "value": ...}``, ``<XPassword><Value>``), reported as
  ``credential_assignment``;
* :mod:`~llama_kb.ingest.guards._tokens`: unkeyed tokens with a vendor-like shape (short
  lower-case prefix, separator, long random body; a quoted ``id:secret``), reported as
  ``prefixed_token``;
* the line-based plugins of ``detect-secrets`` (GitLab, Slack, Twilio, JWT, private keys,
  basic auth, ...; optionally the quoted high-entropy-string plugin), with its heuristic
  filters. Its keyword plugin is left out: it flags code such as ``secrets: Config``;
* :mod:`~llama_kb.ingest.guards._encoded`: a base64 token that decodes to text holding a
  secret once put in its place (Kubernetes ``Secret`` data), reported as ``encoded_secret``,
  and private keys written as lists of byte values (Solana's ``id.json``).

Where two find the same secret the earlier detector's name wins, so names stay stable;
detect-secrets types are snake-cased (``stripe_access_key``). Placeholders, references
(``${X}``, ``{{ x }}``, ``op://...``, ARNs), masks, documentation values (``1234abcd...``),
hashes and stored password hashes, addresses and fingerprints in hex, public keys, UUIDs
and ``data:`` URIs are not reported, nor any value the text calls hashed, public, a
fingerprint, encrypted or sealed, nor the value of a data-structure key (``cache-key``)
(:mod:`~llama_kb.ingest.guards._negative`, applied to every detector but the vendor formats).
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterator
from dataclasses import astuple, dataclass

from llama_kb.ingest.guards._assignments import assignment_spans, is_placeholder, is_word
from llama_kb.ingest.guards._context import context_findings
from llama_kb.ingest.guards._encoded import byte_key_spans, decoded_tokens, unescaped
from llama_kb.ingest.guards._evidence import shape_score
from llama_kb.ingest.guards._languages import STEMS_PATTERN
from llama_kb.ingest.guards._named import named_value_findings
from llama_kb.ingest.guards._negative import negated
from llama_kb.ingest.guards._pairs import pair_findings
from llama_kb.ingest.guards._positional import positional_spans, recovery_list_findings
from llama_kb.ingest.guards._tokens import vendor_token_spans
from llama_kb.ingest.guards._values import (
    UUID,
    is_base58check,
    is_known_example,
    is_public,
    is_stellar_seed,
)
from llama_kb.ingest.guards._words import SESSION_NAME, qualified_before

__all__ = ["CREDENTIAL_WORDS", "PATTERNS", "SecretFinding", "SecretScanner", "SensitivePattern"]

CREDENTIAL_WORDS = (
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
    _p("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
    # A bearer token has a digit or is long, which keeps "bearer authentication" out.
    _p(
        "bearer_token",
        r"\bbearer\s+(?P<value>(?=[A-Za-z0-9._~+/-]*\d|[A-Za-z0-9._~+/-]{20})"
        r"[A-Za-z0-9._~+/-]{8,}=*)",
        re.IGNORECASE,
    ),
    _p("basic_auth", r"\bbasic\s+(?P<value>[A-Za-z0-9+/]{16,}={0,2})", re.IGNORECASE),
    _p("credentials_in_url", r"\b[a-z][a-z0-9+.-]*://[^\s/:@'\"]*:(?P<value>[^\s/@'\"]+)@[^\s/]"),
    # A token as the whole user part of a URL (``https://<token>@dev.azure.com/...``); hex
    # there is a public key (a Sentry DSN)
    _p(
        "credentials_in_url",
        r"\b[a-z][a-z0-9+.-]*://(?![0-9a-fA-F]+@)(?P<value>[\w~.-]{20,})@[\w-]+\.[\w.-]",
    ),
    _p("netrc_password", r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<value>\S+)"),
    # Vendor token prefixes (the formats the providers document).
    _p("stripe_access_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{24,}"),
    _p("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _p("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    _p("docker_token", r"\bdckr_pat_[A-Za-z0-9_-]{27,}"),
    _p("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    # Vault service and batch tokens; before Vault 1.10, ``s.`` and 24 random characters
    _p("vault_token", r"\bhv[sb]\.[A-Za-z0-9_-]{24,}|(?<![\w.$/-])s\.[A-Za-z0-9]{24}(?![\w.-])"),
    _p("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    _p("linear_api_key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    _p("notion_token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b"),
    _p("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}\b"),
    _p("google_oauth_token", r"\bya29\.[A-Za-z0-9_-]{20,}"),
    _p("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9]{32,}"),
    _p("mailgun_key", r"\bkey-[a-f0-9]{32}\b"),
    _p("new_relic_key", r"\bNRAK-[A-Z0-9]{27}\b"),
    _p("atlassian_token", r"\b(?:ATATT3[A-Za-z0-9_=-]{150,}|ATBB[A-Za-z0-9]{32})"),
    _p("square_token", r"\bsq0(?:atp|csp|idp)-[\w-]{22,43}\b"),
    _p("facebook_access_token", r"\bEAA[A-Za-z0-9]{90,}"),
    _p("postman_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    _p("databricks_token", r"\bdapi[a-f0-9]{32}\b"),
    _p("grafana_token", r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"),
    _p("figma_token", r"\bfigd_[A-Za-z0-9_-]{40}\b"),
    _p("rubygems_key", r"\brubygems_[a-f0-9]{48}\b"),
    _p("terraform_cloud_token", r"\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,}"),
    _p("azure_client_secret", r"(?<![\w~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])"),
    _p("azure_sas_token", r"[?&]sv=\d{4}-\d\d-\d\d&\S*?\bsig=(?P<value>[A-Za-z0-9%+/]{30,})"),
    _p("sendgrid_api_key", r"\bSG\.[\w-]{22}\.[\w-]{43}\b"),
    _p("telegram_bot_token", r"\b\d{8,10}:AA[\w-]{33}\b"),
    _p("discord_webhook", r"\bdiscord(?:app)?\.com/api/webhooks/\d+/(?P<value>[\w-]{60,})"),
    _p("firebase_server_key", r"\bAAAA[\w-]{7}:APA91b[\w-]{130,}"),
    _p("age_secret_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    _p("nostr_secret_key", r"\bnsec1[02-9ac-hj-np-z]{58}\b"),
    # Java key stores in base64: JKS (magic FEEDFEED) and JCEKS (CECECECE), version 2
    _p("private_key", r"(?<![A-Za-z0-9+/])(?:/u3\+7QAAAA|zs7OzgAAAA)[A-Za-z0-9+/]{40,}"),
    # Bitcoin private keys in Base58Check: WIF (``5``, ``K``, ``L``; testnet ``9``, ``c``) and
    # BIP32 extended private keys; the checksum is verified (_CHECKSUMMED)
    _p(
        "crypto_private_key",
        r"(?<![1-9A-HJ-NP-Za-km-z])(?:[5KL9c][1-9A-HJ-NP-Za-km-z]{50,51}|[xtyz]prv"
        r"[1-9A-HJ-NP-Za-km-z]{107,108})(?![1-9A-HJ-NP-Za-km-z])",
    ),
    # Stellar secret seeds (``S`` and 55 base32 digits); the CRC16 is verified (_CHECKSUMMED)
    _p("stellar_secret_seed", r"(?<![A-Z2-7])S[A-Z2-7]{55}(?![A-Z2-7])"),
    _p("putty_private_key", r"^PuTTY-User-Key-File-\d+:"),
    _p("openvpn_static_key", r"-----BEGIN OpenVPN Static key V\d-----"),
    # A PEM private key in base64 (kubeconfig ``client-key-data``, Kubernetes secrets): the
    # encoding of "-----BEGIN" followed by one of "PRIVATE KEY" at each of its 3 alignments.
    _p(
        "private_key",
        r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{0,24}?(?:UFJJVkFURSBLRV|QUklWQVRFIEtFW|BSSVZBVEUgS0V)",
    ),
    # A private key in DER without its PEM armour, in base64: PKCS#1 RSA, PKCS#8, PKCS#12
    # keystores (version 3), SEC1 EC and PKCS#8 Ed25519 keys (public keys and certificates
    # start otherwise: ``MIIBIjAN...``, ``MIIDdzCC...``)
    _p(
        "private_key",
        r"\b(?:MII[A-Za-z0-9+/]{3}IBA(?:AKC|DANBgkqhkiG9w0BAQEFAASC|zCC)|MHcCAQEEI|"
        r"MC4CAQAwBQYDK2VwBCIEI)[A-Za-z0-9+/]{40,}=*",
    ),
    # Any Authorization scheme but Bearer and Basic (above): SSWS, ApiKey, Token, Api-Token...
    _p(
        "authorization_header",
        r"\bauthorization['\"]?\s*[:=]\s*['\"]?(?!bearer\b|basic\b)[A-Za-z][\w-]*\s+(?:token=)?"
        r"(?P<value>(?=[\w.~+/=-]*\d)[\w.~+/-]{16,}=*)",
        re.IGNORECASE,
    ),
    # A session cookie in a ``Cookie`` header or a ``curl -b`` option (copied requests)
    _p(
        "session_cookie",
        r"(?:\bcookie['\"]?\s*[:=]|(?<!\S)(?:-b|--cookie))\s*['\"]?(?:[^\n'\"]*?[;\s])?"
        rf"(?P<name>{SESSION_NAME})=(?P<value>[^;\s'\"]+)",
        re.IGNORECASE,
    ),
    # An API key passed in a URL's query string (OpenWeather ``appid``, Google ``key``).
    _p("api_key_in_url", r"[?&](?:appid|app_?key|api_?key|key)=(?P<value>[\w-]{20,})(?![\w-])"),
)

_SRI = re.compile(r"sha(?:256|384|512)-")

# Lines without any of these cannot hold a secret any detector reports: skip them cheaply.
_CANDIDATE = re.compile(
    r"[A-Za-z0-9_+/=.-]{16,}|pass|pwd|pw\b|secret|token|key|auth|cred|://|bearer|curl|mysql|"
    r"mariadb|:(?:\d+|\*):|identified|login|-cli|ldap|rabbitmqctl|admin|root|user|\]:|\{(?:plain|clear)|"
    r"\s\"?\*\"?\s*$|" + STEMS_PATTERN,
    re.IGNORECASE,
)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# A random-looking value under one of these keys is a digest, a signature or an identifier.
_NOT_SECRET_KEY = re.compile(
    r"(?:sha\d*|hash|digest|checksum|etag|id|name|alphabet|sitekey|site_key|sig|signature)['\"]?"
    r"\s*[:=]\s*['\"]?$",
    re.IGNORECASE,
)
_ASSIGNMENT = "credential_assignment"
_POSITIONAL = "positional_credential"
_ENTROPY_TYPES = frozenset({"base64_high_entropy_string", "hex_high_entropy_string"})
# detect-secrets plugins left out: public IPs are not credentials, hex strings are hashes, and
# keyword assignments are found by ``_assignments`` (the plugin flags ``secrets: Config`` in code).
_DISABLED_PLUGINS = ("IPPublicDetector", "HexHighEntropyString", "KeywordDetector")
# Patterns reported only for a random value (user names and cookie values can be words)
_SHAPED = frozenset({"session_cookie", "vault_token"})
_CHECKSUMMED = frozenset({"crypto_private_key", "stellar_secret_seed"})
# Authorization schemes: a UUID after them is a credential (Splunk, Heroku), not an identifier
_SCHEMES = frozenset({"authorization_header", "bearer_token"})
# A vendor prefix before words is a documentation value (a Slack prefix, then not-a-real-token)
_WORDS_BODY = re.compile(r"^[A-Za-z0-9]+[_.-](?:[a-z]+[_-]){2,}[a-z]+$")
# Patterns whose value may be a word (``redis://user:password@host`` in docs).
_WORD_VALUED = frozenset({"credentials_in_url", "netrc_password", "basic_auth_credentials"})
# Keyword rules of detect-secrets depend on the file type; config-file rules cover prose too.
_KEYWORD_FILENAME = "document.yaml"
_LOCK = threading.Lock()  # detect-secrets keeps its settings in a process-wide global


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text; it holds where and what kind, never the secret.

    Attributes:
        line: 1-based line number in the scanned text (0: the document title).
        type: Snake-case secret type, e.g. ``"aws_access_key_id"``, ``"secret_keyword"``.
        start: Offset of the secret in its line.
        end: Offset just past the secret in its line.
    """

    line: int
    type: str
    start: int
    end: int

    def describe(self) -> str:
        """``line N: <type>`` (``title: <type>`` for line 0) for reports."""
        return f"{f'line {self.line}' if self.line else 'title'}: {self.type}"


class SecretScanner:
    """Finds and redacts secrets in text.

    Args:
        entropy: Also report quoted high-entropy base64 strings (detect-secrets'
            ``Base64HighEntropyString`` at its default limit 4.5), except ``data:`` URIs.
    """

    def __init__(self, entropy: bool = True) -> None:
        self.entropy = entropy
        self._decode = True  # off for the text inside base64 (no decoding twice)

    def scan(self, text: str) -> list[SecretFinding]:
        """Every secret in ``text``, ordered by line and position."""
        if "\\" not in text:
            return self._scan(text.split("\n"))
        escaped = [unescaped(line) for line in text.split("\n")]
        found = self._scan([line for line, _ in escaped])
        return [  # offsets back into the escaped lines
            SecretFinding(f.line, f.type, *(escaped[f.line - 1][1][i] for i in (f.start, f.end)))
            for f in found
        ]

    def _scan(self, lines: list[str]) -> list[SecretFinding]:
        candidates = [(n, line) for n, line in enumerate(lines, 1) if _CANDIDATE.search(line)]
        found: list[SecretFinding] = []
        # Precise detectors go first: a later finding overlapping one kept is dropped
        for n, line in candidates:
            _keep_disjoint(found, _pattern_findings(n, line))
            spans = assignment_spans(line)
            keyed = (SecretFinding(n, _ASSIGNMENT, s, e) for s, e in spans)
            _keep_disjoint(found, _affirmed(lines, keyed))
        evidence = (SecretFinding(*astuple(f)) for f in context_findings(lines))
        _keep_disjoint(found, _affirmed(lines, evidence))
        for n, line in enumerate(lines, 1):
            spans = positional_spans(line)
            _keep_disjoint(found, (SecretFinding(n, _POSITIONAL, s, e) for s, e in spans))
            if ("[" in line or "{" in line) and "," in line:  # a list of byte values
                before = lines[n - 2] if n > 1 else ""
                keys = byte_key_spans(line, before)
                _keep_disjoint(found, (SecretFinding(n, "private_key", s, e) for s, e in keys))
        codes = recovery_list_findings(lines)
        _keep_disjoint(found, (SecretFinding(n, _POSITIONAL, s, e) for n, s, e in codes))
        paired = (SecretFinding(n, _POSITIONAL, s, e) for n, s, e in pair_findings(lines))
        _keep_disjoint(found, _affirmed(lines, paired))
        named = (SecretFinding(n, _ASSIGNMENT, s, e) for n, s, e in named_value_findings(lines))
        _keep_disjoint(found, _affirmed(lines, named))
        for n, line in candidates:
            tokens = vendor_token_spans(line)
            prefixed = (SecretFinding(n, "prefixed_token", s, e) for s, e in tokens)
            _keep_disjoint(found, _affirmed(lines, prefixed))
        if candidates:
            _keep_disjoint(found, _affirmed(lines, self._plugin_findings(candidates)))
        if self._decode:
            _keep_disjoint(found, _affirmed(lines, _encoded_findings(candidates)))
        return sorted(found, key=lambda f: (f.line, f.start, f.type))

    def types(self, text: str) -> list[str]:
        """Secret types in ``text``, sorted, without duplicates."""
        return sorted({f.type for f in self.scan(text)})

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED:<type>]``."""
        findings = self.scan(text)
        if not findings:
            return text
        lines = text.split("\n")
        for finding in sorted(findings, key=lambda f: (f.line, -f.start)):
            line = lines[finding.line - 1]
            if finding.end > len(line):
                continue
            lines[finding.line - 1] = (
                line[: finding.start] + f"[REDACTED:{finding.type}]" + line[finding.end :]
            )
        return "\n".join(lines)

    def _plugin_findings(self, lines: list[tuple[int, str]]) -> Iterator[SecretFinding]:
        from detect_secrets.core.scan import _process_line_based_plugins

        from llama_kb.ingest.guards._library_filters import default_settings

        with _LOCK, default_settings() as settings:
            disabled = _DISABLED_PLUGINS + (() if self.entropy else ("Base64HighEntropyString",))
            settings.disable_plugins(*disabled)
            secrets = list(_process_line_based_plugins(lines=lines, filename=_KEYWORD_FILENAME))
        text_of = dict(lines)
        for secret in secrets:
            kind = re.sub(r"\W+", "_", secret.type.strip().lower())
            value = secret.secret_value or ""
            line = text_of.get(secret.line_number, "")
            start = line.find(value) if value else -1
            if (
                is_placeholder(value)
                or is_public(value)
                or (kind in _ENTROPY_TYPES and _harmless_blob(value, line, start))
                or (kind in _WORD_VALUED and is_word(value))
            ):
                continue
            if start < 0:  # a multi-part secret (basic auth): redact the whole line
                start, end = 0, len(line)
            else:  # to the end of the token: GitLab's plugin reports the prefix alone
                end = start + len(value)
                while end < len(line) and (line[end].isalnum() or line[end] in "_-"):
                    end += 1
                if is_placeholder(line[start:end]) or is_known_example(line[start:end]):
                    continue  # ghp_xxxx...
            yield SecretFinding(secret.line_number, kind, start, end)


def _encoded_findings(candidates: list[tuple[int, str]]) -> Iterator[SecretFinding]:
    """Base64 tokens whose decoded text holds a secret, judged in place of the token."""
    inner = SecretScanner(entropy=False)
    inner._decode = False
    for number, line in candidates:
        for start, end, text in decoded_tokens(line):
            found = inner.scan(line[:start] + text + line[end:])
            if any(f.start < start + len(text) and start < f.end for f in found):
                yield SecretFinding(number, "encoded_secret", start, end)


def _pattern_findings(number: int, line: str) -> Iterator[SecretFinding]:
    for pattern in PATTERNS:
        for match in pattern.regex.finditer(line):
            groups = match.groupdict()
            value = groups.get("value") or groups.get("bare") or match.group(0)
            scheme_uuid = pattern.name in _SCHEMES and bool(UUID.match(value))
            if (is_placeholder(value) and not scheme_uuid) or _WORDS_BODY.match(value):
                continue
            if pattern.name in _WORD_VALUED and is_word(value):
                continue
            if pattern.name in _CHECKSUMMED and not _checksum_holds(pattern.name, value):
                continue
            if pattern.name == "basic_auth" and _example_basic(value):
                continue
            if is_known_example(match.group(0)) or (
                pattern.name in _SHAPED and shape_score(value) < 2
            ):
                continue
            yield SecretFinding(number, pattern.name, match.start(), match.end())


def _checksum_holds(name: str, value: str) -> bool:
    """Whether a Stellar seed's CRC16 or a Bitcoin key's Base58Check checksum holds."""
    return is_stellar_seed(value) if name == "stellar_secret_seed" else is_base58check(value)


def _example_basic(value: str) -> bool:
    """Basic credentials whose password is a placeholder (``username:password`` encoded)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return False
    _, colon, password = decoded.partition(":")
    return bool(colon) and is_placeholder(password)


def _affirmed(lines: list[str], findings: Iterator[SecretFinding]) -> Iterator[SecretFinding]:
    """Findings the text does not call hashed, public or sealed (:mod:`._negative`)."""
    return (f for f in findings if not negated(lines, f.line, f.start, f.end))


def _keep_disjoint(kept: list[SecretFinding], new: Iterator[SecretFinding]) -> None:
    for finding in new:
        if not any(
            k.line == finding.line and k.start < finding.end and finding.start < k.end for k in kept
        ):
            kept.append(finding)


def _harmless_blob(value: str, line: str, start: int) -> bool:
    """Hashes, integrity digests, inline images and values whose shape says they are not
    secrets (base64 of plain text, paths, names) look random but are not secrets."""
    return (
        bool(_HEX.match(value))
        or "base64," in line
        or len(value) > 200
        or shape_score(value) == 0
        or bool(_SRI.match(value) or _SRI.search(line[max(0, start - 7) : max(0, start)]))
        or bool(_NOT_SECRET_KEY.search(line[: max(0, start)]))
        or qualified_before(line, max(0, start))  # public key ...
        or qualified_before(value[: value.find("-") + 1], value.find("-") + 1)  # nonce-...
    )
