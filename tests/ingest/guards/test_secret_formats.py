"""Vendor and key-file formats, Authorization schemes and API keys in URLs."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards import SecretScanner

_B64 = "QmFzZTY0ZW5jb2RlZFZhbHVlMTIzNDU2Nzg5MGFiY2RlZmdo"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "sg = Client('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')",
            "sendgrid_api_key",
        ),
        ('bot = Bot(token="1234567890:AAH4_GT-CQqt06a0VrCMV6PB16Q-jbNw-iW")', "telegram_bot_token"),
        (
            "https://discord.com/api/webhooks/1234567890123456789/" + "aB3_dE5-fG7h" * 6,
            "discord_webhook",
        ),
        ("key=AAAAe9xu_ns:APA91b" + "x7Yz_Q-2" * 17, "firebase_server_key"),
        (
            "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
            "age_secret_key",
        ),
        ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none", "putty_private_key"),
        ("-----BEGIN OpenVPN Static key V1-----\n4b7ff00edd0a29d2", "openvpn_static_key"),
        ("client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + _B64, "private_key"),
        ("client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1J" + _B64, "private_key"),
        ("Authorization: SSWS 00CsvjUL8IdK3V4SjqfaSUUq5UpE0_3Bd7hhkJIkL3", "authorization_header"),
        ("Authorization: ApiKey " + _B64, "authorization_header"),
        ("GET /data/2.5/weather?q=Oslo&appid=001b064bdc46a483b537d6d9d5ddda0f", "api_key_in_url"),
        ("REDIS_URL=rediss://:BcCl6tAMluwP73D7c0cxkpwIy8wI2lJH@cache:6380/0", "credentials_in_url"),
    ],
)
def test_each_format_is_found_and_named(text: str, kind: str) -> None:
    assert kind in SecretScanner().types(text)


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Negotiate",
        "Authorization: Token token=<your-token>",
        "client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1J" + _B64[:20],
        "https://maps.example.org/api?key=abc&q=Oslo",
        '<div class="g-recaptcha" data-sitekey="6LcxMVDToNjcIaKdN1EPyUPVYPY1_8I_ISY6Xewx"></div>',
        "MAPBOX_PUBLIC_TOKEN=pk.eyJ1IjoiYWNtZSIsImEiOiJXWKRk-tnscmXq2Erb1Ox.C2Mi7WlegaDi20izryS",
        "redis://:@localhost:6379/0",
    ],
)
def test_public_values_and_references_are_not_flagged(text: str) -> None:
    assert SecretScanner().scan(text) == []
