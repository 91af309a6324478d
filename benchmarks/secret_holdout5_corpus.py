"""A fifth held-out secret set, written before the detector was rethought (issue 17, round 5).

Rounds 1-4 tuned rules on the previous held-out set and each left the next one near 60 %.
This set was committed alone, before any detector change of round 5, and is checked once at
the end. It avoids the syntaxes of the older sets where it can: tools not seen before
(``ipmitool``, ``mosquitto_pub``, ``sqlplus u/p@db``, ``lftp -u u,p``, ``xfreerdp /p:``,
``net use``, ``oc login``, ``cf login``, ``hdbsql``, ``wp --user_pass``), network gear
(Cisco, HAProxy, hostapd, MikroTik, slapd, WireGuard), Ansible, Maven, Gradle, rclone,
pgbouncer, WordPress, Spring defaults inside references, CSV, SQL rows, Markdown tables, HTML
forms, raw HTTP, Postman key/value pairs, logs, sixteen languages (C ``#define``, Rust, Ruby,
Elixir, Lua, R, Perl, Scala, Dart, Julia, PowerShell ...), vendor tokens not in the older
sets, TOTP seeds, mnemonics, JWK private members, and prose and chat in English, German,
French and Spanish. The look-alikes are encrypted blobs (Ansible Vault, SOPS, sealed
secrets, jasypt), password hashes, fingerprints, content addresses, trace and request ids,
public client ids and keys, references in six template languages, masked values, password
fields in code and schemas, CLI help text and prose about passwords in four languages.
Values come from a fixed seed in each format's shape; none is real.
"""

from __future__ import annotations

import json

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B32, B58, B64, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT5_HARMLESS", "HOLDOUT5_SECRETS"]

_values = Values(5005)
_rng = _values.rng
_g = _values.g
_WORDS = ("orbit", "velvet", "maple", "tunnel", "quartz", "ember", "falcon", "meadow", "nickel")


def _pw() -> str:
    """A human-chosen-looking password: a word, digits, one symbol and a few characters."""
    word = _rng.choice(["Sunset", "tiger", "Maple", "harbor", "Falcon", "river", "Omega", "plum"])
    return word + _g(D, 2) + _rng.choice("!#$%&*+-.@") + _g(AN, 4)


def _uuid() -> str:
    return f"{_g(HX, 8)}-{_g(HX, 4)}-4{_g(HX, 3)}-b{_g(HX, 3)}-{_g(HX, 12)}"


