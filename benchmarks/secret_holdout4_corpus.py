"""A fourth held-out secret set, written before the detector was tuned for it (issue 17).

Held-out 3 (:mod:`benchmarks.secret_holdout3_corpus`) became a tuning set in round 4; this set
is the check. It was committed before any detector change of that round. Its syntaxes differ
from the other sets where they can: command-line tools (``sqlcmd -P``, ``smbclient -U u%p``,
``openssl -passout pass:``, ``htpasswd -b``, ``7z -p``, ``keytool -storepass``, ``az login
-p``, ``kubectl --from-literal``, ``helm --set``), Wi-Fi, VPN, RADIUS and keepalived configs,
mail clients (``msmtprc``, ``fetchmailrc``), Laravel, Jupyter, Django, source code in nine
languages (positional arguments included), DSNs without a scheme, environment variables set
in code and containers, crypto-wallet keys, vendor tokens not used in the older sets, and
passwords in chat messages. The look-alikes are public keys and certificates, digests and
lock-file checksums, identifiers, addresses, prompts for a password (no value), references,
placeholders, masked values and prose about passwords. Values come from a fixed seed in each
format's shape; none is real.
"""

from __future__ import annotations

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B58, B64, BECH32, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT4_HARMLESS", "HOLDOUT4_SECRETS"]

_values = Values(4004)
_rng = _values.rng
_g = _values.g


def _pw() -> str:
    """A human-chosen-looking password: a word, digits, one symbol and a few characters."""
    word = _rng.choice(["Winter", "green", "Panda", "copper", "Harbor", "lemon", "Rocket", "Cedar"])
    return word + _g(D, 2) + _rng.choice("!#%&*+?") + _g(AN, 4)


def _uuid() -> str:
    return f"{_g(HX, 8)}-{_g(HX, 4)}-4{_g(HX, 3)}-a{_g(HX, 3)}-{_g(HX, 12)}"


