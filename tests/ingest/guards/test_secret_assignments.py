"""Credential assignments across syntaxes: what counts as a credential key and a secret value."""

from __future__ import annotations

import pytest

from llama_kb.ingest.guards import SecretScanner
from llama_kb.ingest.guards._assignments import (
    assignment_spans,
    is_placeholder,
    looks_secret,
    names_auth_credential,
    names_credential,
)

VALUE = "q8Rz!t2VwK4m"


@pytest.mark.parametrize(
    "line",
    [
        f"DB_PASSWORD={VALUE}",
        f'export API_TOKEN="{VALUE}"',
        f"set -x API_KEY {VALUE}",
        f"set -gx CLIENT_SECRET {VALUE}",
        f"setenv SMTP_PASSWORD {VALUE}",
        f"deploy --password {VALUE} --host db",
        f'  "accessToken": "{VALUE}",',
        f"  auth_token: {VALUE}",
        f'secret_key = "{VALUE}"',
        f"spring.datasource.password={VALUE}",
        f'<add key="DbPassword" value="{VALUE}" />',
        f'<property name="mail.password" value="{VALUE}"/>',
        f'<server id="r" username="ci" password="{VALUE}"/>',
        f"<password>{VALUE}</password>",
        f'<string name="api_key">{VALUE}</string>',
        f"Server=sql;User Id=sa;Pwd={VALUE};",
        f'<add connectionString="Data Source=s;Password={VALUE};" />',
        f"PGPASSWORD={VALUE} psql -h db",
        f"curl -u admin:{VALUE} https://ci.internal/api",
        f'$settings = @{{ "db_pass" => "{VALUE}" }}',
        f"RABBITMQ_DEFAULT_PASS: {VALUE}",
        f"bind_pw = {VALUE}",
        f"mysql -u root -p'{VALUE}' shop < dump.sql",
        f"mysqldump -uroot -p{VALUE} --all-databases",
        f"db.internal:5432:app:app:{VALUE}",
        f"The staging admin password is {VALUE} until we move it.",
        f"the api key for the test tenant was {VALUE}.",
        f"Your temporary password is: {VALUE}",
        f"Sign in as admin / {VALUE} and change it.",
        f"docker login -u ci -p {VALUE} registry.acme.io",
        f"sshpass -p '{VALUE}' ssh deploy@host",
        f"redis-cli -h cache -a {VALUE} ping",
        f'ldapmodify -x -D "cn=admin,dc=acme" -w {VALUE} -f change.ldif',
        f"rabbitmqctl change_password orders {VALUE}",
        f"nuget sources add -Name corp -Password {VALUE}",
        f"tool --verbose --passphrase '{VALUE}' -d file",
        f"kubectl create secret generic db --from-literal=password='{VALUE}'",
        f"CREATE LOGIN etl IDENTIFIED BY '{VALUE}';",
        f"ALTER ROLE app WITH LOGIN ENCRYPTED PASSWORD '{VALUE}';",
        f"requirepass {VALUE}",
        f"masterauth {VALUE}",
        f"ENV SMTP_PASSWORD {VALUE}",
        f"    password {VALUE}",
        f"Environment=API_TOKEN={VALUE}",
        f'os.environ["SMTP_SECRET"] = "{VALUE}"',
        f"define('SECURE_AUTH_KEY', '{VALUE}');",
        f'os.environ.setdefault("API_KEY", "{VALUE}")',
        f"jdbc:postgresql://db/app?user=app&password={VALUE}",
        f"[smtp.acme.io]:587 alerts@acme.io:{VALUE}",
        f'var c = new NetworkCredential("u@acme.io", "{VALUE}");',
        f'$s = ConvertTo-SecureString "{VALUE}" -AsPlainText -Force',
        f"config.secret_key_base = '{VALUE}'",
        f"ldap_default_authtok = {VALUE}",
        f"-storepass {VALUE}",
    ],
)
def test_a_credential_value_is_found_in_each_syntax(line: str) -> None:
    spans = list(assignment_spans(line))
    assert [line[s:e].strip("\"'") for s, e in spans] == [VALUE]
    assert VALUE not in SecretScanner().redact(line)