HOLDOUT5_SECRETS: tuple[Case, ...] = (
    # command-line tools not in the older sets
    Case("cli", f"ipmitool -I lanplus -H 10.1.2.3 -U ADMIN -P {_pw()} chassis power status"),
    Case("cli", f"mosquitto_pub -h mqtt.acme.io -u sensor -P '{_pw()}' -t temp -m 21"),
    Case("cli", f"sqlplus scott/{_pw()}@//db.acme.io:1521/ORCL"),
    Case("cli", f"lftp -u deploy,{_pw()} sftp://files.acme.io"),
    Case("cli", f"net use Z: \\\\fs01\\share /user:ACME\\jdoe {_pw()}"),
    Case("cli", f"xfreerdp /v:10.0.0.20 /u:admin /p:{_pw()} /cert:ignore"),
    Case("cli", f"pulumi config set --secret dbPassword {_pw()}"),
    Case("cli", f"echo '{_pw()}' | sudo -S apt-get update"),
    Case("cli", f"unzip -P {_pw()} export.zip -d out/"),
    Case("cli", f"wp user create bob bob@acme.io --role=editor --user_pass={_pw()}"),
    Case("cli", f"cf login -a https://api.run.acme.io -u ops -p {_pw()}"),
    Case(
        "cli",
        f"oc login https://api.ocp.acme.io:6443 -u kubeadmin -p "
        f"{_g(AN, 5)}-{_g(AN, 5)}-{_g(AN, 5)}-{_g(AN, 5)}",
    ),
    Case("cli", f'hdbsql -n hana01:30015 -u SYSTEM -p {_pw()} "SELECT * FROM DUMMY"'),
    Case("cli", f"vault login s.{_g(AN, 24)}"),
    Case("cli", f"ngrok config add-authtoken 2{_g(AN, 26)}_{_g(AN, 21)}"),
    Case(
        "cli",
        f"xcrun altool --upload-app -f App.ipa -u dev@acme.io -p "
        f"{_g(LO, 4)}-{_g(LO, 4)}-{_g(LO, 4)}-{_g(LO, 4)}",
    ),
    # network gear and daemons
    Case("cisco", f"username admin privilege 15 secret 0 {_pw()}"),
    Case("cisco", f"enable password {_pw()}"),
    Case("haproxy", f"userlist admins\n    user ops insecure-password {_pw()}"),
    Case("hostapd", f"interface=wlan0\nssid=Acme-Office\nwpa=2\nwpa_passphrase={_pw()}"),
    Case("mikrotik", f'/user add name=ops group=full password="{_pw()}"'),
    Case("slapd", f'rootdn "cn=admin,dc=acme,dc=io"\nrootpw {_pw()}'),
    Case(
        "wireguard", f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {b64(_rng.randbytes(32))}"
    ),
    Case(
        "wireguard",
        f"[Peer]\nPublicKey = {b64(_rng.randbytes(32))}\nPresharedKey = {b64(_rng.randbytes(32))}",
    ),
    Case("mosquitto", f"connection cloud\naddress mqtt.acme.io:8883\nremote_password {_pw()}"),
    # configuration files
    Case("ansible", f"web01 ansible_host=10.0.0.5 ansible_user=deploy ansible_password={_pw()}"),
    Case("ansible", f"ansible_become_pass: {_pw()}"),
    Case(
        "maven",
        f"<server>\n  <id>nexus</id>\n  <username>ci</username>\n"
        f"  <password>{_pw()}</password>\n</server>",
    ),
    Case("gradle", f"signing.keyId=24875D73\nsigning.password={_pw()}"),
    Case("gradle", f"ossrhPassword={_pw()}"),
    Case("rclone", f"[ftp]\ntype = ftp\nhost = ftp.acme.io\nuser = jdoe\npass = {_g(URL, 43)}"),
    Case("pgbouncer", f'"app" "{_pw()}"\n"report" "{_pw()}"'),
    Case("wordpress", f"define( 'AUTH_KEY', '{_g(AN + '!@#$%^&*()-_[]{}<>~+=,.;:/?|', 64)}' );"),
    Case("spring", f"spring.datasource.password=${{DB_PASSWORD:{_pw()}}}"),
    Case("odbc", f"DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=db;UID=etl;PWD={_pw()}"),
    Case("terraform", f'  administrator_login_password = "{_pw()}"'),
    Case(
        "dockerconfig",
        json.dumps({"auths": {"ghcr.io": {"auth": b64(f"acme:{_pw()}".encode())}}}),
    ),
    Case("kaggle", json.dumps({"username": "jdoe", "key": _g(HX, 32)})),
    Case("php_ini", f"mysqli.default_pw = {_pw()}"),
    Case("home_assistant", f"wifi_pass: {_pw()}"),
    Case("jenkins", f"<apiToken>11{_g(HX, 32)}</apiToken>"),
    Case("datadog", f"DD_APP_KEY={_g(HX, 40)}"),
    Case("algolia", f"ALGOLIA_ADMIN_KEY={_g(HX, 32)}"),
    Case("cloudflare", f"CLOUDFLARE_GLOBAL_KEY={_g(HX, 37)}"),
    Case("mnemonic", 'MNEMONIC="' + " ".join(_rng.choice(_WORDS) for _ in range(12)) + '"'),
    Case("solana", f"SOLANA_PRIVATE_KEY={_g(B58, 88)}"),
    # data files, documents and protocols
    Case("csv", f"username,password,role\njdoe,{_pw()},admin\nasmith,{_pw()},viewer"),
    Case("sql", f"INSERT INTO users (email, password) VALUES ('ops@acme.io', '{_pw()}');"),
    Case("sql", f"EXEC sp_addlogin 'etl', '{_pw()}';"),
    Case(
        "markdown", f"| service | user | password |\n|---|---|---|\n| grafana | admin | {_pw()} |"
    ),
    Case("html", f'<input type="password" name="pw" value="{_pw()}">'),
    Case(
        "http",
        f"POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n"
        f"username=admin&passwd={_pw()}",
    ),
    Case("postman", json.dumps({"key": "x-api-key", "value": _g(AN, 40), "type": "text"})),
    Case("log", f"2025-03-02T10:00:01Z INFO connecting to db01 with pwd={_pw()} (retry 2)"),
    Case("log", f"DEBUG headers={{'X-Auth-Token': '{_g(HX, 40)}', 'Accept': '*/*'}}"),
    Case("totp", f"otpauth://totp/Acme:jdoe?secret={_g(B32, 32)}&issuer=Acme"),
    Case(
        "jwk",
        json.dumps(
            {"kty": "EC", "crv": "P-256", "x": _g(URL, 43), "y": _g(URL, 43), "d": _g(URL, 43)}
        ),
    ),
    Case("minisign", f"untrusted comment: minisign encrypted secret key\nRWRTY0Iy{_g(B64, 150)}"),
    # source code in sixteen languages
    Case("c", f'#define MQTT_PASS "{_pw()}"'),
    Case("rust", f'let res = client.get(url).basic_auth("admin", Some("{_pw()}")).send()?;'),
    Case("ruby", f"Net::SSH.start('bastion', 'deploy', password: '{_pw()}')"),
    Case("elixir", f'config :shop, Shop.Repo, username: "postgres", password: "{_pw()}"'),
    Case("haskell", f'conn <- connectPostgreSQL "host=db user=app password={_pw()}"'),
    Case("lua", f'local ok, err = red:auth("{_pw()}")'),
    Case("r", f'Sys.setenv(OPENAI_KEY = "{_g(AN, 40)}")'),
    Case("perl", f'my $dbh = DBI->connect("dbi:Pg:dbname=app", "app", "{_pw()}");'),
    Case("scala", f'val cfg = ConfigFactory.parseString("db.password = {_pw()}")'),
    Case("dart", f'const String kMapsKey = "{_g(URL, 39)}";'),
    Case("julia", f'headers = ["X-Auth" => "{_g(AN, 32)}"]'),
    Case(
        "powershell",
        f'Invoke-RestMethod -Uri $u -Headers @{{ "PRIVATE-TOKEN" = "{_g(URL, 20)}" }}',
    ),
    Case("go", f'auth := smtp.PlainAuth("", "alerts@acme.io", "{_pw()}", "smtp.acme.io")'),
    Case("java", f'new UsernamePasswordAuthenticationToken("admin", "{_pw()}")'),
    Case("swift", f'config.httpAdditionalHeaders = ["Authorization": "Token {_g(HX, 40)}"]'),
    Case(
        "tsql",
        f"CREATE DATABASE SCOPED CREDENTIAL blob WITH IDENTITY = 'SAS', SECRET = '{_g(URL, 60)}';",
    ),
    # vendor tokens not in the older sets
    Case("xai", f"XAI_KEY=xai-{_g(AN, 80)}"),
    Case("perplexity", f'client = OpenAI(api_key="pplx-{_g(AN, 48)}", base_url=PPLX)'),
    Case("doppler", f"doppler run --token dp.st.prd.{_g(AN, 43)} -- ./start.sh"),
    Case("flyio", f'FLY_API_TOKEN="FlyV1 fm2_{_g(B64, 120)}"'),
    Case("prefect", f"prefect cloud login -k pnu_{_g(AN, 36)}"),
    Case("airtable", f"Authorization: Bearer pat{_g(AN, 14)}.{_g(HX, 64)}"),
    Case("buildkite", f"BUILDKITE_API_TOKEN=bkua_{_g(HX, 40)}"),
    Case("sonarqube", f"sonar-scanner -Dsonar.token=squ_{_g(HX, 40)}"),
    Case("onepassword", f"OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ{_g(B64, 200)}"),
    Case("bitwarden", f"BWS_ACCESS_TOKEN=0.{_uuid()}.{_g(AN, 30)}:{_g(B64, 22)}=="),
    Case("posthog", f"posthog.personal_api_key = 'phx_{_g(AN, 43)}'"),
    Case("braintree", f"access_token$production${_g(LO + D, 16)}${_g(HX, 32)}"),
    Case("square", f"oauth_secret: sq0csp-{_g(URL, 43)}"),
    Case(
        "alibaba",
        f"aliyun configure set --access-key-id LTAI{_g(AN, 20)} --access-key-secret {_g(AN, 30)}",
    ),
    Case("mapbox", f"MAPBOX_DOWNLOADS_TOKEN=sk.eyJ1IjoiYWNtZSIsImEiOi{_g(URL, 30)}.{_g(URL, 22)}"),
    Case("discord", f"client.run('MT{_g(AN, 24)}.{_g(URL, 6)}.{_g(URL, 38)}')"),
    Case("dropbox", f"dbx = dropbox.Dropbox('sl.{_g(URL, 135)}')"),
    Case("mattermost", f"curl -X POST -d @msg.json https://chat.acme.io/hooks/{_g(LO + D, 26)}"),
    # chat, mail and prose in four languages
    Case("prose_de", f"Das WLAN-Passwort lautet {_pw()} (gilt bis Ende März)."),
    Case(
        "prose_fr", f"Le mot de passe du serveur de test est {_pw()}, merci de ne pas le diffuser."
    ),
    Case("prose_es", f"la contraseña de la base de staging es {_pw()}"),
    Case(
        "chat", f"[10:42] alice: can you send me the db creds?\n[10:43] bob: user app, pw {_pw()}"
    ),
    Case("chat", f"wifi: AcmeGuest / {_pw()}"),
    Case(
        "mail",
        f"Hi Sam,\n\nGmail app password for the scanner: "
        f"{_g(LO, 4)} {_g(LO, 4)} {_g(LO, 4)} {_g(LO, 4)}\n\nThanks",
    ),
    Case("prose", f"ssh in as root with {_pw()} and restart nginx"),
    Case("prose", f"Passphrase for the release signing key is `{_pw()}`."),
    Case("prose", f"Credentials\nUser: svc_backup\nPassword -> {_pw()}"),
    Case("prose", f"Rotated the API key this morning, new one → {_g(AN, 32)}"),
)

