"""Round-10 categories: the edges of human passwords (symbols after the digits, ``=`` at the
end), compounds and the word for credentials in more languages, random letters after a
prefix, UUIDs bound to a credential word or given to a client class, host-named settings,
listed recovery codes, keys as byte lists, Terraform variable blocks; and the look-alikes of
each new rule (hashed and encrypted values, value types, placeholders in Basic credentials).
"""

from __future__ import annotations

import base64
import random

import pytest

from llama_kb.ingest.guards._evidence import is_name, shape_score
from llama_kb.ingest.guards._values import is_word
from llama_kb.ingest.guards._words import word_strength
from llama_kb.ingest.guards.secrets import SecretScanner

RANDOM = "Xk9mQ2vR7tZ1bN4cW8pY3sL6dG0hJ5aF"
UUID = "5e0c1d2a-7b3f-4c9e-8a61-0f2d4b6c8e1a"
# 64 distinct-enough byte values, made for this test
_BYTES = random.Random(10)
KEY_BYTES = ", ".join(str(_BYTES.randrange(256)) for _ in range(64))


@pytest.mark.parametrize(
    "text",
    [
        # a symbol or = after the digits belongs to the password
        "Ciao, l'accesso: utente mario, password Inverno2027*",
        "Hasło do routera: Kwiat31Lato= (nie zmieniać)",
        "Sunucu şifresi Bahar2027= olarak ayarlandı",
        # a trailing separator after mixed case and digits
        'ssid="Office"\npsk="Herbst2027_"',
        "<ana> who has the creds for grafana?\n<ben> ops_team / Falke42Wind- works",
        # compounds and the word for credentials
        "Benutzer: m.berg, Datenbankkennwort: falke7wind3regen9",
        "Ecco le credenziali: Primavera2027#",
        "[09:12] 지수: 개발 서버 비번 Herbst2027! 이에요",
        # random letters after a prefix
        "postgres://owner:abc_QwrtzKplmXnvB@db.internal.example/app",
        # a UUID bound to a credential word across a separator
        f'curl -H "X-Mail-Server-Token: {UUID}" https://mail.vendor.test/send',
        # SK as a whole key part, openssl's pass phrase option
        f"export ACME_CLOUD_SK={RANDOM}",
        "openssl enc -aes-256-cbc -k 'falke7wind3regen9' -in a.tar -out a.tar.enc",
        # a list item after a flag that takes a credential
        f"args:\n  - --token\n  - {RANDOM}",
        # the first argument of a client library's class
        f'client = vendorlib.Translator("{UUID}:fx")',
        f'api = paylib.SDK("APP_USR-{RANDOM}-{RANDOM[:12]}")',
        # a host-named setting holding user:password
        "BUNDLE_GEMS__VENDOR__IO=ab12cd34:9f8e7d6c",
        # recovery codes listed under their heading
        "Your two-factor backup codes:\n1. 4821 9073\n2. 5530 1286\n3. 7712 6640",
        # a private key as a list of byte values
        f"keypair.json:\n[{KEY_BYTES}]",
        # key formats: a Java key store in base64, a Nostr secret key
        "keystore: /u3+7QAAAAIAAAABAAAAAQAFbXlrZXkAAAGN" + RANDOM + RANDOM,
        "nsec1" + ("qpzry9x8gf2tvdw0s3jn54khce6mua7l" * 2)[:58],
        # a Terraform variable block naming a credential, PowerShell name and value parameters
        'variable "admin_password" {\n  default = "Kranich58!vqz"\n}',
        "Set-Variable -Name SmtpPassword -Value 'Kranich58!vqz'",
        # the word for password in more languages and scripts
        "Cyfrinair y gweinydd: Kranich58!vqz",
        "Şifrə: Kranich58!vqz",
        "A palavra-passe do servidor é Kranich58!vqz",
        "ਪਾਸਵਰਡ Kranich58!vqz",
        "Het wagwoord is Kranich58!vqz",
        # vendor bodies: a 32-hex run inside, or one case and digits well mixed
        "token APP_TOK-1234567890123456-123456-" + "9f8e7d6c5b4a3928" * 2 + "-123456789",
        "use CLOJARS_" + "k3j9x2m7q8w1z5r4t6y0u2i9o8p7a6s5d4f3g2h1j0k9l8" + " for deploys",
    ],
)
def test_round10_secret_is_found(text: str) -> None:
    assert SecretScanner().scan(text), text


@pytest.mark.parametrize(
    "text",
    [
        # hashed and encrypted values under a credential word
        "password_pbkdf2 admin grub.pbkdf2.sha512.10000." + "AB12" * 16 + "." + "CD34" * 16,
        "password 51:b:01000000D08C9DDF0115D1118C7A00C04FC297EB01000000" + "A1B2" * 40,
        "$ cat secrets.yml.enc\n" + f"{RANDOM}{RANDOM}--{RANDOM[:24]}--{RANDOM[:22]}==",
        # Basic credentials whose password is a placeholder
        "e.g. Basic " + base64.b64encode(b"alice:password").decode(),
        # a key right before a word with a credential suffix
        "helm install db bitnami/mysql --set auth.existingSecret=db-auth",
        # value types and clients made from settings
        f'uid = uuid.UUID("{UUID}")',
        'price = decimal.Decimal("1234.5678")',
        "client = vendorlib.Client(settings)",
        # numbered steps under a heading about codes, a list of 32 small counts
        "How to find your recovery codes:\n1. Open settings\n2. Choose Security",
        "counts = [" + ", ".join(str(i) for i in range(1, 33)) + "]",
        f"expected_digest = [{KEY_BYTES}]",
        f"pixels = [{KEY_BYTES}]",
        "table = [" + ", ".join(str(i) for i in range(64)) + "]",
        "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        # a base64 image with a camel-case 'Sk' inside, longer than any credential
        "thumb: "
        + base64.b64encode(bytes(random.Random(3).randrange(256) for _ in range(400))).decode(),
        # idempotency tokens of clients and requests, queries given to a class, dunder names
        f'"ClientToken": "{UUID}"',
        f'"LifecycleActionToken": "{UUID}",',
        'q = httplib.QueryParams("a=123&b=456")',
        "ca = colorlib.Colorizer('3VarAddA')",
        "    def __init__(self, local, private):\n        Decompiler.__init__(self)",
        # emphasis around a name is no password symbol
        "The **Inverno2027** release notes: password policy unchanged",
    ],
)
def test_round10_look_alike_is_not_reported(text: str) -> None:
    assert SecretScanner().scan(text) == [], text


def test_separator_after_mixed_case_and_digits_is_not_a_name() -> None:
    assert not is_name("Herbst2027_") and shape_score("Herbst2027_") >= 2
    assert is_name("snake_case_name_") and shape_score("foo_bar_") == 0


def test_random_letters_after_a_prefix_are_not_a_word() -> None:
    assert not is_word("abc_QwrtzKplmXnvB")
    assert is_word("my_secret_value") and is_word("ExclusiveStartShardId")


def test_compound_and_cognate_words_name_a_credential() -> None:
    assert word_strength("Initialkennworts") == (2, "password")
    assert word_strength("credenziali") == (2, "credential")
    assert word_strength("HUAWEI_SDK_SK") == (1, "key")
    assert word_strength("SkZJRg")[0] == 0
