"""Round-8 categories: look-alikes that real repositories hold (identifiers written in hex,
stored password hashes, encrypted and referenced values, public keys, keys of data
structures, documentation values and masks), and passphrases, copulas and API clients on the
recall side."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards._evidence import shape_score
from llama_kb.ingest.guards._values import (
    is_identifier,
    is_public,
    is_sequential,
    is_stored_hash,
    looks_secret,
)
from llama_kb.ingest.guards._words import is_data_key, word_strength
from llama_kb.ingest.guards.secrets import SecretScanner

HEX40 = "9f8e7d6c5b4a39281706f5e4d3c2b1a098f7e6d5"
RANDOM = "Xk9mQ2vR7tZ1bN4cW8pY3sL6dG0hJ5aF"


@pytest.mark.parametrize(
    "text",
    [
        # identifiers written in hex: addresses, fingerprints, key ids
        "The token contract is at 0xdAC17F958D2ee523a2206206994597C13D831ec7 on mainnet.",
        'token_address: "0x6B175474E89094C44Da98b954EedeAC495271d0F"',
        "gpg: using EDDSA key 5D3B2F8A1C9E7B40A6D2C8F1E3B5A7D9C1E3F5A7",
        "The key 2300BBEA542070702C97855727F3E215F9DDA299 signed the release.",
        # stored password hashes
        "rolname | app\nrolpassword | md5c4a7f3b2e1d0987654321fedcba98765",
        "authentication_string: *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19",
        'password_hash = "pbkdf2:sha256:600000$kR3mQx9Z$2f1e0c9b8a7d6e5f4a3b2c1d0e9f8a7b6c5d4e"',
        # encrypted values
        "<password>{COQLCE6DU6GtcS5P=}</password>",
        "<password>{AQAAABAAAAAgXk3N2Z5aVq7oT1p9Lr8wYcE4uJdHf6sBmGiK0nRtQ=}</password>",
        f'password:\n  secure: "{RANDOM}{RANDOM}"',
        f"api_key: EJ[1:{RANDOM}:{RANDOM}]",
        # references to a secret kept elsewhere
        "DB_PASSWORD=op://Production/postgres/password",
        "API_TOKEN=doppler://acme/prd/API_TOKEN",
        "SecretId: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/api-key-Xy7Zq1",
        'db_password = "@Microsoft.KeyVault(SecretUri=https://acme.vault.azure.net/secrets/pw/)"',
        'password: "#{DatabasePassword}"',
        "otpauth://totp/ACME:alice?issuer=ACME&algorithm=SHA1",
        # public keys
        "key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        f'"verifyKey": "{RANDOM}"',
        '"caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJn"',
        # keys of data structures, anti-forgery and verification values, signatures
        f"cache-key: node-modules-{HEX40[:32]}",
        f'"sourceMapKey": "{RANDOM}"',
        f"X-CSRF-Token: {RANDOM}",
        f'<meta name="google-site-verification" content="{RANDOM}A1b2C3">',
        f'"signature": "{RANDOM}{RANDOM}"',
        # documentation values and masks
        'api_key = "1234567890abcdef1234567890abcdef"',
        "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef",
        '"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example"',
        "api_key: sk-••••••••••••••••3xYz",
        "API_KEY=####-####-####-7Xq2",
        'SECRET = "fake-secret-for-tests-9f2a"',
        "password: __DB_PASSWORD__",
        'password = "secret123"',
        # template expansions, reference marks and colours in real files
        "NEO4J_AUTH: neo4j/${NEO4J_PASSWORD:?set it in .env}",
        'cypher-shell -u neo4j -p "$${NEO4J_AUTH#neo4j/}"',
        "    [1] https://en.wikipedia.org/wiki/Smith_normal_form#Algorithm",
        '        Token.String: "#AB0909",',
        "        private_key: PKCS7PrivateKeyTypes,",
        '        "secret": "V1SecretProjection",',
        "        doi:10.1007/BF01994876",
        '                "S3Key": "my-app/5026-stage-150723_224258.war"',
        '"Sec-WebSocket-Key": "k9kFAUWNAMmf5OEMfTlOEA==",',
        '"content": "Y29tbWl0IDkxZDA4YjExYTcyNzY0ZjZkMTk5ZjMyZmEwYzFiMWFiZDRlZGMyYWQKQXV0aG9y"',
    ],
)
def test_look_alikes_are_not_reported(text: str) -> None:
    assert SecretScanner().scan(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"PRIVATE_KEY=0x{HEX40}{HEX40[:24]}",  # an Ethereum private key: 64 hex digits
        f"GITHUB_TOKEN={HEX40}",  # a 40-digit hex token in lower case
        f"AZURE_STORAGE_KEY={RANDOM}{RANDOM}==",
        f'"primaryKey": "{RANDOM}"',
        "비밀번호: velvet-falcon-orchid-02",
        "Mật khẩu wifi văn phòng là granite-pepper-velvet-96",
        "Ο κωδικός πρόσβασης είναι orchid-granite-harbor-18",
        f"api = Api('patXy7Kq2mN4vR8tZ.{HEX40}{HEX40[:24]}')",
        f"WEBHOOK_SIGNATURE_SECRET={RANDOM}",
        "DB_PASSWORD=MySecretKey2024",
        "deploy:Xq9mK2vL7pR4",
    ],
)
def test_secrets_beside_the_new_negative_evidence_are_found(text: str) -> None:
    assert SecretScanner().scan(text)


def test_value_forms() -> None:
    assert is_identifier("0x" + HEX40) and is_identifier(HEX40.upper())
    assert not is_identifier(HEX40) and not is_identifier("0x" + HEX40 + "ab")
    assert is_stored_hash("md5" + HEX40[:32]) and is_stored_hash("*" + HEX40.upper())
    assert is_stored_hash("scrypt:32768:8:1$salt$" + HEX40)
    assert is_public("AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + RANDOM)
    assert is_public("age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p")
    assert not is_public("LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcw")
    assert is_sequential("abc123def456ghi789") and not is_sequential(RANDOM)
    assert not looks_secret("vault://secret/data/db#password")


def test_passphrases_score_as_passwords_unless_technical_and_names_not_at_all() -> None:
    # round 11: a passphrase scores as a human password; with a technical word, low
    assert shape_score("velvet-falcon-orchid-02") == 2
    assert shape_score("cache-node-modules-2") == 1
    assert shape_score("ubuntu-latest-python") == 0


def test_data_keys_qualify_only_the_word_key() -> None:
    assert is_data_key("cache_key") and is_data_key("sourceMapKey")
    assert not is_data_key("CACHE_PASSWORD") and not is_data_key("AZURE_STORAGE_KEY")
    assert word_strength("sort_key") == (0, "")
    assert word_strength("REDIS_CACHE_PASSWORD")[0] == 2