HOLDOUT5_HARMLESS: tuple[Case, ...] = (
    # encrypted or hashed values
    Case("", f"$ANSIBLE_VAULT;1.1;AES256\n{_g(HX, 80)}\n{_g(HX, 80)}"),
    Case(
        "",
        f"password: ENC[AES256_GCM,data:{_g(B64, 16)},iv:{_g(B64, 43)}=,"
        f"tag:{_g(B64, 22)}==,type:str]",
    ),
    Case("", f"  encryptedData:\n    password: AgB{_g(B64, 300)}"),
    Case("", f"spring.datasource.password=ENC({_g(B64, 44)})"),
    Case(
        "",
        f"root:$6$rounds=5000${_g(B64.replace('+', '.'), 16)}${_g(AN + './', 86)}"
        ":19700:0:99999:7:::",
    ),
    Case("", f"admin:$2y$10${_g(AN + './', 53)}"),
    Case("", f"HashedControlPassword 16:{_g(HX.upper(), 58)}"),
    Case("", f'password_hash = "$argon2id$v=19$m=65536,t=3,p=4${_g(B64, 22)}${_g(B64, 43)}"'),
    # fingerprints, content addresses, identifiers
    Case("", f"ED25519 key fingerprint is SHA256:{_g(B64, 43)}."),
    Case("", ":".join(_g(HX.upper(), 2) for _ in range(20)) + "  (SHA-1, upload key)"),
    Case("", f'gpg: key {_g(HX.upper(), 16)}: public key "Release <rel@acme.io>" imported'),
    Case("", f"ipfs://bafybei{_g(B32.lower(), 52)}"),
    Case("", f"magnet:?xt=urn:btih:{_g(HX, 40)}&dn=ubuntu-24.04.iso"),
    Case("", f"http://{_g(B32.lower(), 56)}.onion/"),
    Case("", f"traceparent: 00-{_g(HX, 32)}-{_g(HX, 16)}-01"),
    Case("", f"x-amz-request-id: {_g(UP + D, 16)}\nx-amz-id-2: {_g(B64, 76)}="),
    Case("", f"arn:aws:iam::{_g(D, 12)}:role/ci-deploy"),
    Case("", f'subscription_id = "{_uuid()}"\ntenant_id = "{_uuid()}"'),
    Case("", f'uid: {_uuid()}\nresourceVersion: "{_g(D, 7)}"'),
    Case("", f"/nix/store/{_g(B32.lower(), 32)}-python3-3.11.9"),
    Case("", f"requests==2.32.3 --hash=sha256:{_g(HX, 64)}"),
    Case("", f"https://www.youtube.com/watch?v={_g(URL, 11)}"),
    Case("", f"commit {_g(HX, 40)}\nAuthor: Jo <jo@acme.io>"),
    Case("", f'  resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{_g(HX, 40)}"'),
    Case("", f"![diagram](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{_g(B64, 120)})"),
    # public by design
    Case("", f"client_id: {_g(D, 12)}-{_g(LO + D, 32)}.apps.googleusercontent.com"),
    Case("", f"posthog.init('phc_{_g(AN, 43)}', {{ api_host: 'https://eu.posthog.com' }})"),
    Case("", f"SENTRY_DSN=https://{_g(HX, 32)}@o{_g(D, 6)}.ingest.sentry.io/{_g(D, 7)}"),
    Case("", f"gtag('config', 'G-{_g(UP + D, 10)}');"),
    Case("", f"PublicKey = {b64(_rng.randbytes(32))}\nEndpoint = vpn.acme.io:51820"),
    Case("", json.dumps({"kty": "EC", "crv": "P-256", "x": _g(URL, 43), "y": _g(URL, 43)})),
    Case("", f"untrusted comment: minisign public key 4F1A\nRWQ{_g(B64, 53)}"),
    # references and templates
    Case("", "password: !secret mqtt_password"),
    Case("", 'password: "{{ vault_db_password }}"'),
    Case("", "password: <%= ENV['DB_PASSWORD'] %>"),
    Case("", "PWD={{ .Values.db.password | quote }}"),
    Case("", "ansible_password: \"{{ lookup('env', 'WIN_PASS') }}\""),
    Case("", "export DB_PASSWORD=$(vault kv get -field=password secret/prod/db)"),
    Case("", "valueFrom:\n  secretKeyRef:\n    name: db\n    key: password"),
    Case("", 'variable "db_password" {\n  type      = string\n  sensitive = true\n}'),
    Case("", "  master_password = random_password.db.result"),
    Case("", 'mysql -u app -p"$(cat /run/secrets/db_password)" app'),
    Case("", "sshpass -f ~/.ssh/pw.txt ssh deploy@bastion"),
    # masked, prompted, generated
    Case("", "password=********\ntoken=[REDACTED]\napi_key=<hidden>"),
    Case("", "Enter PEM pass phrase:\nVerifying - Enter PEM pass phrase:"),
    Case("", "secret = secrets.token_urlsafe(32)"),
    Case("", 'password = getpass.getpass("Password for %s: " % user)'),
    Case("", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")'),
    # password fields, schemas, help text
    Case("", "def login(user: str, password: str, otp: str | None = None) -> Session:"),
    Case("", "password_hash VARCHAR(255) NOT NULL,\nreset_token_expires_at TIMESTAMP NULL"),
    Case("", "  -p, --password TEXT   Password for the registry [env var: REG_PASSWORD]"),
    Case("", "minimum_password_length = 12\npassword_history = 5\nmax_token_age_days = 30"),
    Case("", '"forgot_password": "Passwort vergessen?", "reset_password": "Zurücksetzen"'),
    Case("", ".password-strength-meter { height: 4px; }"),
    Case("", 'hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000)'),
    Case("", 'FATAL:  password authentication failed for user "app"'),
    Case(
        "",
        'AUTH_PASSWORD_VALIDATORS = [\n    {"NAME": '
        '"django.contrib.auth.password_validation'
        '.MinimumLengthValidator"},\n]',
    ),
    # prose and chat about passwords, in four languages
    Case("", "Das Passwort wird per SMS verschickt und muss beim ersten Login geändert werden."),
    Case("", "Le mot de passe doit contenir au moins douze caractères."),
    Case("", "La contraseña se guarda en el gestor de secretos del equipo."),
    Case("", "[09:12] bob: what's the wifi password?\n[09:13] alice: it's on the whiteboard"),
    Case("", "Rotate the API key every 90 days and never paste it into tickets."),
    Case("", "The signing key lives in the HSM; ask ops for access."),
    Case("", "Use a passphrase of at least five random words, e.g. from a diceware list."),
)
