"""A third held-out secret set, written before the detector was tuned for it (issue 17).

Once the second held-out set (:mod:`benchmarks.secret_check_corpus`) had been looked at, it
became a tuning set like :mod:`benchmarks.secret_corpus`. This set is for checking only: it
was committed before any detector change of that round. Its syntaxes are ones the other sets
do not use: CI files (GitHub Actions, GitLab), Helm values, systemd units, ``.netrc``, git
credential URLs, Ansible variables, PHP / Ruby / Go / Rust / Java / C# / PowerShell source,
SQL ``IDENTIFIED BY``, LDAP binds, SMTP, Redis, Kafka JAAS, Docker and Composer auth files,
WireGuard and age keys, vendor tokens, and passwords in prose. The look-alikes are UUIDs,
digests, base64 payloads, public keys and identifiers, documentation placeholders, masked
values and references. Values come from a fixed seed in each format's shape; none is real.
"""

from __future__ import annotations

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B64, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT3_HARMLESS", "HOLDOUT3_SECRETS"]

_values = Values(3003)
_rng = _values.rng
_g = _values.g
_WP_SALT = AN + "!@#$%^&*()-_[]{}<>~`+=,.;:/?|"  # WordPress salts


def _pw() -> str:
    """A human-chosen-looking password: word-ish part, digits and one symbol."""
    word = _rng.choice(["Summer", "blue", "Tiger", "orange", "Falcon", "river", "Maple", "kite"])
    return word + _g(D, 2) + _rng.choice("!@#$%^&*?") + _g(AN, 5)


def _uuid() -> str:
    return f"{_g(HX, 8)}-{_g(HX, 4)}-4{_g(HX, 3)}-8{_g(HX, 3)}-{_g(HX, 12)}"


