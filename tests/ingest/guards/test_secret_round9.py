"""Round-9 categories: values named beside them, in base64, in cookies, after their key id or
in the line that answers a sentence; passphrases and prose in more languages; plain-text
password schemes and Base58Check private keys; and the look-alikes of each new rule."""

from __future__ import annotations

import base64

import pytest

from llama_kb.ingest.guards._encoded import decoded_tokens, unescaped
from llama_kb.ingest.guards._evidence import shape_score
from llama_kb.ingest.guards._named import named_value_findings
from llama_kb.ingest.guards._values import is_base58check, is_identifier, is_public
from llama_kb.ingest.guards.secrets import SecretScanner

RANDOM = "Xk9mQ2vR7tZ1bN4cW8pY3sL6dG0hJ5aF"
HEX32 = "c4a7f3b2e1d0987654a1b2c3fedcba98"
PASSWORD = "Heron58!vqz"  # a word, digits, a symbol, letters
# Base58Check of version 0x80 and 32 bytes 0x01: a valid WIF, made for this test
WIF = "5HpjE2Hs7vjU4SN3YyPQCdhzCu92WoEeuE6PWNuiPyTu3ESGnzn"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "text",
    [
        # name/value pairs and value children
        f"env:\n- name: SMTP_PASSWORD\n  value: {PASSWORD}",
        f'{{"name": "STRIPE_SECRET", "value": "{RANDOM}"}}',
        f"ParameterKey=DbPassword,ParameterValue={PASSWORD}",
        f"<ServicePassword>\n  <Value>{PASSWORD}</Value>\n</ServicePassword>",
        # base64 of a credential, judged decoded
        f"data:\n  REDIS_URL: {_b64(f'redis://app:{PASSWORD}@cache:6379/0')}",
        f'<Pass encoding="base64">{_b64(PASSWORD)}</Pass>',
        # tokens in URLs and cookies, UUIDs after an Authorization scheme
        f"git remote add origin https://{RANDOM.lower()}x7q2@git.acme.dev/infra.git",
        f"curl https://app.acme.dev/ -b 'PHPSESSID={RANDOM.lower()}'",
        f"Set-Cookie: remember_token={RANDOM}; Path=/; HttpOnly",
        "Authorization: GenieKey 3f2a9c1e-7b4d-4e8a-9c2f-1d3e5a7b9c0d",
        # a key id then its secret, a quoted id:secret
        f"rclone config create s3 AKZQ7P3MXV9R2T5W4Y8N {RANDOM}Ab12Cd34",
        f"new Client('AB{HEX32}', '{HEX32[::-1]}')",
        f"const rt = new Realtime('ab12.cd34:{RANDOM}Qw')",
        # a sentence naming a credential, answered on a later line
        f"Your temporary password:\n\n{HEX32}",
        f"[09:12] kim: what was the vpn pw\n[09:13] ola: {PASSWORD}",
        f"Token for the CI user regenerated.\nNew token: {RANDOM}",
        # passphrases, a ! after digits, more languages
        "vncpasswd -f <<< maple.harbor.quartz.orbit7 > passwd",
        "root password: Harbor.Quartz.Maple7",
        "la password del server è Trota2024!",
        "le mdp du wifi c'est Brise77#kz",
        "رمز عبور پایگاه داده velvet.orbit.maple.quartz9 است",
        "Serverio slaptažodis: Lynx42!pq",
        "Il codice di accesso è Rondine91#qs",
        # plain-text schemes, ACL rules, private keys
        f"svc@acme.dev:{{PLAIN}}{PASSWORD}::::::",
        f"user ingest on >{PASSWORD} ~queue:* +@all",
        f"wif: {WIF}",
        f"accounts: ['{HEX32}{HEX32}']",
        f"ssh-keygen -t ed25519 -N '{PASSWORD}' -f ~/.ssh/id_ci",
        "SIGNING_KEY: MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + RANDOM,
        "keystore_b64: MIIJKQIBAzCCCO8GCSqGSIb3DQEHAaCCCOAEggjcMIII2DCCA" + RANDOM,
        # escaped JSON in logs, HAR session cookies, user and password pairs
        f'DEBUG body="{{\\"user\\":\\"kim\\",\\"password\\":\\"{PASSWORD}\\"}}"',
        f'{{"name": "JSESSIONID", "value": "{HEX32.upper()}", "path": "/"}}',
        f"u: kim p: {PASSWORD}",
        f"default login is admin/{PASSWORD}",
        f"kim.berg@acme.dev:{PASSWORD}",
        f"The relay signs in as ops@acme.dev with {PASSWORD}",
        f"SSID AcmeLab / WPA2 {PASSWORD}",
        f"Sunucu parolası: {PASSWORD}",
        f"kata sandinya {PASSWORD}",
        f"ລະຫັດຜ່ານ {PASSWORD}",
        # calls that create a user, two-factor recovery codes
        f"User.objects.create_user('kim', 'kim@acme.dev', '{PASSWORD}')",
        "Recovery codes: 7f3k2-9qx4m 4mz8p-2kd7w",
    ],
)
def test_round9_secrets_are_found(text: str) -> None:
    assert SecretScanner().scan(text)


