"""Evidence-based secret detection: credential words, value shapes, windows and token shapes."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards import SecretScanner
from llama_kb.ingest.guards._context import context_findings
from llama_kb.ingest.guards._evidence import RANDOM, shape_score
from llama_kb.ingest.guards._tokens import vendor_token_spans
from llama_kb.ingest.guards._words import word_strength

PASSWORD = "Quill42!vNa8"  # made up for these tests
TOKEN = "T7dXq2LmZ9pR4sKw8YbN3cVh6Jf1Ge5A"


@pytest.mark.parametrize(
    ("identifier", "strength"),
    [
        ("DB_PASSWORD", 2),
        ("wpa_passphrase", 2),
        ("rootpw", 2),
        ("Passwort", 2),
        ("X-Auth", 2),
        ("PRIVATE-TOKEN", 2),
        ("PrivateKey", 2),
        ("kMapsKey", 1),
        ("user_pass", 1),
        ("password_hash", 0),
        ("PublicKey", 0),
        ("token_ttl", 0),
        ("secretKeyRef", 0),
        ("NextToken", 0),
        ("OAuth", 0),
        ("bypass", 0),
        ("monkey", 0),
    ],
)
def test_credential_words_in_any_case_compound_or_abbreviation(
    identifier: str, strength: int
) -> None:
    assert word_strength(identifier)[0] == strength


@pytest.mark.parametrize(
    ("value", "score"),
    [
        (TOKEN, RANDOM),
        ("3f9a0c2e7b1d4e5f8a6b2c9d0e1f7a3b", RANDOM),  # 32 hex digits
        (PASSWORD, 2),
        ("Ab1!xyz", 1),
        ("hunter", 0),  # a word
        ("production", 0),
        ("AB12CD34EF56AB78", 0),  # 16 hex digits: a key id
        ("Ed25519PrivateKey", 0),  # a name in code
        ("caching_sha2_password", 0),
        ("neo4j.GraphDatabase.driver", 0),
        ("smtp.acme.io", 0),
        ("ops@acme.io", 0),
        ("/run/secrets/db", 0),
        ("${DB_PASSWORD}", 0),
        ("ENC[AES256_GCM,data:abc]", 0),
        ("2025-03-02T10:00:01", 0),
        ("[A-Za-z_]\\w*", 0),
        ("123e4567-e89b-42d3-a456-426614174000", 0),  # a UUID is an identifier
    ],
)
def test_value_shape(value: str, score: int) -> None:
    assert shape_score(value) == score


@pytest.mark.parametrize(
    "text",
    [
        f"Das WLAN-Passwort lautet {PASSWORD} (gilt bis Freitag).",
        f"Le mot de passe du serveur est {PASSWORD}.",
        f"la contraseña de la base es {PASSWORD}",
        f"[10:43] bob: user app, pw {PASSWORD}",
        f"Use {PASSWORD} as the password when asked.",
        f"ipmitool -H 10.0.0.9 -U ADMIN -P {PASSWORD} chassis status",
        f"xfreerdp /v:10.0.0.20 /u:admin /p:{PASSWORD}",
        f"lftp -u deploy,{PASSWORD} sftp://files.example.org",
        f'db, _ := sql.Open("mysql", "app:{PASSWORD}@tcp(db:3306)/shop")',
        f'#define MQTT_PASS "{PASSWORD}"',
        f'Sys.setenv(OPENAI_KEY = "{TOKEN}")',
        f'server.login("alerts@example.org", "{PASSWORD}")',
        f"DD_APP_KEY={TOKEN}",
        f"Credentials\nUser: svc\nPassword ->\n{PASSWORD}",
    ],
)
def test_a_credential_word_then_a_secret_shaped_value(text: str) -> None:
    findings = list(context_findings(text.split("\n")))
    assert findings, text
    line = text.split("\n")[findings[0].line - 1]
    assert PASSWORD in line[findings[0].start : findings[0].end] or TOKEN in line


@pytest.mark.parametrize(
    "text",
    [
        f"username,password,role\njdoe,{PASSWORD},admin",
        f"| service | user | password |\n|---|---|---|\n| grafana | admin | {PASSWORD} |",
        f"# client  server  secret  IP\nvpn  *  {PASSWORD}  *",
    ],
)
def test_a_column_whose_header_names_a_credential(text: str) -> None:
    [finding] = context_findings(text.split("\n"))
    line = text.split("\n")[finding.line - 1]
    assert line[finding.start : finding.end] == PASSWORD


@pytest.mark.parametrize(
    "text",
    [
        "ED25519 key fingerprint is SHA256:" + TOKEN,
        f"untrusted comment: minisign public key\n{TOKEN}",
        f"password: ENC[AES256_GCM,data:{TOKEN}]",
        "grant_type=authorization_code&code_verifier=" + TOKEN,
        "def login(user: str, password: str, otp: str | None = None) -> Session:",
        "from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey",
        "self._connection = AsyncHTTP2Connection(",
        "password = getpass.getpass('Password for %s: ' % user)",
        "a = -pi*10**40",
        'mysql -u app -p"$(cat /run/secrets/db_password)" app',
        "Das Passwort wird per SMS verschickt.",
        '"NextToken": "' + TOKEN + '"',
    ],
)
def test_no_context_or_no_secret_shape(text: str) -> None:
    assert list(context_findings(text.split("\n"))) == [], text


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("XAI_KEY=xai-" + TOKEN * 2, True),
        ("prefect cloud login -k pnu_" + TOKEN, True),
        ("BUILDKITE=bkua_3f9a0c2e7b1d4e5f8a6b2c9d0e1f7a3b4c5d6e7f", True),
        ("customer cus_gEUJZHjiQS1I8s paid with pi_GyrkDEcnInkMDRt6nKEUpiyF", False),
        ("script-src 'nonce-" + TOKEN + "'", False),
        ("integrity: sha512-" + TOKEN, False),
        ("def test_BlockMatrix_2x2_inverse_symbolic():", False),
        ("posthog.init('phc_" + TOKEN + "')", False),  # a project key is public
        ("my-component-name-v2-final-build-output", False),
    ],
)
def test_prefixed_random_tokens(line: str, found: bool) -> None:
    assert bool(list(vendor_token_spans(line))) is found


def test_a_context_finding_names_line_and_kind_never_the_value() -> None:
    text = f"notes\nDas WLAN-Passwort für Gäste: {PASSWORD}"
    [finding] = SecretScanner().scan(text)
    assert finding.describe() == "line 2: password"
    assert PASSWORD not in finding.describe()
    assert PASSWORD not in SecretScanner().redact(text)