HOLDOUT4_SECRETS: tuple[Case, ...] = (
    # command-line tools
    Case("cli", f"sqlcmd -S db01,1433 -U sa -P '{_pw()}' -Q \"SELECT @@VERSION\""),
    Case("cli", f"smbclient //fs01/share -U 'ACME\\backup%{_pw()}' -c 'ls'"),
    Case(
        "cli",
        f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out a.p12 -passout pass:{_pw()}",
    ),
    Case("cli", f"htpasswd -b -c /etc/nginx/.htpasswd admin {_pw()}"),
    Case("cli", f"7z a -p{_pw()} -mhe=on backup.7z /srv/data"),
    Case("cli", f"keytool -importcert -file ca.crt -keystore truststore.jks -storepass {_pw()}"),
    Case("cli", f"az login --service-principal -u {_uuid()} -p {_g(URL, 34)}~ --tenant acme"),
    Case(
        "cli",
        f"kubectl create secret generic db --from-literal=username=app "
        f"--from-literal=password='{_pw()}'",
    ),
    Case(
        "cli", f"helm upgrade --install pg bitnami/postgresql --set auth.postgresPassword={_pw()}"
    ),
    Case("cli", f"wget --user=deploy --password='{_pw()}' https://files.acme.io/release.tgz"),
    Case("cli", f"mongosh \"mongodb+srv://cluster0.acme.mongodb.net/\" -u admin -p '{_pw()}'"),
    Case("cli", f"zip -P {_pw()} payroll.zip payroll.xlsx"),
    Case("cli", f"gpg --batch --passphrase '{_pw()}' -d secrets.tar.gpg"),
    Case("cli", f"PGPASSWORD='{_pw()}' pg_dump -h db -U app app > dump.sql"),
    Case("cli", f"influx -username admin -password {_pw()} -execute 'SHOW DATABASES'"),
    Case("cli", f"ssh-keygen -t ed25519 -N '{_pw()}' -f ~/.ssh/deploy"),
    # network, VPN, Wi-Fi, mail configs
    Case("wifi", f'network={{\n    ssid="AcmeCorp"\n    psk="{_pw()}"\n}}'),
    Case("wifi", f"[wifi-security]\nkey-mgmt=wpa-psk\npsk={_pw()}"),
    Case("vpn", f': PSK "{_g(AN, 32)}"'),
    Case("vpn", f"# client  server  secret  IP\nvpnuser  *  {_pw()}  *"),
    Case("radius", f"client 10.0.0.0/24 {{\n    secret = {_pw()}\n    shortname = office\n}}"),
    Case(
        "keepalived",
        f"vrrp_instance VI_1 {{\n    authentication {{\n        auth_type PASS\n"
        f"        auth_pass {_g(AN, 8)}\n    }}\n}}",
    ),
    Case(
        "bind",
        f'key "transfer-key" {{\n    algorithm hmac-sha256;\n    secret "{_g(B64, 43)}=";\n}};',
    ),
    Case("msmtp", f"account work\nhost smtp.acme.io\nuser jdoe@acme.io\npassword {_pw()}"),
    Case("fetchmail", f'poll imap.acme.io protocol IMAP user "jdoe" password "{_pw()}"'),
    Case("mutt", f'set smtp_url = "smtps://jdoe@smtp.acme.io"\nset smtp_pass = "{_pw()}"'),
    Case("rsync", f"backup:{_pw()}"),
    Case("snmp", f"snmp-server community {_g(AN, 12)} RO"),
    # frameworks and app configs
    Case("laravel", f"APP_KEY=base64:{b64(_rng.randbytes(32))}"),
    Case("django", f"SECRET_KEY = 'django-insecure-{_g(LO + D + '!@#$%^&*(-_=+)', 50)}'"),
    Case("jupyter", f"c.ServerApp.token = '{_g(HX, 48)}'"),
    Case("rails", f"production:\n  secret_key_base: {_g(HX, 128)}"),
    Case("symfony", f"APP_SECRET={_g(HX, 32)}"),
    Case("npmrc", f"//npm.acme.io/:_auth={b64(f'ci:{_pw()}'.encode())}"),
    Case("cargo", f'[registry]\ntoken = "cio{_g(AN, 32)}"'),
    Case("nuget", f'<add key="ClearTextPassword" value="{_pw()}" />'),
    Case("k8s_secret", f"kind: Secret\nstringData:\n  DATABASE_PASSWORD: {_pw()}"),
    Case("compose", f"    environment:\n      - MYSQL_ROOT_PASSWORD={_pw()}"),
    Case("compose", f"    environment:\n      MINIO_ROOT_PASSWORD: {_pw()}"),
    Case("dockerfile", f"ARG NPM_TOKEN={_g(URL, 36)}"),
    # source code
    Case("python", f'r = requests.get(url, auth=("svc-report", "{_pw()}"))'),
    Case("python", f'server.login("alerts@acme.io", "{_pw()}")'),
    Case("python", f'token = jwt.encode(payload, "{_g(AN, 32)}", algorithm="HS256")'),
    Case("python", f'os.environ.setdefault("STRIPE_SECRET", "{_g(AN, 32)}")'),
    Case("java", f'Connection c = DriverManager.getConnection(url, "sa", "{_pw()}");'),
    Case("php", f'$mysqli = new mysqli("localhost", "shop", "{_pw()}", "shop");'),
    Case("go", f'db, err := sql.Open("mysql", "app:{_pw()}@tcp(db:3306)/shop")'),
    Case("javascript", f"process.env.GITHUB_TOKEN = 'ghp_{_g(AN, 36)}';"),
    Case("javascript", f'const hmac = crypto.createHmac("sha256", "{_g(AN, 40)}");'),
    Case("kotlin", f'val apiKey = "{_g(AN, 32)}"'),
    Case("swift", f'static let clientSecret = "{_g(URL, 40)}"'),
    Case("csharp", f'options.Password = "{_pw()}";'),
    Case("shell", f'curl -s -H "X-Api-Key: {_g(AN, 32)}" https://api.acme.io/v2/orders'),
    # vendor tokens
    Case("gitlab", f"GITLAB_TOKEN=glpat-{_g(URL, 20)}"),
    Case("sentry", f"SENTRY_AUTH_TOKEN=sntrys_{_g(AN, 60)}"),
    Case("supabase", f"supabase login --token sbp_{_g(HX, 40)}"),
    Case("planetscale", f"DATABASE_PASSWORD=pscale_pw_{_g(URL, 43)}"),
    Case("groq", f'client = Groq(api_key="gsk_{_g(AN, 52)}")'),
    Case("langsmith", f"LANGCHAIN_API_KEY=lsv2_pt_{_g(HX, 32)}_{_g(HX, 10)}"),
    Case("pinecone", f'pc = Pinecone(api_key="pcsk_{_g(AN, 6)}_{_g(AN, 63)}")'),
    Case("tailscale", f"tailscale up --authkey tskey-auth-{_g(AN, 17)}-{_g(AN, 33)}"),
    Case("square", f"SQUARE_ACCESS_TOKEN=EAAA{_g(URL, 60)}"),
    Case("brevo", f"BREVO_API_KEY=xkeysib-{_g(HX, 64)}-{_g(AN, 16)}"),
    Case("mailchimp", f'mailchimp.setConfig({{ apiKey: "{_g(HX, 32)}-us21", server: "us21" }});'),
    Case("twilio", f"TWILIO_API_SECRET={_g(AN, 32)}"),
    Case("dynatrace", f"Api-Token dt0c01.{_g(UP + D, 24)}.{_g(UP + D, 64)}"),
    Case("netlify", f"NETLIFY_AUTH_TOKEN=nfp_{_g(AN, 36)}"),
    Case("replicate", f"export REPLICATE_API_TOKEN=r8_{_g(AN, 37)}"),
    Case("anthropic", f"x-api-key: sk-ant-api03-{_g(URL, 93)}AA"),
    Case("snyk", f"SNYK_TOKEN={_uuid()}"),
    Case("artifactory", f"artifactory_api_key: AKCp{_g(AN, 69)}"),
    Case("contentful", f"CONTENTFUL_MANAGEMENT_TOKEN=CFPAT-{_g(URL, 43)}"),
    Case(
        "teams_webhook",
        f"https://acme.webhook.office.com/webhookb2/{_uuid()}@{_uuid()}/"
        f"IncomingWebhook/{_g(HX, 32)}/{_uuid()}",
    ),
    Case(
        "slack_webhook",
        f"https://hooks.slack.com/services/T{_g(UP + D, 8)}/B{_g(UP + D, 10)}/{_g(AN, 24)}",
    ),
    Case("facebook", f"FB_PAGE_ACCESS_TOKEN=EAAG{_g(AN, 180)}"),
    Case("twitter", f"TWITTER_BEARER=AAAAAAAAAAAAAAAAAAAAA{_g(AN + '%', 90)}"),
    # key files and wallets
    Case(
        "private_key",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI"
        f"{_g(B64, 40)}\n{_g(B64, 64)}",
    ),
    Case(
        "gcp_key",
        f'  "private_key_id": "{_g(HX, 40)}",\n'
        '  "client_email": "ci@acme.iam.gserviceaccount.com",',
    ),
    Case("ethereum", f"DEPLOYER_PRIVATE_KEY=0x{_g(HX, 64)}"),
    Case("bitcoin", f"wif: K{_g(B58, 51)}"),
    Case(
        "nostr",
        f"my nostr key: nsec1{_g(BECH32, 58)}",
    ),
    # chat and prose
    Case("prose", f"hey, the root pw on db01 is {_pw()} until Friday"),
    Case("prose", f"creds for the staging dashboard: admin/{_pw()}"),
    Case("prose", f"Use {_pw()} as the password when the VPN prompts you."),
    Case("prose", f"login: jdoe\npass: {_pw()}"),
)

