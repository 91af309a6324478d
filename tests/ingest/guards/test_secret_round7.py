"""Round-7 categories: user-then-password pairs, credential words in more languages, call
arguments by position, user-creating commands, and negative evidence for stored hashes,
armoured blocks and client secrets inside object ids."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards._pairs import pair_findings
from llama_kb.ingest.guards._values import is_public, is_stored_hash
from llama_kb.ingest.guards._words import identifier_words, word_strength
from llama_kb.ingest.guards.secrets import SecretScanner

PW = "Harbor52-Tq7"  # built like a name: only a mixed case and digits tell it apart


@pytest.mark.parametrize(
    "text",
    [
        f"To reproduce, sign in with tester_2 / {PW} and open the cart.",
        f"the demo login is guest and {PW} until the release",
        f"/SU dom\\svc /SP {PW}",
        f"--dbuser report --dbpass {PW}",
        f"username: kim\nsecond: {PW}",
        f"$USER7$=svc_backup\n$USER8$={PW}",
    ],
)
def test_a_password_after_its_user_is_found(text: str) -> None:
    found = list(pair_findings(text.split("\n")))
    lines = text.split("\n")
    assert any(lines[n - 1][s:e] == PW for n, s, e in found)


@pytest.mark.parametrize(
    "text",
    [
        "log in with your email and password",
        "username: kim\nhost: Db01Server",
        "user: kim\nrole: Admin2Role",
        "user: kim\nbuild_id: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "docker run -u 1000 -p 8080:80 nginx",
        "credentials are kept in vault/Prod2024",
    ],
)
def test_fields_beside_a_user_are_not_passwords(text: str) -> None:
    assert not list(pair_findings(text.split("\n")))


@pytest.mark.parametrize(
    "text",
    [
        f"Hasła do panelu: {PW}",
        f"Новый пароль: {PW}",
        f"サーバーのパスワードは{PW}です",
        f"数据库密码: {PW}",
        f"Yeni şifreniz {PW}",
        f"Het wachtwoord van de database is {PW}",
        f"# vpn auth-user-pass\nremote01\n{PW}",
    ],
)
def test_credential_words_in_more_languages_and_layouts(text: str) -> None:
    assert SecretScanner().scan(text)


def test_words_outside_latin_1_are_runs_of_letters() -> None:
    assert identifier_words("Hasło") == ["hasło"]
    assert word_strength("Пароля")[0] == 2
    assert word_strength("vPw5G")[0] == 2  # alone it reads as "pw" ...
    base64_line = "hQIMA5bT+vPw5G+hemA6SVLygu9BaEMWoYRaoL03jiPvwZWHk9EXV3ec5WXheJS"
    assert SecretScanner().scan(base64_line) == []  # ... not inside a run of random base64


@pytest.mark.parametrize(
    "line",
    [
        f'$db = mysqli_connect("127.0.0.1", "shop", "{PW}");',
        f'conn = pymysql.connect("db.internal", "app", "{PW}", "orders")',
        "c = Client('AC4f9e2b7d1c8a3f6e0b5d9c2a7f4e1b8d', 'Vq8sLp2Xz9Rt4Mn7Kc1Wb6Yh3Gf5Dj0A')",
        f'createUser backup MD5 "{PW}" DES "{PW}"',
        f"net user operator {PW} /add",
        "https://hooks.acme.io/services/IncomingWebhook/ac97b0f864e9e8fb9f06f24818e1c58a",
    ],
)
def test_credentials_by_call_position_and_user_commands(line: str) -> None:
    assert SecretScanner().scan(line)


@pytest.mark.parametrize(
    "line",
    [
        'conn = sqlite3.connect("cache.db")',
        'client = Client("https://api.acme.io")',
        'signal.connect("clicked", "on_click")',
        "createUser monitor SHA auth_pass_var AES priv_pass_var",
        "def create_user(self) -> ActionResult:",
        "c = m.bind('example.com', '/', 'kb')",  # position alone is not a password
    ],
)
def test_harmless_calls_and_commands(line: str) -> None:
    assert SecretScanner().scan(line) == []


@pytest.mark.parametrize(
    "text",
    [
        "userPassword: {SSHA}pIH8KBLkD5TgkUtESLs+otpFX8a5vWC4",
        "PASSWORD_HASH = sha1$a1976$a36cc8cbf81742a8fb52e221aaeab48ed7f58ab4",
        "password = pbkdf2_sha256$600000$8jjxP1ofPeBCN9pMRT6D9v$ihB+PKjSBi0JT7WelSVS3RsI=",
        "rolpassword | SCRAM-SHA-256$4096:wv4pOi6uW9D+jmln/brjH30a$/7c/bfPWtLjTy=:LbTIbq=",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEPw5G+hemA6SVLygu9BaEMWoYRaoL03jiPvwZ\n"
        "-----END CERTIFICATE-----",
        "client_secret: seti_1NqXyZ2eZvKYlo2C_secret_OdKqRbCzVwXyAbCdEfGhIjKlMnOp",
        '{"password": {"ciphertext": "e7mrW1j6LBvTaMdKwsPA", "iv": "8gGjUXsjqqhQ8oJq",'
        ' "auth_tag": "/WqLPZwLqo0HZGZkr7Zo"}}',
    ],
)
def test_stored_hashes_armoured_blocks_and_client_ids_are_not_secrets(text: str) -> None:
    assert SecretScanner().scan(text) == []


def test_hash_schemes_and_client_secrets_are_told_apart_from_passwords() -> None:
    assert is_stored_hash("{SSHA}pIH8KBLk") and is_stored_hash("bcrypt_sha256$$2b$12$x")
    assert not is_stored_hash("Crypto$99x") and not is_stored_hash(PW)
    assert is_public("pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH")
    assert not is_public("sk_live_4Qz8vR2mXw9LpT3nKb7YcD1s")


def test_a_uuid_under_an_environment_variable_naming_a_token_is_a_secret() -> None:
    assert SecretScanner().scan("CIRCLE_TOKEN=3f2b9c1e-7a4d-4e8f-9b6a-2c5d8e1f4a7b")
    assert not SecretScanner().scan('"ChangeToken": "3f2b9c1e-7a4d-4e8f-9b6a-2c5d8e1f4a7b"')


@pytest.mark.parametrize(
    "text",
    [
        "Der Schlüssel für das Gäste-WLAN: Wl4n!Gast7",
        "La clé API est 8c1f4e2a9b7d3f6e0a5c8b2d4f7e1a3c",
        "ключ доступа: a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4",
        "/msg NickServ IDENTIFY Irc!Nick2024",
    ],
)
def test_the_word_for_key_in_more_languages_and_login_verbs(text: str) -> None:
    assert SecretScanner().scan(text)


def test_documented_example_credentials_are_not_reported() -> None:
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l"
        "IiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    assert SecretScanner().scan(f"Authorization: Bearer {jwt}") == []
    assert SecretScanner().scan("stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'") == []
    assert SecretScanner().scan("token: ghp_" + "x" * 36) == []


def test_a_value_longer_than_the_window_is_redacted_whole() -> None:
    token = "Zq8" + "aB3dE5gH7jK9mN2pQ4sT6vW8yZ1cF3hJ5kL7nP9rS2uV4xY6zA8bD0eG2iK4oM6qU8wX0"
    redacted = SecretScanner().redact(f"the auth value is {token} for now")
    assert token[-12:] not in redacted and "[REDACTED:" in redacted


def test_a_uuid_right_after_a_strong_word_and_upper_case_token_prefixes() -> None:
    assert SecretScanner().scan("consul acl token 3f2b9c1e-7a4d-4e8f-9b6a-2c5d8e1f4a7b")
    assert not SecretScanner().scan("request id 3f2b9c1e-7a4d-4e8f-9b6a-2c5d8e1f4a7b")
    assert not SecretScanner().scan("idempotency token 3f2b9c1e-7a4d-4e8f-9b6a-2c5d8e1f4a7b")
    assert SecretScanner().scan("HRKU-xM_WwMeZ4swstab2-lxwX6mRcVIpwQl2qjqDTMBlphf1VZrcri")
    assert not SecretScanner().scan("cipher suite TLS_AES_256_GCM_SHA384 with X25519")
