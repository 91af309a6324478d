"""A second held-out secret set, written before the detector was tuned for it (issue 17).

The detector is tuned only on :mod:`benchmarks.secret_corpus` (the planted set and the first
held-out set). This set is for checking: secrets in many file syntaxes (XML attributes, shell
``export`` / ``set -x``, ``.npmrc``, YAML, TOML, JSON, INI, docker-compose, connection strings,
Terraform, Kubernetes secrets, Java properties, PEM, JWT, cloud and SaaS tokens) and harmless
look-alikes (UUIDs, hashes, base64 images, placeholders from docs, ``changeme``, variable
references). Values are generated from a fixed seed in each format's shape; none is real.
"""

from __future__ import annotations

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, HX, UP, URL, D, Values, b64

__all__ = ["CHECK_HARMLESS", "CHECK_SECRETS"]

_values = Values(2026)
_rng = _values.rng
_g = _values.g
_UP = UP + D


def _pw() -> str:
    return _g(AN, 5) + _rng.choice("#%!&*") + _g(AN, 6) + _g(D, 2)


def _uuid() -> str:
    return f"{_g(HX, 8)}-{_g(HX, 4)}-4{_g(HX, 3)}-a{_g(HX, 3)}-{_g(HX, 12)}"


CHECK_SECRETS: tuple[Case, ...] = (
    # XML
    Case("xml_attribute", f'<property name="db.password" value="{_pw()}"/>'),
    Case(
        "xml_attribute",
        '<add name="Main" connectionString="Data Source=sql01;Initial Catalog=crm;'
        f'User ID=app;Password={_pw()};" providerName="System.Data.SqlClient" />',
    ),
    Case(
        "xml_element",
        f"<server>\n  <id>nexus</id>\n  <username>deploy</username>\n"
        f"  <password>{_pw()}</password>\n</server>",
    ),
    Case("xml_attribute", f'<server id="releases" username="ci" password="{_pw()}"/>'),
    Case("xml_element", f'<string name="google_maps_key">AIza{_g(URL, 35)}</string>'),
    # shell
    Case("shell_export", f'export AWS_SECRET_ACCESS_KEY="{_g(AN + "+/", 40)}"'),
    Case("shell_export", f"set -gx DATABASE_PASSWORD {_pw()}"),
    Case("shell_export", f"export GITHUB_TOKEN=ghp_{_g(AN, 36)}"),
    Case("shell_export", f"set -x STRIPE_SECRET sk_live_{_g(AN, 24)}"),
    Case("shell_command", f"mysql -u root -p'{_pw()}' shop < dump.sql"),
    Case("shell_command", f"curl -u admin:{_pw()} https://jenkins.internal/api/json"),
    Case("shell_export", f"export CF_API_TOKEN={_g(URL, 40)}"),
    # .npmrc / package registries
    Case("npmrc", f"//npm.pkg.github.com/:_authToken=ghp_{_g(AN, 36)}"),
    Case("npmrc", f"_auth={b64('deploy:' + _pw())}\nalways-auth=true"),
    Case("npmrc", f"//registry.npmjs.org/:_authToken={_uuid()}"),
    Case("pypirc", f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{_g(URL, 60)}"),
    Case("docker_token", f"echo dckr_pat_{_g(URL, 27)} | docker login -u acme --password-stdin"),
    # YAML
    Case(
        "yaml",
        f"stripe:\n  publishable_key: pk_live_{_g(AN, 24)}\n  api_key: sk_live_{_g(AN, 24)}",
    ),
    Case("yaml", f"smtp:\n  host: smtp.mailgun.org\n  user: postmaster\n  password: {_pw()}"),
    Case("yaml", f"database:\n  host: db.internal\n  db_pass: {_pw()}"),
    Case("yaml", f"slack:\n  bot_token: xoxb-{_g(D, 12)}-{_g(AN, 24)}"),
    Case("yaml", f"sentry:\n  auth_token: {_g(HX, 64)}"),
    # TOML
    Case("toml", f'[database]\nurl = "db.internal"\npassword = "{_pw()}"'),
    Case("toml", f'[tool.poetry.http-basic.corp]\nusername = "ci"\npassword = "{_pw()}"'),
    Case("toml", f'[secrets]\nsession_secret = "{_g(AN, 48)}"'),
    # JSON
    Case("json", f'{{"client_id": "web-app", "client_secret": "{_g(URL, 40)}"}}'),
    Case("json", f'  "accessToken": "{_g(AN, 40)}",'),
    Case(
        "json",
        '{"type": "service_account", "private_key_id": "' + _g(HX, 40) + '",\n'
        ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASC'
        + _g(AN + "+/", 60)
        + '"}',
    ),
    Case("json", f'{{"aws_access_key_id": "AKIA{_g(_UP, 16)}", "region": "eu-west-1"}}'),
    Case(
        "json",
        f'"webhook": "https://hooks.slack.com/services/T{_g(_UP, 8)}/B{_g(_UP, 8)}/{_g(AN, 24)}"',
    ),
    # INI
    Case("ini", f"[client]\nuser=backup\npassword={_pw()}"),
    Case(
        "ini",
        f"[s3]\ntype = s3\naccess_key_id = AKIA{_g(_UP, 16)}\n"
        f"secret_access_key = {_g(AN + '+/', 40)}",
    ),
    Case("ini", f"[ldap]\nbind_dn = cn=admin,dc=acme,dc=org\nbind_pw = {_pw()}"),
    # docker-compose environment
    Case(
        "compose", f"    environment:\n      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD={_pw()}"
    ),
    Case(
        "compose",
        f"    environment:\n      MINIO_ROOT_USER: admin\n      MINIO_ROOT_PASSWORD: {_pw()}",
    ),
    Case("compose", f"      RABBITMQ_DEFAULT_PASS: {_pw()}"),
    # connection strings
    Case("connection_string", f"Host=db;Port=5432;Username=app;Password={_pw()};Database=orders"),
    Case("connection_string", f"mysql://root:{_pw()}@localhost:3306/shop"),
    Case(
        "connection_string",
        f"Server=tcp:acme.database.windows.net,1433;User ID=admin;Pwd={_pw()};Encrypt=True;",
    ),
    Case("connection_string", f"db.internal:5432:app:app:{_pw()}"),
    # Terraform
    Case(
        "terraform",
        f'resource "aws_db_instance" "main" {{\n  username = "admin"\n  password = "{_pw()}"\n}}',
    ),
    Case(
        "terraform",
        f'provider "azurerm" {{\n  client_secret = "{_g(AN, 8)}~{_g(URL, 31)}"\n}}',
    ),
    Case("terraform", f'datadog_api_key = "{_g(HX, 32)}"'),
    # Kubernetes secrets
    Case(
        "k8s_secret",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n"
        f"  password: {b64(_pw())}",
    ),
    Case("k8s_secret", f"kind: Secret\nstringData:\n  token: {_g(AN, 32)}"),
    # Java properties
    Case("java_properties", f"mail.smtp.password={_pw()}"),
    Case("java_properties", f"jdbc.password = {_pw()}"),
    Case("java_properties", f"app.jwt.secret={_g(AN, 44)}"),
    # PEM
    Case("pem", f"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTA{_g(AN, 40)}"),
    Case("pem", f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{_g(AN + '+/', 50)}"),
    # JWT
    Case("jwt", f"token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhcGkifQ.{_g(URL, 86)}"),
    Case(
        "jwt",
        "GET /callback?access_token=eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9."
        f"{_g(URL, 43)}&state=xyz",
    ),
    # cloud providers
    Case("aws", f"aws_session_token = IQoJb3JpZ2luX2VjE{_g(AN + '+/', 200)}"),
    Case("azure", f"AZURE_CLIENT_SECRET={_g(AN, 3)}8Q~{_g(URL, 34)}"),
    Case(
        "azure",
        "https://acme.blob.core.windows.net/c/f.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2030-01-01T00:00:00Z&sig={_g(AN, 43)}%3D",
    ),
    Case("gcp", f"GOOGLE_CLIENT_SECRET=GOCSPX-{_g(URL, 28)}"),
    Case("digitalocean", f"DIGITALOCEAN_TOKEN=dop_v1_{_g(HX, 64)}"),
    # SaaS vendors
    Case("stripe", f"STRIPE_WEBHOOK_SECRET=whsec_{_g(AN, 32)}"),
    Case("twilio", f"TWILIO_AUTH_TOKEN={_g(HX, 32)}"),
    Case("sendgrid", f'"apiKey": "SG.{_g(URL, 22)}.{_g(URL, 43)}"'),
    Case("mailgun", f"mailgun.api_key: key-{_g(HX, 32)}"),
    Case("shopify", f"SHOPIFY_ACCESS_TOKEN=shpat_{_g(HX, 32)}"),
    Case("gitlab", f"GITLAB_TOKEN: glpat-{_g(URL, 20)}"),
    Case("atlassian", f"JIRA_API_TOKEN=ATATT3xFfGF0{_g(URL, 180)}"),
    Case("datadog", f"DD_API_KEY={_g(HX, 32)}"),
    Case("newrelic", f"NEW_RELIC_API_KEY=NRAK-{_g(_UP, 27)}"),
    Case("linear", f"LINEAR_API_KEY=lin_api_{_g(AN, 40)}"),
    Case("notion", f'notion = Client(auth="secret_{_g(AN, 43)}")'),
    Case("vault", f"VAULT_TOKEN=hvs.{_g(URL, 24)}"),
    Case("anthropic", f'client = anthropic.Anthropic(api_key="sk-ant-api03-{_g(URL, 93)}")'),
    Case("openai", f'OPENAI_API_KEY="sk-proj-{_g(URL, 56)}"'),
    Case("huggingface", f'{{"hf_token": "hf_{_g(AN, 34)}"}}'),
    Case(
        "telegram",
        f"https://api.telegram.org/bot{_g(D, 10)}:AA{_g(URL, 33)}/sendMessage",
    ),
    # headers, credentials files, prose
    Case("basic_auth", f'proxy_set_header Authorization "Basic {b64("admin:" + _pw())}";'),
    Case("git_credentials", f"https://ci-bot:ghp_{_g(AN, 36)}@github.com"),
    Case("prose", f"The staging admin password is {_pw()} until we move it to the vault."),
)

CHECK_HARMLESS: tuple[Case, ...] = (
    Case("", f'{{"id": "{_uuid()}", "status": "active"}}'),
    Case("", f"2026-01-04 12:00:01 INFO request {_uuid()} finished in 12 ms"),
    Case("", f"Merge commit {_g(HX, 40)} into main"),
    Case("", f"--hash=sha256:{_g(HX, 64)}"),
    Case("", f'"integrity": "sha512-{_g(AN + "+/", 86)}=="'),
    Case("", f".icon {{ background: url(data:image/svg+xml;base64,{_g(AN + '+/', 160)}); }}"),
    Case("", f"![diagram](data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ{_g(AN + '+/', 240)})"),
    Case(
        "", f"@font-face {{ src: url(data:font/woff2;base64,d09GMgABAAAAA{_g(AN + '+/', 120)}); }}"
    ),
    Case(
        "",
        '{"AccessKeyId": "AKIAIOSFODNN7EXAMPLE", '
        '"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
    ),
    Case("", "password: changeme"),
    Case("", "      - POSTGRES_PASSWORD=changeme"),
    Case("", 'api_key = "${API_KEY}"'),
    Case("", "          password: ${{ secrets.DB_PASSWORD }}"),
    Case("", "export TOKEN=$(vault kv get -field=token secret/ci)"),
    Case("", 'password = os.getenv("DB_PASSWORD")'),
    Case("", "  password = var.db_password"),
    Case(
        "",
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
        "        name: db\n        key: password",
    ),
    Case("", "curl -H 'Authorization: Bearer <token>' https://api.example.com/v1/items"),
    Case("", "OPENAI_API_KEY=sk-..."),
    Case("", "STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx"),
    Case("", '"password": ""'),
    Case("", "password: null"),
    Case("", "secret: <REPLACE_ME>"),
    Case("", '"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"'),
    Case("", "secret_key_length = 32"),
    Case("", "token_type: bearer"),
    Case("", "password_min_length: 12"),
    Case("", "api_key_header: X-API-Key"),
    Case("", "export PATH=$HOME/.local/bin:$PATH"),
    Case("", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_g(AN + '+/', 43)} deploy@ci"),
    Case(
        "",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
        f"{_g(AN + '+/', 40)}",
    ),
    Case("", f"FROM python:3.11-slim@sha256:{_g(HX, 64)}"),
    Case("", f"golang.org/x/text v0.14.0 h1:{_g(AN + '+/', 43)}="),
    Case("", f'checksum = "{_g(HX, 64)}"'),
    Case("", "client_id: 1234567890-abcdefghij.apps.googleusercontent.com"),
    Case("", "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX"),
    Case("", 'db_password: "{{ vault_db_password }}"'),
    Case("", "spring.datasource.password=${DB_PASSWORD}"),
    Case("", "<password>${env.NEXUS_PASSWORD}</password>"),
    Case("", 'connectionString="Server=.;Database=crm;Integrated Security=true"'),
    Case("", "CACHE_URL=redis://localhost:6379/0"),
    Case("", "mongodb://<username>:<password>@cluster0.example.net/test"),
    Case("", "Watch https://www.youtube.com/watch?v=dQw4w9WgXcQ for the demo."),
    Case("", "GitHub personal access tokens start with the ghp_ prefix."),
    Case("", f'"request_id": "{_g(HX, 32)}"'),
    Case("", "arn:aws:iam::123456789012:role/deploy"),
    Case("", "x-api-key: YOUR_API_KEY"),
    Case("", "secret_string = jsonencode({ password = random_password.db.result })"),
    Case("", "The tokenizer splits the passphrase field into words."),
    Case("", "Store the API key in a secret manager, never in the repository."),
)