HOLDOUT4_HARMLESS: tuple[Case, ...] = (
    # prompts, stdin, references, placeholders, masked values
    Case("", 'echo "$REGISTRY_TOKEN" | docker login ghcr.io -u acme --password-stdin'),
    Case("", 'read -r -s -p "Password: " DB_PASS'),
    Case("", "mysql -u root -p shop < schema.sql"),
    Case("", 'sqlcmd -S db01 -U sa -P "$SA_PASSWORD" -i init.sql'),
    Case("", "psql -h db -U app -W app"),
    Case("", "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem"),
    Case("", "openssl pkcs12 -export -in cert.pem -out a.p12 -passout file:/run/secrets/p12"),
    Case("", "ssh-keygen -t ed25519 -N '' -f /tmp/ci_key"),
    Case("", "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d"),
    Case("", "helm install pg bitnami/postgresql --set auth.existingSecret=pg-auth"),
    Case("", "zip -e archive.zip report.pdf"),
    Case("", 'ENV PATH="/opt/venv/bin:$PATH"'),
    Case("", "ENV NODE_ENV production"),
    Case("", "[Service]\nEnvironment=PYTHONUNBUFFERED=1\nEnvironment=LOG_LEVEL=info"),
    Case("", 'api_key = os.environ["OPENAI_API_KEY"]'),
    Case("", 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")'),
    Case("", 'os.environ["TOKENIZERS_PARALLELISM"] = "false"'),
    Case("", "jdbc:postgresql://db:5432/app?sslmode=require&user=app&ApplicationName=etl"),
    Case("", "GRANT SELECT ON shop.* TO 'report'@'%';"),
    Case("", "CREATE USER app IDENTIFIED WITH caching_sha2_password BY '${APP_DB_PASSWORD}';"),
    Case("", "# requirepass <set-a-strong-password>"),
    Case("", 'network={\n    ssid="Guest"\n    key_mgmt=NONE\n}'),
    Case("", "export OPENAI_API_KEY=sk-..."),
    Case("", "SENTRY_AUTH_TOKEN=<your-sentry-token>"),
    Case("", "Replace YOUR_API_KEY in config.yaml with the key from the dashboard."),
    Case("", "password: ${{ secrets.REGISTRY_PASSWORD }}"),
    Case("", 'APP_KEY=\nAPP_DEBUG=true\nAPP_URL="http://localhost"'),
    Case("", "Password: [hidden]   Token: ••••••••"),
    # prose about passwords
    Case("", "The password is stored in Vault and rotated every 30 days."),
    Case("", "Error: password is required when auth_type is basic."),
    Case("", "The token is expired; run `acme login` again."),
    Case("", '<input type="password" name="password" autocomplete="current-password" required>'),
    Case("", 'PASSWORD_REGEX = r"^(?=.*[A-Z])(?=.*\\d)(?=.*[^\\w\\s]).{12,}$"'),
    Case("", "password_reset_timeout: 3600\ntoken_ttl_seconds: 900"),
    # public keys, certificates, addresses
    Case("", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_g(B64, 43)} jdoe@laptop"),
    Case(
        "",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
        f"{_g(B64, 20)}\n{_g(B64, 64)}",
    ),
    Case("", f"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE{_g(B64, 44)}\n{_g(B64, 64)}"),
    Case("", f'{{"kty": "RSA", "kid": "{_g(URL, 43)}", "e": "AQAB", "n": "{_g(URL, 342)}"}}'),
    Case("", f"Send donations to bc1q{_g(LO + D, 38)}"),
    Case("", f"contract: 0x{_g(HX, 40)}"),
    Case("", f"npub1{_g(BECH32, 58)}"),
    Case("", f"STRIPE_PUBLISHABLE_KEY=pk_test_{_g(AN, 99)}"),
    # digests, checksums, identifiers
    Case("", f"image: ghcr.io/acme/api@sha256:{_g(HX, 64)}"),
    Case("", f"  integrity: sha512-{_g(B64, 86)}=="),
    Case("", f"golang.org/x/crypto v0.31.0 h1:{_g(B64, 43)}="),
    Case("", f'checksum = "{_g(HX, 64)}"'),
    Case("", f"Merge pull request #4821 from acme/fix-login ({_g(HX, 7)})"),
    Case("", f"X-Request-Id: {_uuid()}"),
    Case("", f'"session_id": "{_uuid()}", "user_id": 48213'),
    Case("", f'<script src="/static/js/main.{_g(HX, 8)}.chunk.js"></script>'),
    Case("", f"Content-Security-Policy: script-src 'nonce-{_g(AN, 22)}'"),
    Case("", f"GOOGLE_CLIENT_ID={_g(D, 12)}-{_g(LO + D, 32)}.apps.googleusercontent.com"),
    Case("", f"https://acme.io/callback?code_challenge={_g(URL, 43)}&state={_g(AN, 16)}"),
    Case("", f"@font-face {{ src: url(data:font/woff2;base64,d09GMgABAAAAA{_g(B64, 80)}) }}"),
    Case("", "fe80::1ff:fe23:4567:890a%eth0   link/ether 3c:22:fb:9a:10:7e"),
    Case("", f'ETag: W/"{_g(HX, 32)}"'),
)
