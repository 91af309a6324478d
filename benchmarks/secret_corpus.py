"""A planted-secret corpus: typed secrets and harmless look-alikes, one text each.

Secret values are generated from a fixed seed in the shape of each provider's format, so no
real credential is stored here. Used by ``python -m benchmarks.secrets_bench`` (the README
table) and by ``tests/ingest/guards/test_secrets.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.secret_values import AN, B64, HX, UP, D, Values

__all__ = ["HARMLESS", "HELDOUT_HARMLESS", "HELDOUT_SECRETS", "SECRETS", "Case"]

_r = Values(17).g
_UPPER_DIGITS = UP + D


@dataclass(frozen=True)
class Case:
    """One text and, for a secret, the kind of secret it holds (``""`` when harmless)."""

    kind: str
    text: str


_aws_id = lambda: "AKIA" + _r(_UPPER_DIGITS, 16)  # noqa: E731
_aws_secret = lambda: _r(B64, 40)  # noqa: E731
_pw = lambda: _r(AN, 6) + "!" + _r(AN, 7)  # noqa: E731

SECRETS: tuple[Case, ...] = (
    Case("aws_access_key", f"aws_access_key_id = {_aws_id()}"),
    Case("aws_access_key", f"Use the key {_aws_id()} for the upload job."),
    Case("aws_access_key", f'"AccessKeyId": "{_aws_id()}",'),
    Case("aws_secret_key", f"aws_secret_access_key = {_aws_secret()}"),
    Case("aws_secret_key", f"AWS_SECRET_ACCESS_KEY={_aws_secret()}"),
    Case("github_token", f"token: ghp_{_r(AN, 36)}"),
    Case("github_token", f"git clone https://x-access-token:gho_{_r(AN, 36)}@github.com/o/r"),
    Case("github_token", f"GH_TOKEN=github_pat_{_r(AN, 22)}_{_r(AN, 59)}"),
    Case("gitlab_token", f"export GITLAB_TOKEN=glpat-{_r(AN, 20)}"),
    Case("gitlab_token", f"The runner uses glpat-{_r(AN, 20)} to push."),
    Case("slack_token", f"SLACK_BOT_TOKEN=xoxb-{_r(D, 12)}-{_r(AN, 24)}"),
    Case("slack_token", f"xoxp-{_r(D, 11)}-{_r(D, 12)}-{_r(AN, 32)}"),
    Case(
        "slack_webhook",
        f"https://hooks.slack.com/services/T{_r(_UPPER_DIGITS, 8)}/B{_r(_UPPER_DIGITS, 8)}/"
        f"{_r(AN, 24)}",
    ),
    Case("stripe_key", f"stripe.api_key = 'sk_live_{_r(AN, 24)}'"),
    Case("stripe_key", f"Restricted key rk_live_{_r(AN, 24)} for reporting."),
    Case("openai_key", f"OPENAI_API_KEY=sk-proj-{_r(AN, 48)}"),
    Case("openai_key", f"client = OpenAI(api_key='sk-{_r(AN, 48)}')"),
    Case("openai_key", f"key sk-{_r(AN, 20)}T3BlbkFJ{_r(AN, 20)} in the notebook"),
    Case("anthropic_key", f"ANTHROPIC_API_KEY=sk-ant-api03-{_r(AN, 90)}"),
    Case("google_api_key", f"maps key: AIza{_r(AN + '_-', 35)}"),
    Case("google_api_key", f'"apiKey": "AIza{_r(AN, 35)}"'),
    Case(
        "jwt",
        "Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"
        f"IkpvaG4ifQ.{_r(AN + '_-', 43)}",
    ),
    Case(
        "jwt",
        "id_token=eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIn0."
        f"{_r(AN + '_-', 86)}",
    ),
    Case("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + _r(B64, 60)),
    Case("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"),
    Case("private_key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + _r(B64, 40)),
    Case("private_key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg" + _r(B64, 40)),
    Case("url_credentials", f"DATABASE_URL=postgres://app:{_pw()}@db.internal:5432/app"),
    Case("url_credentials", f"broker: amqp://guest:{_pw()}@rabbit:5672//"),
    Case("url_credentials", f"pip install --index-url https://bob:{_pw()}@pypi.corp/simple pkg"),
    Case("bearer_token", f"Authorization: Bearer {_r(AN, 40)}"),
    Case("bearer_token", f"curl -H 'Authorization: Bearer {_r(AN, 32)}' https://api.x.io"),
    Case("password_assignment", f"DB_PASSWORD={_pw()}"),
    Case("password_assignment", f"password: {_pw()}"),
    Case("password_assignment", f"passwd = {_pw()}"),
    Case("password_assignment", f'"password": "{_pw()}"'),
    Case("password_assignment", f"export MYSQL_ROOT_PASSWORD={_pw()}"),
    Case("password_assignment", f"PGPASSWORD={_pw()} psql -h db -U app"),
    Case("password_assignment", f"admin_password: '{_pw()}'"),
    Case("password_assignment", f"machine api.example.net login bob password {_pw()}"),
    Case("secret_assignment", f"client_secret={_r(AN, 32)}"),
    Case("secret_assignment", f'SECRET_KEY = "{_r(AN + "!@#%^&*", 50)}"'),
    Case("secret_assignment", f"api_key = '{_r(AN, 32)}'"),
    Case("secret_assignment", f"API_TOKEN={_r(AN, 40)}"),
    Case("secret_assignment", f"auth_token: {_r(HX, 32)}"),
    Case("secret_assignment", f"  secret: {_r(AN, 24)}"),
    Case("secret_assignment", f"REDIS_PASSWORD={_r(AN, 20)}"),
    Case("secret_assignment", f"jwt_secret = {_r(AN, 30)}"),
    Case("twilio_key", f"TWILIO_API_KEY=SK{_r(HX, 32)}"),
    Case("twilio_key", f"account AC{_r(HX, 32)} sends the SMS"),
    Case("sendgrid_key", f"SG.{_r(AN + '_-', 22)}.{_r(AN + '_-', 43)}"),
    Case("npm_token", f"//registry.npmjs.org/:_authToken=npm_{_r(AN, 36)}"),
    Case("pypi_token", f"password = pypi-AgEIcHlwaS5vcmc{_r(AN + '_-', 70)}"),
    Case("mailchimp_key", f"mailchimp key {_r(HX, 32)}-us12"),
    Case(
        "discord_token",
        f"DISCORD_TOKEN={_r('MN', 1)}{_r(AN, 23)}.{_r(AN, 6)}.{_r(AN + '_-', 27)}",
    ),
    Case("telegram_token", f"bot token {_r(D, 10)}:AA{_r(AN + '_-', 33)}"),
    Case("square_token", f"sq0csp-{_r(AN + '_-', 43)}"),
    Case(
        "azure_storage_key",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={_r(B64, 86)}==",
    ),
    Case("connection_string", f"Server=sql01;Database=crm;User Id=sa;Password={_pw()};"),
    Case("huggingface_token", f"HF_TOKEN=hf_{_r(AN, 34)}"),
    Case("high_entropy", f'const signingKey = "{_r(B64, 44)}";'),
    Case("high_entropy", f"webhook_signing: '{_r(AN, 40)}'"),
    Case("basic_auth_header", f"Authorization: Basic {_r(B64, 28)}="),
    Case("artifactory_key", f"X-JFrog-Art-Api: AKCp8{_r(AN, 68)}"),
)

_sha = lambda n: _r(HX, n)  # noqa: E731

HARMLESS: tuple[Case, ...] = (
    Case("", "request id 3f2b8c1e-9a4d-4e7b-8c2f-1d5e6a7b8c9d was logged"),
    Case("", 'id: "a1b2c3d4-e5f6-47a8-9b0c-d1e2f3a4b5c6"'),
    Case("", f"commit {_sha(40)} fixed the parser"),
    Case("", f"sha256: {_sha(64)}"),
    Case("", f'"checksum": "{_sha(32)}"'),
    Case("", f"md5sum {_sha(32)}  release.tar.gz"),
    Case("", f"image: python@sha256:{_sha(64)}"),
    Case("", f"git checkout {_sha(12)}"),
    Case("", f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{_r(B64, 300)}">'),
    Case("", f"![logo](data:image/png;base64,iVBORw0KGgo{_r(B64, 200)})"),
    Case("", f'"integrity": "sha512-{_r(B64, 86)}=="'),
    Case("", "Set a strong password for your account and never share it."),
    Case("", "The access token expires after one hour; refresh it with the refresh token."),
    Case("", "Rotate the API key every 90 days, as the security policy says."),
    Case("", "Passwords must have at least 12 characters."),
    Case("", "API_KEY=<your-api-key>"),
    Case("", "password: ${DB_PASSWORD}"),
    Case("", 'token = os.environ["GITHUB_TOKEN"]'),
    Case("", "password = getpass.getpass()"),
    Case("", "secret_key = settings.SECRET_KEY"),
    Case("", "AWS example key id AKIAIOSFODNN7EXAMPLE from the AWS docs"),
    Case("", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Case("", "OPENAI_API_KEY=your-openai-key-here"),
    Case("", "Visit https://example.com/docs/getting-started?lang=en for details."),
    Case("", "git@github.com:acme/llama-kb.git"),
    Case("", "Contact alice.smith@example.org or +1 555 0100."),
    Case("", "The server listens on 10.0.0.12:8080 and 192.168.1.4."),
    Case("", "/usr/local/lib/python3.11/site-packages/llama_kb/ingest/pipeline.py"),
    Case("", "class DocumentInterpreterFactoryConfigurationBuilder:"),
    Case("", "ISBN 978-3-16-148410-0, published 2021-06-04T12:30:00Z"),
    Case("", "version 1.14.2-rc.3+build.20240611"),
    Case("", 'greeting = "SGVsbG8gd29ybGQ="'),
    Case("", "The function authenticate_user_with_password_hash checks the hash."),
    Case("", "See the section on key rotation and secret management."),
    Case("", "passport: valid until 2030"),
    Case("", "keyboard shortcut: Ctrl+Shift+P opens the command palette"),
    Case("", "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')"),
    Case("", "The primary key of the users table is user_id."),
    Case("", "Use `llama-kb ingest docs/ --exclude 'drafts/**'` to skip drafts."),
    Case("", "monkey patching the token bucket rate limiter"),
    Case("", "ssh-rsa public keys go in ~/.ssh/authorized_keys"),
    Case("", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQsw"),
    Case("", "https://hooks.example.com/services/overview"),
    Case("", "password_reset_url = '/accounts/password/reset/'"),
)

# Written after the detector was tuned and scored once, unchanged: an out-of-sample check.
HELDOUT_SECRETS: tuple[Case, ...] = (
    Case("password_assignment", f"spring.datasource.password={_pw()}"),
    Case("password_assignment", f'<add key="DbPassword" value="{_pw()}" />'),
    Case("password_assignment", f"mongodb+srv://svc:{_pw()}@cluster0.mongodb.net/app"),
    Case("secret_assignment", f"CLIENT_SECRET: {_r(AN, 34)}"),
    Case("secret_assignment", f'  "privateKey": "{_r(B64, 48)}"'),
    Case("secret_assignment", f"set -x API_KEY {_r(AN, 32)}"),
    Case("aws_access_key", f"--access-key ASIA{_r(_UPPER_DIGITS, 16)}"),
    Case("github_token", f"git remote set-url origin https://ghs_{_r(AN, 36)}@github.com/a/b"),
    Case("slack_token", f"slack: xoxa-2-{_r(AN, 30)}"),
    Case("stripe_key", f'Stripe::api_key = "sk_test_{_r(AN, 24)}"'),
    Case("openai_key", f'openai.api_key = "sk-{_r(AN, 48)}"'),
    Case("google_api_key", f"https://maps.googleapis.com/api/js?key=AIza{_r(AN, 35)}"),
    Case("private_key", "-----BEGIN DSA PRIVATE KEY-----\nMIIBuwIBAAKBgQ" + _r(B64, 40)),
    Case("jwt", f"Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJ1aWQiOjQyfQ.{_r(AN, 43)}"),
    Case("bearer_token", f"headers = {{'Authorization': 'Bearer {_r(AN, 36)}'}}"),
    Case("url_credentials", f"redis://default:{_pw()}@cache.internal:6379/0"),
    Case("gitlab_token", f"CI_JOB_TOKEN=glpat-{_r(AN, 20)}"),
    Case("npm_token", f"NPM_TOKEN=npm_{_r(AN, 36)}"),
    Case("twilio_key", f"twilio auth: AC{_r(HX, 32)} / {_r(HX, 32)}"),
    Case("sendgrid_key", f"SENDGRID_API_KEY='SG.{_r(AN, 22)}.{_r(AN, 43)}'"),
)

HELDOUT_HARMLESS: tuple[Case, ...] = (
    Case("", f'etag: "{_sha(32)}"'),
    Case("", f"The build id is {_sha(40)} on branch main."),
    Case("", "password strength is measured with zxcvbn"),
    Case("", "Set `api_key` in the settings page, then restart the service."),
    Case("", "DB_PASSWORD is read from the environment at start-up."),
    Case("", "token_count = len(tokenizer.encode(text))"),
    Case("", "secret_santa_assignments.csv was emailed to the team"),
    Case("", "uuid4: 9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"),
    Case("", f"container digest sha256:{_sha(64)}"),
    Case("", "Keys are rotated by the platform; see docs/security.md#keys."),
    Case("", "auth_method: oauth2"),
    Case("", "password: ********"),
    Case("", "API_KEY=changeme-in-production"),
    Case("", "The passphrase prompt appears after `ssh-add`."),
    Case("", "jdbc:postgresql://db.internal:5432/app?sslmode=require"),
    Case("", f'<link rel="stylesheet" integrity="sha384-{_r(B64, 64)}">'),
    Case("", "Release 2.3.1 fixes CVE-2024-12345 in the session handler."),
    Case("", "Bearer tokens are validated by the gateway before routing."),
    Case("", "Call get_secret('db/password') from the vault client."),
    Case("", "the primary_key and foreign_key columns are indexed"),
)