HOLDOUT3_SECRETS: tuple[Case, ...] = (
    # CI: GitHub Actions, GitLab
    Case(
        "github_actions",
        "      - uses: docker/login-action@v3\n        with:\n          username: acmebot\n"
        f"          password: {_pw()}",
    ),
    Case(
        "github_actions",
        f"    env:\n      SONAR_TOKEN: squ_{_g(HX, 40)}\n      SONAR_HOST_URL: https://sonar.acme.io",
    ),
    Case("gitlab_ci", f'variables:\n  DEPLOY_TOKEN: "gldt-{_g(URL, 20)}"\n  STAGE: prod'),
    Case(
        "gitlab_ci",
        f"  script:\n    - docker login -u gitlab-ci-token -p {_pw()} registry.gitlab.com",
    ),
    Case("gitlab_ci", f"gitlab-runner register --token glrt-{_g(URL, 20)} --url https://gl.acme"),
    # Helm values
    Case(
        "helm_values",
        f"postgresql:\n  auth:\n    username: app\n    postgresPassword: {_pw()}\n"
        "    database: app",
    ),
    Case(
        "helm_values",
        f'mariadb:\n  auth:\n    rootPassword: "{_pw()}"\n    replicationPassword: "{_pw()}"',
    ),
    Case("helm_values", f"grafana:\n  adminUser: admin\n  adminPassword: {_pw()}"),
    # systemd units
    Case("systemd", f'[Service]\nEnvironment="API_SECRET={_g(AN, 32)}"\nExecStart=/usr/bin/api'),
    Case("systemd", f"[Service]\nEnvironment=SMTP_PASS={_pw()} SMTP_USER=alerts"),
    # .netrc, git credentials, ssh
    Case("netrc", f"machine ftp.acme-backup.net\n    login backup\n    password {_pw()}\n"),
    Case("git_credentials", f"https://jdoe:{_pw()}@bitbucket.org"),
    Case("git_credentials", f"https://oauth2:glpat-{_g(URL, 20)}@gitlab.acme.io"),
    Case("ssh", f"sshpass -p '{_pw()}' ssh deploy@10.20.0.7 'systemctl restart api'"),
    # Ansible
    Case("ansible", f"ansible_become_password: {_pw()}\nansible_user: deploy"),
    Case("ansible", f"[web]\nweb01 ansible_host=10.0.0.4 ansible_ssh_pass={_pw()}"),
    # PHP
    Case("php", f"define( 'DB_PASSWORD', '{_pw()}' );"),
    Case(
        "php",
        f"define( 'AUTH_KEY',         '{_g(_WP_SALT, 64)}' );",
    ),
    Case("php", f'$db_pass = "{_pw()}";'),
    # Ruby
    Case("ruby", f'config.secret_key_base = "{_g(HX, 128)}"'),
    Case("ruby", f"Braintree::Configuration.private_key = '{_g(HX, 32)}'"),
    # Go
    Case("go", f'const apiSecret = "{_g(AN, 32)}"'),
    Case("go", f'var dbPassword = "{_pw()}"'),
    # Rust
    Case("rust", f'const API_TOKEN: &str = "{_g(AN, 40)}";'),
    # Java / C# / PowerShell / Python / JS source
    Case("java", f'private static final String PASSWORD = "{_pw()}";'),
    Case(
        "csharp",
        f'var creds = new NetworkCredential("mailer@acme.io", "{_pw()}");',
    ),
    Case("powershell", f'$env:AZURE_CLIENT_SECRET = "{_g(URL, 40)}"'),
    Case(
        "powershell",
        f'$secure = ConvertTo-SecureString "{_pw()}" -AsPlainText -Force',
    ),
    Case(
        "python",
        f'conn = psycopg2.connect(host="db", user="app", password="{_pw()}", dbname="app")',
    ),
    Case("python", f'os.environ["MAILGUN_SECRET"] = "{_g(HX, 32)}-{_g(HX, 8)}-{_g(HX, 8)}"'),
    Case("javascript", f"db.createUser({{ user: 'app', pwd: '{_pw()}', roles: ['readWrite'] }})"),
    Case("javascript", f"mongoose.connect('mongodb://admin:{_pw()}@mongo:27017/app')"),
    # SQL
    Case("sql", f"CREATE USER 'report'@'%' IDENTIFIED BY '{_pw()}';"),
    Case("sql", f"ALTER ROLE app WITH LOGIN PASSWORD '{_pw()}';"),
    Case("sql", f"ALTER USER scott IDENTIFIED BY {_g(AN, 10)}2;"),
    # LDAP
    Case(
        "ldap",
        f'ldapsearch -x -H ldap://ldap.acme.io -D "cn=admin,dc=acme,dc=io" -w {_pw()} '
        '-b "dc=acme,dc=io"',
    ),
    Case(
        "ldap",
        f"[domain/acme]\nldap_default_authtok_type = password\nldap_default_authtok = {_pw()}",
    ),
    # SMTP
    Case("smtp", f"EMAIL_HOST_PASSWORD = '{_pw()}'"),
    Case("smtp", f"[smtp.gmail.com]:587 alerts@acme.io:{_g(LO, 16)}"),
    Case(
        "smtp",
        f"spring:\n  mail:\n    host: smtp.office365.com\n    username: noreply@acme.io\n"
        f"    password: {_pw()}",
    ),
    # Redis
    Case("redis", f"requirepass {_pw()}\nmaxmemory 2gb"),
    Case("redis", f"redis-cli -h cache.acme.io -a {_pw()} ping"),
    Case("redis", f"REDIS_URL=rediss://:{_g(AN, 32)}@cache.acme.io:6380/0"),
    # messaging, data platforms
    Case(
        "kafka_jaas",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="app" password="{_pw()}";',
    ),
    Case("rabbitmq", f"rabbitmqctl add_user orders {_pw()}"),
    Case("airflow", f"AIRFLOW_CONN_WAREHOUSE='snowflake://etl:{_pw()}@acme/analytics'"),
    Case("jdbc", f"jdbc:mysql://db.acme.io:3306/shop?user=app&password={_pw()}&useSSL=true"),
    Case("snowflake", f"private_key_passphrase: {_pw()}"),
    Case("spring", f"server.ssl.key-store-password={_pw()}"),
    Case("gradle", f"mavenCentralPassword={_pw()}\nsigning.keyId=24875D73"),
    # package registry auth files
    Case(
        "docker_config",
        '{"auths": {"registry.acme.io": {"auth": "' + b64(f"ci:{_pw()}".encode()) + '"}}}',
    ),
    Case(
        "composer_auth",
        '{"http-basic": {"repo.packagist.com": {"username": "token", "password": "'
        + _g(HX, 40)
        + '"}}}',
    ),
    Case(
        "nuget",
        "nuget sources add -Name corp -Source https://nuget.acme.io -Username ci "
        f"-Password {_pw()}",
    ),
    Case("dockerfile", f"ENV DB_PASS {_pw()}"),
    Case("cmd", f"set DB_PASSWORD={_pw()}"),
    # key files
    Case("wireguard", f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {_g(B64, 43)}="),
    Case("age", f"# created: 2026-01-02\nAGE-SECRET-KEY-1{_g(UP + D, 58)}"),
    Case(
        "putty",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{_g(B64, 43)}\nPrivate-Lines: 1\n"
        f"AAAAI{_g(B64, 43)}",
    ),
    Case(
        "openvpn",
        f"-----BEGIN OpenVPN Static key V1-----\n{_g(HX, 32)}\n{_g(HX, 32)}",
    ),
    Case(
        "kubeconfig",
        "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n"
        f"    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo{_g(B64, 80)}",
    ),
    # vendor tokens
    Case("slack", f"SLACK_APP_TOKEN=xapp-1-A{_g(UP + D, 10)}-{_g(D, 13)}-{_g(HX, 64)}"),
    Case("slack", f"SLACK_SIGNING_SECRET={_g(HX, 32)}"),
    Case("twilio", f"twilio:\n  account_sid: AC{_g(HX, 32)}\n  auth_token: {_g(HX, 32)}"),
    Case("sendgrid", f"sg = SendGridAPIClient('SG.{_g(URL, 22)}.{_g(URL, 43)}')"),
    Case(
        "azure",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={_g(B64, 43)}=",
    ),
    Case("azure", f"AZURE_DEVOPS_EXT_PAT={_g(LO + '234567', 52)}"),
    Case("gcp", f'  "refresh_token": "1//0g{_g(URL, 97)}",'),
    Case("vault", f"vault login token=s.{_g(AN, 24)}"),
    Case(
        "databricks",
        f"[DEFAULT]\nhost = https://adb-123.azuredatabricks.net\ntoken = dapi{_g(HX, 32)}-2",
    ),
    Case("shopify", f"SHOPIFY_API_SECRET=shpss_{_g(HX, 32)}"),
    Case("discord", f"client.login('{_g('MN', 1)}{_g(AN, 25)}.{_g(URL, 6)}.{_g(URL, 38)}');"),
    Case(
        "discord",
        f"https://discord.com/api/webhooks/{_g(D, 19)}/{_g(URL, 68)}",
    ),
    Case(
        "telegram",
        f'app = Application.builder().token("{_g(D, 10)}:AA{_g(URL, 33)}").build()',
    ),
    Case("heroku", f"HEROKU_API_KEY={_uuid()}"),
    Case("cloudflare", f"X-Auth-Key: {_g(HX, 37)}"),
    Case("mapbox", f"MAPBOX_SECRET_TOKEN=sk.eyJ1IjoiYWNtZSIsImEiOiJ{_g(URL, 20)}.{_g(URL, 22)}"),
    Case("okta", f"Authorization: SSWS 00{_g(URL, 40)}"),
    Case("pagerduty", f"Authorization: Token token={_g(URL, 20)}"),
    Case("elastic", f"Authorization: ApiKey {b64((_g(URL, 20) + ':' + _g(URL, 22)).encode())}"),
    Case("algolia", f"ALGOLIA_ADMIN_API_KEY={_g(HX, 32)}"),
    Case("firebase", f"FCM_SERVER_KEY=AAAA{_g(URL, 7)}:APA91b{_g(URL, 134)}"),
    Case("dropbox", f"DROPBOX_ACCESS_TOKEN=sl.B{_g(URL, 135)}"),
    Case("asana", f"ASANA_TOKEN=1/{_g(D, 16)}:{_g(HX, 32)}"),
    Case("pulumi", f"PULUMI_ACCESS_TOKEN=pul-{_g(HX, 40)}"),
    Case("doppler", f"DOPPLER_TOKEN=dp.st.prd.{_g(AN, 40)}"),
    Case("circleci", f"CIRCLE_TOKEN=CCIPAT_{_g(AN, 22)}_{_g(HX, 40)}"),
    Case(
        "openweather", f"https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid={_g(HX, 32)}"
    ),
    # passwords in prose
    Case("prose", f"Log in to the router with admin / {_pw()} and change it afterwards."),
    Case("prose", f"Your temporary password is: {_pw()}"),
    Case("prose", f"fyi the wifi key for the office guest network is {_pw()}"),
)

HOLDOUT3_HARMLESS: tuple[Case, ...] = (
    # references, masked values, placeholders
    Case("", "        with:\n          token: ${{ github.token }}"),
    Case("", "    - docker login -u $CI_REGISTRY_USER -p $CI_REGISTRY_PASSWORD $CI_REGISTRY"),
    Case("", "  password: {{ .Values.auth.password | b64enc | quote }}"),
    Case("", "auth:\n  existingSecret: pg-credentials\n  secretKeys:\n    adminPasswordKey: pw"),
    Case("", "[Service]\nEnvironmentFile=/etc/acme/secrets.env"),
    Case("", "machine example.com login USERNAME password PASSWORD"),
    Case("", "Host github.com\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes"),
    Case("", 'ansible_become_password: "{{ vault_become_pass }}"'),
    Case("", "db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  " + _g(HX, 64)),
    Case("", "define( 'DB_PASSWORD', getenv('WORDPRESS_DB_PASSWORD') );"),
    Case("", "secret = Rails.application.credentials.dig(:aws, :secret_access_key)"),
    Case("", 'let token = std::env::var("API_TOKEN").expect("API_TOKEN is not set");'),
    Case("", "const passwordMinLen = 12"),
    Case("", 'var ErrBadPassword = errors.New("invalid password")'),
    Case("", "CREATE USER 'app'@'%' IDENTIFIED BY '<password>';"),
    Case("", "SELECT id, password_hash FROM users WHERE email = $1;"),
    Case("", f"password_hash: $2b$12${_g(AN + './', 53)}"),
    Case("", 'ldapsearch -x -D "cn=admin,dc=example,dc=org" -W -b "dc=example,dc=org"'),
    Case("", "smtp_auth_password_file: /run/secrets/smtp_password"),
    Case("", "# requirepass foobared"),
    Case("", "REDIS_URL=redis://redis:6379/1"),
    Case("", "SLACK_BOT_TOKEN=xoxb-your-bot-token"),
    Case("", "TWILIO_ACCOUNT_SID=ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
    Case("", "export AWS_SECRET_ACCESS_KEY=$(aws configure get aws_secret_access_key)"),
    Case("", "DB_PASSWORD=$(cat /run/secrets/db_password)"),
    Case("", 'curl -H "Authorization: Bearer ${TOKEN}" https://api.acme.io/v1/me'),
    Case("", "2026-03-01T10:00:00Z  DB_PASSWORD=***  deploy started"),
    Case("", "Password: ****************"),
    Case("", "admin_password: change_me"),
    Case("", 'api_key: "{{ .Env.API_KEY }}"'),
    Case("", "password: <%= ENV['SMTP_PASSWORD'] %>"),
    Case("", "password = %(DB_PASSWORD)s"),
    # policy and prose
    Case("", "Passwords need 1 upper-case letter, 1 digit and 1 symbol such as !@#$."),
    Case(
        "",
        'resource "aws_iam_account_password_policy" "p" {\n  minimum_password_length = 14\n'
        "  password_reuse_prevention = 24\n}",
    ),
    Case("", "If you forgot your password, use the reset link in the e-mail we sent you."),
    Case("", '"forgot_password": "Forgot your password?", "password_label": "Mot de passe"'),
    # identifiers, digests, payloads, public material
    Case("", f"trace_id={_uuid()} span_id={_g(HX, 16)}"),
    Case("", f'metadata:\n  uid: {_uuid()}\n  resourceVersion: "48213"'),
    Case("", f"This reverts commit {_g(HX, 40)}."),
    Case("", f'{{"sha": "{_g(HX, 40)}", "node_id": "C_kwDOA{_g(AN, 21)}"}}'),
    Case("", f"SHA256 (acme-2.4.1.tar.gz) = {_g(HX, 64)}"),
    Case("", f'<img alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAA{_g(B64, 60)}">'),
    Case("", f"Content-Transfer-Encoding: base64\n\nJVBERi0xLjQKJcfsj6IK{_g(B64, 56)}"),
    Case("", f"[Peer]\nPublicKey = {_g(B64, 43)}=\nAllowedIPs = 10.8.0.0/24"),
    Case("", f"age recipient: age1{_g(LO + D, 58)}"),
    Case("", f"MAPBOX_PUBLIC_TOKEN=pk.eyJ1IjoiYWNtZSIsImEiOiJ{_g(URL, 20)}.{_g(URL, 22)}"),
    Case("", f"STRIPE_PUBLISHABLE_KEY=pk_live_{_g(AN, 24)}"),
    Case("", f'<div class="g-recaptcha" data-sitekey="6Lc{_g(URL, 37)}"></div>'),
    Case("", f"GITHUB_CLIENT_ID=Iv1.{_g(HX, 16)}"),
    Case("", f"arn:aws:kms:eu-west-1:123456789012:key/{_uuid()}"),
    Case("", f"customer cus_{_g(AN, 14)} paid with pi_{_g(AN, 24)}"),
    Case("", 'var b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";'),
    Case("", "jwt:\n  algorithm: HS256\n  expires_in: 3600"),
    Case("", "secret_name: prod/db/credentials"),
    Case("", "tls:\n  - hosts: [api.acme.io]\n    secretName: api-acme-tls"),
    Case("", "automountServiceAccountToken: false"),
    Case("", "token_endpoint: https://oauth2.googleapis.com/token"),
    Case("", "gpg --recv-keys 0x3AA5C34371567BD2"),
)
