"""Round-11 categories: human passwords as people make them (a word and a number, two or
three words and a number, letters only from a generator) after the word for password in
more languages; every character inside quotes; network gear's clear-text type; a random
member under a credential type; AES keys as byte lists; values encoded with ``base64`` in a
pipe; legacy Vault tokens, Stellar seeds; credential files recognised by their structure
(a lone user-then-password block, pppd secrets); and the look-alikes of each new rule.
"""

from __future__ import annotations

import base64
import binascii
import random

import pytest

from llama_kb.ingest.guards._evidence import is_word_and_number, shape_score
from llama_kb.ingest.guards._values import is_stellar_seed, is_word
from llama_kb.ingest.guards.secrets import SecretScanner

# 16 byte values, made for this test
_BYTES = random.Random(11)
AES_BYTES = [_BYTES.randrange(256) for _ in range(16)]
DECIMAL = ", ".join(map(str, AES_BYTES))
HEX = ", ".join(f"0x{b:02x}" for b in AES_BYTES)


def _stellar_seed(body: bytes) -> str:
    raw = b"\x90" + body
    return base64.b32encode(raw + binascii.crc_hqx(raw, 0).to_bytes(2, "little")).decode()


SEED = _stellar_seed(bytes(_BYTES.randrange(256) for _ in range(32)))


@pytest.mark.parametrize(
    "text",
    [
        # a word and a number, and passphrases, after the word for password in any language
        "Das Passwort lautet jetzt Dresden2024.",
        "Пароль от сервера: Novosibirsk2016",
        "Hasło: Gdansk2009",
        "Mot de passe du NAS : Grenoble1999",
        "Wachtwoord: granite-falcon-maple-44",
        "Adgangskoden til printeren er nu heron-copper-moss-27",
        "Palavra-passe do portátil: ember-quartz-lagoon-73",
        "Lösenord: Kiwi_Mango_77",
        "new pw for jenkins -> Autumn2025",
        "hi team, the new vpn pass is Lima1998 - don't share",
        "usuario: admin / clave: Lima1998",
        # words for password added this round
        "Parole: Riga2019!",
        "Сырсөз: Bishkek2019",
        "Šifra za wifi: Split2018",
        "Kodeord: Aarhus2017",
        "কূটশব্দ: Dhaka2016!",
        # inside quotes every character is the value's
        "sqlcmd -S db01 -U sa -P 'Nairobi2014?' -Q \"SELECT 1\"",
        # network gear: the clear-text type 0 before the value
        "tacacs server core\n address ipv4 10.9.9.9\n key 0 granite-falcon-maple-44",
        " username ops privilege 15 password 0 Limerick2012",
        # a random member of an object under a credential type
        '"type": "random_password",\n"instances": [{"attributes": {"result": "aZ8#kP2!qL9$wX4&"}}]',
        # AES keys as 16 byte values beside a key word, decimal or hex
        f"network_key: [{DECIMAL}]",
        f"static const uint8_t AES_KEY[16] = {{{HEX}}};",
        # echo or printf piped to base64
        "echo -n 'Juniper2020!' | base64",
        "printf '%s' 'Z3k!pQ9vLm' | base64 -w0",
        # legacy Vault tokens, Stellar seeds with a valid checksum
        "export VAULT_TOKEN=s.Qz7vK2mPx9LtR4wYb8NcH3jD",
        "s.Qz7vK2mPx9LtR4wYb8NcH3jD",
        f"SIGNING_SEED={SEED}",
        SEED,
        # credential files by structure
        "# /etc/openvpn/auth.txt\nvpnuser\nFalcon2020!Rx",
        "alice pptpd Wombat2019! *",
        # OpenSSL pass phrase arguments
        "openssl pkcs12 -export -passout pass:Autumn2025 -out a.p12",
        # a chat question naming a credential with a weak word, answered on the next line
        "[10:02] ana: db pass?\n[10:03] ben: Sommer2023!",
        # letters only from a generator
        "ftp.login('admin', 'SVImJJLiAs')",
        "jdbc:sqlserver://db:1433;databaseName=x;user=sa;password=uITozeQtHXxL;",
    ],
)
def test_round11_secret_is_found(text: str) -> None:
    assert SecretScanner().scan(text), text