@pytest.mark.parametrize(
    "text",
    [
        "Password reset successful.\nRequest ID: " + HEX32,
        "Your password was changed.\nReference: " + HEX32,
        "[14:03] raj: did you rotate the token yet?\n[14:04] lea: yes, see PR 4821",
        "Please enter your password:\nUsername: jdoe",
        f"Cookie: csrftoken={RANDOM}; theme=dark",
        "Cookie: sessionid=abc123; lang=en",
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      key: password",
        '{"name": "DB_PASSWORD", "value": "{{ .Values.db.password }}"}',
        "https://6c05ef013024c36889d9d999970954e0@o817461.ingest.sentry.io/5812345",
        "git clone ssh://git@gitlab.acme.dev:2222/infra/deploy-scripts.git",
        "SLACK_BOT_TOKEN=xoxb-not-a-real-token-do-not-use",
        f'DOTENV_VAULT_STAGING="{RANDOM}{RANDOM}/{RANDOM}=="',
        f"9E107D9D372BB6826BD81D3542A419D6 {HEX32.upper()}ABCD1234",
        f"A1B2C3D4E5F6G7H8 sha256-{RANDOM}Qw8=",
        'issuer = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"',
        'cid = "ipfs:QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"',
        "Build: copper.glacier.lantern.build4 released",
        "the parole board met on 12 March 1998",
        "config.json: " + _b64('{"logLevel": "info", "port": 8080}'),
        "accounts: 1200 active, 35 suspended",
        "Store your recovery codes in a safe place.",
        "create_user('kim', 'kim@acme.dev', is_staff=True)",
        "Write to support@acme.dev with Questions2024?",
        "git remote add origin git@github.com:acme/infra.git",
        "cp admin/Dashboard2 root/.bashrc /tmp",
        "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt",
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UEChMJQmFsdGlt",
        r'pattern = r"\"[^\"]*\""',
        # names in code under a credential word (seen in the package samples)
        "from rsa import (\n    generate_private_key,\n    rsa_crt_dmp1,\n)",
        "        pass\n\n\nGraphStoreAlias = Neo4jPropertyGraphStore",
        "class Auth(TypedDict):\n    gcp: AuthGcp\n\n\nclass MountSpecS3Bucket2x(TypedDict):",
        "        >>> pi/2*hyp2f1(0.5,-0.5,1,0.5)",
    ],
)
def test_round9_look_alikes_are_not_reported(text: str) -> None:
    assert SecretScanner().scan(text) == []


def test_base58check() -> None:
    assert is_base58check(WIF)
    assert not is_base58check(WIF[:-1] + "X")
    assert not is_base58check("0OIl")  # not the alphabet


def test_value_forms() -> None:
    assert shape_score("maple.harbor.quartz.orbit7") == 2  # a passphrase, not a host
    assert shape_score("Maple-Harbor-Quartz-42") == 2
    assert shape_score("api.acme.dev") == 0
    assert is_identifier("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG")
    assert is_public("z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK")


def test_decoded_tokens_are_printable_text_only() -> None:
    line = f"a: {_b64('user:' + PASSWORD)} b: {base64.b64encode(bytes(range(24))).decode()}"
    assert [text for _, _, text in decoded_tokens(line)] == ["user:" + PASSWORD]


def test_named_values_report_the_value_line() -> None:
    lines = ["- name: API_TOKEN", f'  value: "{RANDOM}"']
    assert list(named_value_findings(lines)) == [(2, 10, 10 + len(RANDOM))]


def test_escaped_lines_are_reported_and_redacted_at_their_own_offsets() -> None:
    text = f'log: "{{\\"password\\":\\"{PASSWORD}\\"}}"'
    [finding] = SecretScanner().scan(text)
    assert text[finding.start : finding.end].strip('\\"') == PASSWORD  # quotes as unescaped
    assert PASSWORD not in SecretScanner().redact(text)


def test_unescaped_maps_offsets_back() -> None:
    text, offsets = unescaped('a\\"b\\/c')
    assert text == 'a"b/c' and [offsets[i] for i in range(len(text) + 1)] == [0, 2, 3, 5, 6, 7]
