"""Credentials by position (``_positional``) and negative evidence (``_negative``)."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards._negative import negated
from llama_kb.ingest.guards._positional import positional_spans
from llama_kb.ingest.guards.secrets import SecretScanner

PW = "Quartz81!vTe"


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (f'printf "{PW}" | docker login ghcr.io -u bot --password-stdin', PW),
        (f"echo {PW} | passwd --stdin backup", PW),
        (f"net use X: \\\\nas\\media /u:HOME\\kim {PW} /persistent:no", PW),
        (f'"reporting" "{PW}"', PW),
        (f'$conn = ldap_bind($ds, "cn=admin,dc=x", "{PW}");', PW),
        (f"please log in as deploy using {PW} until Monday", PW),
        ("POST https://hooks.acme.io/webhook/a8d7f2k3m9q1z5x0c4v6b2n7", "a8d7f2k3m9q1z5x0c4v6b2n7"),
        ("the app password for the printer is qwzt hkrm bpls ntvx", "qwzt hkrm bpls ntvx"),
        ('SEED_PHRASE="' + " ".join(["ladder", "wave", "river"] * 4) + '"', None),
    ],
)
def test_a_credential_given_by_position_is_found(line: str, value: str | None) -> None:
    spans = list(positional_spans(line))
    assert spans
    if value is not None:
        assert any(line[s:e] == value for s, e in spans)


@pytest.mark.parametrize(
    "line",
    [
        "echo $PATH | sudo -S tee /etc/profile.d/path.sh",  # a reference, not a value
        "net use X: \\\\nas\\media /user:HOME\\kim /persistent:no",
        '"GET" "/index.html"',
        'db.connect("sqlite:///app.db", "main")',
        'raise ConnectionResetError("Connection lost")',
        'raise ConnectionError("Xk3!vq9Lm2")',  # an exception's message, not a login call
        "log in as admin with your usual password",
        "https://acme.io/hooks/deploy-production-service",
        "Your password must be long: make them four real words",
        "random seed = 42",
    ],
)
def test_harmless_positions_are_not_reported(line: str) -> None:
    assert not list(positional_spans(line))


@pytest.mark.parametrize(
    "text",
    [
        "HashedControlPassword 16:872860B76453A77D60CA2BB8C1A7042072093276A3D701AD684053EC4C",
        "RSA key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8.",
        "secrets:\n  sealed:\n    password: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq7HbTZ8z5r",
        "db_password: ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYCAQAxggEhMIIBHQ]",
        '{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}',
    ],
)
def test_negative_evidence_drops_findings_of_every_layer(text: str) -> None:
    assert SecretScanner().scan(text) == []


def test_negative_words_are_read_before_the_value_and_in_the_block_key() -> None:
    line = "server_public_key = 9Hk2LmQp7Rt4Vw8XyZa1Bc3De5Fg6Hj0"
    assert negated([line], 1, line.index("9Hk"), len(line))
    private = "private_key = 9Hk2LmQp7Rt4Vw8XyZa1Bc3De5Fg6Hj0"
    assert not negated([private], 1, private.index("9Hk"), len(private))
    sql = f"ALTER ROLE app WITH ENCRYPTED PASSWORD '{PW}';"
    assert not negated([sql], 1, sql.index(PW), sql.index(PW) + len(PW))
    block = ["encryptedData:", f"  password: {PW}"]
    assert negated(block, 2, 12, 12 + len(PW))
    assert not negated(["auth:", f"  password: {PW}"], 2, 12, 12 + len(PW))