@pytest.mark.parametrize(
    "text",
    [
        # password prose with no value, in other languages and with inverted marks
        "¿Olvidaste tu contraseña? Te enviaremos un enlace para restablecerla.",
        "¡Tu contraseña ha sido cambiada! Si no fuiste tú, avísanos.",
        "Passwort vergessen? Klicken Sie hier.",
        "Clave primaria: id_usuario",
        # a minisign public key after -P
        "minisign -Vm app.tar.gz -P RWQki4hPSFI3X5M3U1fjnKN4pisuTv8eQJfnoxEcX5e0nU1I44hLQXcw",
        # names made of a word and a number, under tokens and keys, or a size in bits
        "token budget: Gemini15",
        "Passwort für Windows10 und Office365 zurücksetzen",
        "def encode(data: bytes) -> str:  # the secret\n    Base64 tokens are decoded here",
        "key: cache-node-modules-2",
        "# row ``[timestamp, [value_for_key_0, value_for_key_1, ...]]``",
        # hashed or obfuscated types of network gear
        "key 7 0822455D0A16",
        "username admin secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",
        # a credential type without a random member
        '"type": "random_password",\n"instances": [{"attributes": {"length": 24}}]',
        # byte lists: an IV, an S-box start without a key word, a key word too far
        f"iv = [{HEX}]",
        f"sbox = [{DECIMAL}]",
        # plain text piped to base64, variables, pass phrases from files and variables
        "echo -n 'hello world' | base64",
        'echo -n "$USER:$PASS" | base64',
        "openssl rsa -passin env:KEY_PASS -in k.pem",
        "openssl rsa -passin file:/run/secrets/pw -in k.pem",
        # a Stellar public key, a seed with a broken checksum
        "GCVBZ7X4NPLO3QH6MT2QKLR5YGJ3RRRUWEJFXMJR5YUVX4N2JVSNNTLI",
        SEED[:-1] + ("A" if SEED[-1] != "A" else "B"),
        # two-line blocks that are no credential file
        "Chapter One\nIntroduction",
        "README\n=======",
        "Usage\n  llama-kb ingest PATH",
        # a question answered by no password
        "[10:02] ana: did the tests pass?\n[10:03] ben: yes, all green",
        # a pppd header alone
        "# client server secret IP addresses",
    ],
)
def test_round11_look_alikes_are_not_reported(text: str) -> None:
    assert SecretScanner().scan(text) == [], text


def test_human_password_shapes() -> None:
    assert is_word_and_number("Bergen2017") and is_word_and_number("summer2024")
    assert is_word_and_number("Kiwi_Mango_77")
    assert not is_word_and_number("Base64") and not is_word_and_number("Float32")
    assert not is_word_and_number("Windows10") and not is_word_and_number("Server2019")
    assert shape_score("granite-falcon-maple-44") == 2  # a passphrase as a password
    assert shape_score("cache-node-modules-2") == 1  # a technical word: a name
    assert shape_score("value_for_key_1") == 1  # snake case: a name in code
    assert shape_score("SVImJJLiAs") == 2 and shape_score("getStrLength") == 0
    assert not is_word("SVImJJLiAs") and is_word("XMLHttpRequest")


def test_stellar_seed_checksum() -> None:
    assert is_stellar_seed(SEED)
    assert not is_stellar_seed("GCVBZ7X4NPLO3QH6MT2QKLR5YGJ3RRRUWEJFXMJR5YUVX4N2JVSNNTLI")
    assert not is_stellar_seed("not base32")