@pytest.mark.parametrize(
    "line",
    [
        "password: ${DB_PASSWORD}",
        "password: {{ vault_db_password }}",
        "API_KEY=<your-api-key>",
        "API_KEY=changeme-in-production",
        "password: null",
        "OPENAI_API_KEY=sk-...",
        "password: ********",
        'token = os.environ["GITHUB_TOKEN"]',
        "token = make_token(user, 3)",
        "secret_key = settings.SECRET_KEY",
        '"secret": "AWS_SECRET_ACCESS_KEY",',
        "password: SecretStr",
        "chroma_auth_credentials=chroma_auth_credentials,",
        '"ImportToken": "The import token to send with the request.",',
        '"ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f",',
        "password_min_length: 12",
        "token_type: bearer",
        "api_key_header: X-API-Key",
        "primary_key: user_id42",
        'tokenizer = "bert-base-uncased-v2"',
        "Stripe::api_key = ENV['KEY']",
        "curl -u user:password https://example.org",
        "mysql -u root -p shop < dump.sql",
        "*:*:*:replicator:*",
        '"KeyFingerprint": "1f:51:ae:28:bf:89:e9:d8:1f:25:5d:37:2d:7d:b8:ca:9f:f5:f1:6f",',
        "two_pass: enabled",
        "The password is stored in the vault, not in the repository.",
        "The token is valid for 3600 seconds.",
        '"request_token": "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"',
        "docker login -u ci -p $CI_REGISTRY_PASSWORD registry.acme.io",
        "docker login --password-stdin -u ci registry.acme.io",
        "CREATE USER 'app'@'%' IDENTIFIED BY '<password>';",
        "CREATE USER app IDENTIFIED WITH caching_sha2_password;",
        "# requirepass foobared",
        "ENV NODE_ENV production",
        "Environment=PYTHONUNBUFFERED=1",
        'os.environ["DEBUG"] = "1"',
        "define('WP_DEBUG', false);",
        "(root / KB_FILE).write_text(json.dumps(meta, indent=2))",
        "see user/html.html#html4css1 for details",
        "MAPBOX_TOKEN=pk.eyJ1IjoiYWNtZSIsImEiOiJja2x4YzQ5NnQwMDB4MnBwZ3N5dG9xMjE3In0.Xy7",
        "the compass and the bypass: Compass7Road, bypass=Bypass99Lane",
    ],
)
def test_placeholders_references_words_and_other_keys_are_not_secrets(line: str) -> None:
    assert list(assignment_spans(line)) == []


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("DB_PASSWORD", True),
        ("accessToken", True),
        ("_authToken", True),
        ("client_secret", True),
        ("apiKey", True),
        ("AccountKey", True),
        ("db_pass", True),
        ("PGPASSWORD", True),
        ("password_reset_url", False),
        ("primary_key", False),
        ("tokenizer", False),
        ("bypass", False),
        ("bind_pw", True),
        ("RABBITMQ_DEFAULT_PASS", True),
        ("pass", False),
        ("requirepass", True),
        ("storepass", True),
        ("masterauth", True),
        ("ldap_default_authtok", True),
        ("secret_key_base", True),
        ("client-key-data", True),
        ("AZURE_DEVOPS_PAT", True),
        ("authkey", True),
        ("compass", False),
        ("oauth", False),
        ("key_data", False),
        ("user_data", False),
        ("", False),
    ],
)
def test_the_last_word_of_a_key_decides(key: str, expected: bool) -> None:
    assert names_credential(key) is expected


@pytest.mark.parametrize("key", ["_authToken", "HEROKU_API_KEY", "password", "client_secret"])
def test_a_uuid_is_a_secret_only_under_an_authentication_key(key: str) -> None:
    uuid = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
    assert names_auth_credential(key)
    assert list(assignment_spans(f"{key}={uuid}")) == [(len(key) + 1, len(key) + 37)]
    assert not names_auth_credential("ChangeToken") and not names_auth_credential("request_id")


def test_values_must_look_like_secrets() -> None:
    assert looks_secret(VALUE) and looks_secret("3f9a0c2e7b1d4e5f8a6b2c9d0e1f7a3b")
    assert not looks_secret("hunter")  # too short
    assert not looks_secret("production")  # a word
    assert not looks_secret("KEYWORDS:")  # a word with a colon
    assert is_placeholder("xxxxxxxxxxxx") and is_placeholder("%DB_PASSWORD%")
