"""A seventh held-out secret set, written without reading the detector (issue 17).

The older sets were written by the sessions that tuned the detector. This one was written by a
session that never opened the detector's code nor the notes about its misses, and it is not
for tuning: it is measured, not tuned on. It is weighted roughly like published leak studies:
about 65 % common shapes written in ordinary ways (``.env`` files, CI YAML, docker-compose,
Kubernetes manifests and Secrets, Terraform, cloud credential files, connection strings and
URIs, shell history, notebook cells, server configs, PEM private keys, tokens of the big SaaS
vendors, webhook URLs, passwords in tickets and chat) and about 35 % less common vendors, tools
and phrasings, with prose in fifteen human languages. The look-alikes are request and trace
ids, commit SHAs, checksums and lock-file hashes, base64 images and fonts, public keys and
certificates, fingerprints, password hashes, encrypted and sealed values, masked values,
references and documentation placeholders, prose about passwords, and harmless random-looking
ids (orders, parcels, IBAN examples, builds). Values come from ``random.Random(7007)`` in each
format's shape (prefix, length, alphabet, and the checksum where it is easy: GitHub tokens'
CRC32, IBAN mod 97, Luhn); none is a real credential.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import string
import zlib

from benchmarks.secret_corpus import Case

__all__ = ["HOLDOUT7_HARMLESS", "HOLDOUT7_SECRETS"]

_rng = random.Random(7007)
_WORDS = ("harbor", "Tulip", "granite", "Falcon", "meadow", "Saturn", "pepper", "Orchid", "velvet")
_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_D, _UP, _LO = string.digits, string.ascii_uppercase, string.ascii_lowercase
_HX = string.hexdigits[:16]
_AN = _D + _UP + _LO
_URL, _B64, _B32 = _AN + "_-", _AN + "+/", _UP + "234567"


def _g(alphabet: str, n: int) -> str:
    return "".join(_rng.choices(alphabet, k=n))


def _pw() -> str:
    """A password as people and generators make them: a word with digits, random, or words."""
    style = _rng.randrange(3)
    if style == 0:
        return _rng.choice(_WORDS) + _g(_D, 4) + _rng.choice("!#$%*?@") + _g(_AN, 2)
    if style == 1:
        return _g(_AN + "!#%*+-=?@^_", 18)
    return "-".join(_rng.sample(_WORDS, 3)).lower() + "-" + _g(_D, 2)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _uuid() -> str:
    return (
        f"{_g(_HX, 8)}-{_g(_HX, 4)}-4{_g(_HX, 3)}-{_rng.choice('89ab')}{_g(_HX, 3)}-{_g(_HX, 12)}"
    )


def _base62(number: int, width: int) -> str:
    out = ""
    while number:
        number, rest = divmod(number, 62)
        out = _AN[rest] + out
    return out.rjust(width, "0")


def _gh(prefix: str) -> str:
    """A GitHub-style token: 30 random base62 characters and their CRC32 in 6 base62 digits."""
    body = _g(_AN, 30)
    return prefix + body + _base62(zlib.crc32(body.encode()), 6)


def _jwt(payload: dict[str, object], alg: str = "HS256") -> str:
    head = _b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(payload, separators=(",", ":")).encode())
    sig = hmac.new(_rng.randbytes(32), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(sig)}"


def _pem(label: str, start: str, lines: int) -> str:
    body = "\n".join([start + _g(_B64, 64 - len(start))] + [_g(_B64, 64) for _ in range(lines)])
    return f"-----BEGIN {label}-----\n{body}\n{_g(_B64, 20)}==\n-----END {label}-----"


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def _luhn(partial: str) -> str:
    total = 0
    for i, c in enumerate(reversed(partial)):
        n = int(c) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return partial + str((10 - total % 10) % 10)


_AKIA = lambda: "AKIA" + _g(_B32, 16)  # noqa: E731
_AWS_SECRET = lambda: _g(_B64, 40)  # noqa: E731

_SECRETS: tuple[tuple[str, str], ...] = (
    # .env files and shell environment
    ("pg_uri", f"APP_ENV=production\nDATABASE_URL=postgresql://orders:{_pw()}@pg-prod:5432/orders"),
    (
        "aws_env",
        f"export AWS_ACCESS_KEY_ID={_AKIA()}\nexport AWS_SECRET_ACCESS_KEY={_AWS_SECRET()}",
    ),
    ("datadog", f"DD_SITE=datadoghq.eu\nDD_API_KEY={_g(_HX, 32)}\nDD_APP_KEY={_g(_HX, 40)}"),
    ("stripe_whsec", f"STRIPE_WEBHOOK_SECRET=whsec_{_g(_AN, 32)}"),
    ("laravel_key", f"APP_NAME=Shop\nAPP_KEY=base64:{_b64(_rng.randbytes(32))}"),
    ("azure_secret", f"AZURE_CLIENT_SECRET={_g(_AN, 3)}8Q~{_g(_URL + '.~', 31)}"),
    ("google_oauth", f"GOOGLE_CLIENT_SECRET=GOCSPX-{_g(_URL, 28)}"),
    ("cloudflare", f"CLOUDFLARE_ACCOUNT_ID={_g(_HX, 32)}\nCLOUDFLARE_API_TOKEN={_g(_URL, 40)}"),
    ("smtp", f"SMTP_HOST=smtp.office365.com\nSMTP_USER=noreply@shop.example\nSMTP_PASS={_pw()}"),
    # cloud credential files
    (
        "aws_file",
        f"[default]\naws_access_key_id = {_AKIA()}\naws_secret_access_key = {_AWS_SECRET()}",
    ),
    (
        "gcp_sa",
        json.dumps(
            {
                "type": "service_account",
                "private_key_id": _g(_HX, 40),
                "private_key": _pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 3),
                "client_email": "exporter@billing-prod.iam.gserviceaccount.com",
            }
        ),
    ),
    (
        "azure_storage",
        "DefaultEndpointsProtocol=https;AccountName=stshopprod;"
        f"AccountKey={_b64(_rng.randbytes(64))};EndpointSuffix=core.windows.net",
    ),
    (
        "azure_sas",
        "https://stshop.blob.core.windows.net/exports/a.csv?sv=2022-11-02&sp=r"
        f"&se=2026-12-31T23:59:59Z&sig={_g(_AN, 43)}%3D",
    ),
    ("alibaba", f"access_key_id: LTAI5t{_g(_AN, 18)}\naccess_key_secret: {_g(_AN, 30)}"),
    ("tencent", f"cred = credential.Credential('AKID{_g(_AN, 32)}', '{_g(_AN, 32)}')"),
    ("ibm_cloud", f"ibmcloud login --apikey {_g(_URL, 44)} -r us-south"),
    # CI files
    (
        "gh_actions",
        "      - uses: docker/login-action@v3\n        with:\n          username: acme-bot\n"
        f"          password: {_gh('ghp_')}",
    ),
    ("github_pat", f"    env:\n      GH_TOKEN: github_pat_11{_g(_UP + _D, 20)}_{_g(_AN, 59)}"),
    ("gitlab_ci", f"variables:\n  DEPLOY_USER: deployer\n  DEPLOY_TOKEN: glpat-{_g(_URL, 20)}"),
    ("circleci", f"CIRCLE_TOKEN=CCIPAT_{_g(_AN, 22)}_{_g(_HX, 40)}"),
    ("buildkite", f"    env:\n      BUILDKITE_API_TOKEN: bkua_{_g(_HX, 40)}"),
    (
        "sonarqube",
        f"sonar-scanner -Dsonar.host.url=https://sonar.acme.dev -Dsonar.token=squ_{_g(_HX, 40)}",
    ),
    # docker-compose and containers
    (
        "compose",
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        f"      POSTGRES_USER: shop\n      POSTGRES_PASSWORD: {_pw()}",
    ),
    ("compose", f"  mariadb:\n    environment:\n      - MARIADB_ROOT_PASSWORD={_pw()}"),
    ("docker_auth", json.dumps({"auths": {"cr.acme.dev": {"auth": _b64(f"ci:{_pw()}".encode())}}})),
    ("dockerhub", f"echo dckr_pat_{_g(_URL, 27)} | docker login -u acmebot --password-stdin"),
    # Kubernetes
    (
        "k8s_secret",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: billing-db\nstringData:\n"
        f"  username: billing\n  password: {_pw()}",
    ),
    ("k8s_secret_b64", f"kind: Secret\ndata:\n  SMTP_PASSWORD: {_b64(_pw().encode())}"),
    ("k8s_env", f'        - name: PAYMENT_API_KEY\n          value: "{_g(_AN, 40)}"'),
    (
        "kubeconfig",
        "users:\n- name: ci\n  user:\n    token: " + _jwt({"sub": "system:sa:ci"}, "RS256"),
    ),
    # Terraform
    ("tfvars", f'region      = "eu-west-1"\ndb_username = "app"\ndb_password = "{_pw()}"'),
    (
        "tf_provider",
        f'provider "aws" {{\n  access_key = "{_AKIA()}"\n  secret_key = "{_AWS_SECRET()}"\n}}',
    ),
    (
        "tf_cloud",
        f'credentials "app.terraform.io" {{ token = "{_g(_AN, 14)}.atlasv1.{_g(_AN, 67)}" }}',
    ),
    # connection strings and URIs in code and config
    ("mongo_uri", f'MongoClient("mongodb+srv://reporting:{_pw()}@prod.x1y2z.mongodb.net/")'),
    ("mysql_uri", f"engine = create_engine('mysql+pymysql://etl:{_pw()}@10.20.0.15/warehouse')"),
    (
        "mssql",
        json.dumps(
            {"ConnectionStrings": {"Crm": f"Server=tcp:sql1;User ID=crm;Password={_pw()};"}}
        ),
    ),
    ("jdbc", f"jdbc:mysql://db-replica:3306/ledger?user=reader&password={_pw()}&useSSL=true"),
    ("redis_uri", f"CELERY_BROKER_URL = 'rediss://:{_pw()}@redis-prod.acme.dev:6380/0'"),
    ("libpq_dsn", f'sql.Open("postgres", "host=pg01 user=api password={_pw()} dbname=api")'),
    ("smtp_uri", f"EMAIL_URL=smtp+tls://alerts%40acme.dev:{_pw()}@smtp.gmail.com:587"),
    # shell history
    ("history", f"  512  mysql -u root -p'{_pw()}' -h 127.0.0.1 shop < dump.sql"),
    ("history", f"  513  curl -u admin:{_pw()} -X POST https://jenkins.acme.dev/job/deploy/build"),
    ("history", f": 1732490211:0;docker login -u ci -p {_pw()} registry.acme.dev"),
    # notebooks
    (
        "nb_openai",
        json.dumps(
            {"cell_type": "code", "source": [f'OpenAI(api_key="sk-proj-{_g(_URL, 74)}T3BlbkFJ")']}
        ),
    ),
    ("nb_hf", json.dumps({"source": [f'os.environ["HF_TOKEN"] = "hf_{_g(_AN, 34)}"']})),
    ("anthropic", f'client = anthropic.Anthropic(api_key="sk-ant-api03-{_g(_URL, 93)}AA")'),
    ("wandb", f"!wandb login {_g(_HX, 40)}"),
    # server and framework configuration
    ("django", f"SECRET_KEY = '{_g(_LO + _D + '!@#$%^&*(-_=+)', 50)}'"),
    ("rails", f"production:\n  secret_key_base: {_g(_HX, 128)}"),
    ("wordpress", f"define( 'DB_USER', 'wp_shop' );\ndefine( 'DB_PASSWORD', '{_pw()}' );"),
    ("spring", f"spring:\n  datasource:\n    username: app\n    password: {_pw()}"),
    ("redis_conf", f"bind 0.0.0.0\nport 6379\nrequirepass {_pw()}"),
    ("pgpass", f"db-prod.internal:5432:*:replicator:{_pw()}"),
    ("netrc", f"machine artifacts.acme.dev\n  login deploy\n  password {_pw()}"),
    ("npmrc", f"//npm.pkg.github.com/:_authToken={_gh('ghp_')}"),
    ("pypirc", f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJD{_g(_URL, 120)}"),
    ("git_credentials", f"https://jdoe:{_gh('gho_')}@github.com"),
    ("basic_auth", f'proxy_set_header Authorization "Basic {_b64(f"metrics:{_pw()}".encode())}";'),
    ("elastic", f"Authorization: ApiKey {_b64(f'{_g(_URL, 20)}:{_g(_URL, 22)}'.encode())}"),
    ("ansible", f"[db]\npg01 ansible_user=ops ansible_become_pass={_pw()}"),
    # tokens of the big SaaS vendors in code
    ("stripe", f"const stripe = require('stripe')('sk_live_51{_g(_AN, 97)}');"),
    ("slack_token", f'WebClient(token="xoxb-{_g(_D, 13)}-{_g(_D, 13)}-{_g(_AN, 24)}")'),
    (
        "slack_hook",
        f"  webhook_url: https://hooks.slack.com/services/T0{_g(_UP + _D, 9)}/B0{_g(_UP + _D, 9)}"
        f"/{_g(_AN, 24)}",
    ),
    (
        "discord_hook",
        f"DISCORD_WEBHOOK=https://discord.com/api/webhooks/{_g(_D, 19)}/{_g(_URL, 68)}",
    ),
    (
        "teams_hook",
        f"https://acme.webhook.office.com/webhookb2/{_uuid()}@{_uuid()}/IncomingWebhook/"
        f"{_g(_HX, 32)}/{_uuid()}/V2{_g(_AN, 43)}",
    ),
    (
        "gchat_hook",
        f"https://chat.googleapis.com/v1/spaces/AAAA{_g(_URL, 7)}/messages?key=AIzaSy"
        f"{_g(_URL, 33)}&token={_g(_URL, 43)}%3D",
    ),
    ("google_key", f'<string name="google_maps_key">AIzaSy{_g(_URL, 33)}</string>'),
    ("github_pat", f"gh auth login --with-token <<< {_gh('ghp_')}"),
    ("digitalocean", f"doctl auth init -t dop_v1_{_g(_HX, 64)}"),
    ("vault", f"export VAULT_ADDR=https://vault:8200\nexport VAULT_TOKEN=hvs.{_g(_URL, 90)}"),
    ("sentry", f"SENTRY_AUTH_TOKEN=sntryu_{_g(_HX, 64)}"),
    ("jwt", "Authorization: Bearer " + _jwt({"sub": "u_7731", "scope": "orders:write"})),
    ("bearer", f'curl https://api.acme.dev/v2/invoices -H "Authorization: Bearer {_g(_URL, 48)}"'),
    # private keys
    ("rsa_key", _pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 4)),
    ("openssh_key", _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 3)),
    ("ec_key", "ssl_key: |\n  " + _pem("EC PRIVATE KEY", "MHcCAQEEI", 2).replace("\n", "\n  ")),
    ("pgp_key", _pem("PGP PRIVATE KEY BLOCK", "lQdGBGV", 4)),
    # less common vendors and tools
    ("doppler", f"DOPPLER_TOKEN=dp.st.prd.{_g(_AN, 43)}"),
    ("pulumi", f"PULUMI_ACCESS_TOKEN=pul-{_g(_HX, 40)}"),
    ("grafana", f"GRAFANA_SA_TOKEN=glsa_{_g(_AN, 32)}_{_g(_HX, 8)}"),
    ("contentful", f"contentful space list --management-token CFPAT-{_g(_URL, 43)}"),
    ("airtable", f"api = Api('pat{_g(_AN, 14)}.{_g(_HX, 64)}')"),
    ("hubspot", f"hubspot.Client.create(access_token='pat-na1-{_uuid()}')"),
    ("okta", f"Authorization: SSWS 00{_g(_URL, 40)}"),
    ("postman", f"POSTMAN_API_KEY=PMAK-{_g(_HX, 24)}-{_g(_HX, 34)}"),
    ("braintree", f"BT_ACCESS_TOKEN=access_token$production${_g(_LO + _D, 16)}${_g(_HX, 32)}"),
    ("razorpay", f"razorpay.Client(auth=('rzp_live_{_g(_AN, 14)}', '{_g(_AN, 24)}'))"),
    ("plaid", f"PLAID_CLIENT_ID={_g(_HX, 24)}\nPLAID_SECRET={_g(_HX, 30)}\nPLAID_ENV=production"),
    ("langsmith", f"LANGCHAIN_API_KEY=lsv2_pt_{_g(_HX, 32)}_{_g(_HX, 10)}"),
    ("openrouter", f'OpenAI(base_url=OPENROUTER, api_key="sk-or-v1-{_g(_HX, 64)}")'),
    ("perplexity", f"PPLX_API_KEY=pplx-{_g(_AN, 48)}"),
    ("pinecone", f"pc = Pinecone(api_key='pcsk_{_g(_AN, 5)}_{_g(_AN, 63)}')"),
    ("flyio", f"FLY_API_TOKEN=FlyV1 fm2_{_g(_URL, 180)}"),
    ("netlify", f"netlify deploy --prod --auth nfp_{_g(_AN, 36)}"),
    ("dropbox", f"dbx = dropbox.Dropbox('sl.{_g(_URL, 135)}')"),
    ("rubygems", f"---\n:rubygems_api_key: rubygems_{_g(_HX, 48)}"),
    ("nuget", f"dotnet nuget push pkg.nupkg --api-key oy2{_g(_LO + _D, 43)} --source nuget.org"),
    ("fcm", f"Authorization: key=AAAA{_g(_URL, 7)}:APA91b{_g(_URL, 134)}"),
    ("mapbox", f"MAPBOX_DOWNLOADS_TOKEN=sk.eyJ1IjoiYWNtZSIsImEiOiJ{_g(_URL, 22)}.{_g(_URL, 22)}"),
    ("supabase", "SUPABASE_SERVICE_ROLE_KEY=" + _jwt({"iss": "supabase", "role": "service_role"})),
    ("snowflake", f"snowflake.connector.connect(user='LOADER', password='{_pw()}', account='xy1')"),
    ("age_key", f"# created: 2025-03-02T10:11:12Z\nAGE-SECRET-KEY-1{_g(_BECH.upper(), 58)}"),
    ("wireguard", f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {_b64(_rng.randbytes(32))}"),
    ("eth_key", f"DEPLOYER_PRIVATE_KEY=0x{_g(_HX, 64)}"),
    ("totp", f"otpauth://totp/Acme:ops%40acme.dev?secret={_g(_B32, 32)}&issuer=Acme"),
    # tickets, chat, mail and prose in several languages
    ("ticket", f"OPS-4471: can't reach the NAS. Tried admin / {_pw()} from the wiki, still 401."),
    ("chat", f"[10:42] maria: new wifi for the guest network → pw is {_pw()}"),
    ("chat", f"sure, here's the prod db pass: {_pw()} (pls don't paste it anywhere)"),
    ("mail", f"Hi Tom,\nUsername: tom.h\nTemporary password: {_pw()}\nBest, IT"),
    ("prose_de", f"Das Passwort für den Testserver lautet {_pw()}, bitte nicht weitergeben."),
    ("prose_fr", f"Le mot de passe du compte de service est {_pw()}"),
    ("prose_es", f"La contraseña del router es {_pw()}"),
    ("prose_zh", f"数据库密码是 {_pw()}，请妥善保管。"),
    ("prose_ko", f"관리자 비밀번호: {_pw()}"),
    ("prose_sv", f"Lösenordet till backup-kontot är {_pw()}"),
    ("prose_cs", f"Heslo k účtu je {_pw()}"),
    ("prose_id", f"Kata sandi server staging: {_pw()}"),
    ("prose_el", f"Ο κωδικός πρόσβασης είναι {_pw()}"),
    ("prose_vi", f"Mật khẩu wifi văn phòng là {_pw()}"),
    ("prose_uk", f"Пароль до сервера: {_pw()}"),
    ("prose_fi", f"Salasana on {_pw()}, vaihda se heti."),
    ("prose_ar", f"كلمة المرور للخادم هي {_pw()}"),
    ("prose_hi", f"सर्वर का पासवर्ड {_pw()} है"),
)

_HARMLESS: tuple[str, ...] = (
    # request, trace and object ids
    f"X-Request-ID: {_uuid()}",
    f"traceparent: 00-{_g(_HX, 32)}-{_g(_HX, 16)}-01",
    f'metadata:\n  uid: {_uuid()}\n  resourceVersion: "{_g(_D, 8)}"',
    f"REPORT RequestId: {_uuid()} Duration: 12.31 ms Billed Duration: 13 ms",
    f"az account set --subscription {_uuid()}",
    f"Sentry event {_g(_HX, 32)} was grouped into issue SHOP-1F3",
    f"run_id: {_g(_D, 10)}\nrun_attempt: 1\nworkflow: release.yml",
    f"CIRCLE_WORKFLOW_ID={_uuid()}",
    # commit SHAs, checksums, content hashes
    "\n".join(f"{_g(_HX, 7)} {m}" for m in ("fix typo in README", "bump deps", "add retries")),
    f"Merged in commit {_g(_HX, 40)} (parent {_g(_HX, 40)})",
    f"{_g(_HX, 64)}  acme-cli_2.4.1_linux_amd64.tar.gz",
    f"requests==2.32.3 \\\n    --hash=sha256:{_g(_HX, 64)}",
    f'[[package]]\nname = "serde"\nversion = "1.0.210"\nchecksum = "{_g(_HX, 64)}"',
    f'"node_modules/lodash": {{"version": "4.17.21", "integrity": "sha512-{_g(_B64, 86)}=="}}',
    f"docker pull nginx@sha256:{_g(_HX, 64)}",
    f"Content-MD5: {_b64(_rng.randbytes(16))}",
    f'"ETag": "\\"{_g(_HX, 32)}-12\\""',
    f"ipfs://bafybei{_g(_LO + '234567', 52)}",
    f'<script src="/app.js" integrity="sha384-{_g(_B64, 64)}" crossorigin></script>',
    f"version: 3.8.2+g{_g(_HX, 7)}.d20250101",
    # base64 images and fonts
    f"@font-face {{ src: url(data:font/woff2;base64,d09GMgABAAAA{_g(_B64, 240)}) }}",
    f'<img alt="avatar" src="data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ{_g(_B64, 200)}">',
    "background: url(data:image/svg+xml;base64,"
    + _b64(b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><circle r="4"/></svg>')
    + ")",
    json.dumps(
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgoAAAA" + _g(_B64, 300)}}
    ),
    'src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"',
    # public keys and certificates
    f"|1|{_g(_B64, 27)}=|{_g(_B64, 27)}= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_g(_B64, 43)}",
    f'from="10.0.0.0/8",no-pty ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_g(_B64, 43)} backup@nas',
    _pem("PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 4),
    "    certificate-authority-data: "
    + _b64(_pem("CERTIFICATE", "MIIC5zCCAc+gAwIBAgIBADAN", 3).encode()),
    f"[Peer]\nPublicKey = {_b64(_rng.randbytes(32))}\nEndpoint = vpn.acme.dev:51820",
    f"untrusted comment: minisign public key {_g(_HX.upper(), 16)}\nRWQ{_g(_B64, 53)}",
    f"gpg --keyserver keys.openpgp.org --recv-keys 0x{_g(_HX.upper(), 16)}",
    f'sel1._domainkey TXT "v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQ{_g(_B64, 150)}"',
    json.dumps(
        {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(_rng.randbytes(32)),
            "y": _b64url(_rng.randbytes(32)),
        }
    ),
    f"The token contract is deployed at 0x{_g(_HX, 40)} on mainnet.",
    f"http://{_g(_LO + '234567', 56)}.onion/",
    # fingerprints
    f"256 SHA256:{_g(_B64, 43)} ci@runner-04 (ED25519)",
    "SHA1 Fingerprint=" + ":".join(_g(_HX.upper(), 2) for _ in range(20)),
    f'gpg: using RSA key {_g(_HX.upper(), 40)}\ngpg: Good signature from "Release Bot"',
    # password hashes
    f"deploy:$y$j9T${_g(_AN + './', 22)}${_g(_AN + './', 43)}:19950:0:99999:7:::",
    f"INSERT INTO users (email, pw_hash) VALUES ('ana@acme.dev', '$2b$12${_g(_AN + './', 53)}');",
    json.dumps(
        {"user": "li", "password": f"$argon2id$v=19$m=65536,t=3,p=4${_g(_B64, 22)}${_g(_B64, 43)}"}
    ),
    f"monitor:{{SHA}}{_b64(_rng.randbytes(20))}",
    f"rolname | replicator\nrolpassword | md5{_g(_HX, 32)}",
    f'"PasswordHash": "AQAAAAIAAYagAAAAE{_g(_B64, 67)}=="',
    # encrypted and sealed values
    f"password: ENC[AES256_GCM,data:{_g(_B64, 24)},iv:{_g(_B64, 43)}=,tag:{_g(_B64, 22)}==]",
    f"spec:\n  encryptedData:\n    password: AgB{_g(_B64, 180)}",
    f"<password>{{AQAAABAAAAAQ{_g(_B64, 40)}=}}</password>",
    json.dumps(
        {
            "name": "projects/p/locations/global/keyRings/r/cryptoKeys/db",
            "ciphertext": "CiQA" + _g(_B64, 92),
        }
    ),
    # masked values and references
    "DB_PASSWORD=<redacted>",
    "Authorization: Bearer ***",
    'Run echo "deploying with token ***"\ndeploying with token ***',
    "aws_secret_access_key = ****************EKEY",
    '{"api_key": "[REDACTED]", "user": "svc-reports"}',
    '      + password             = (sensitive value)\n      + username             = "app"',
    "Data\n====\npassword:  16 bytes\nusername:  7 bytes",
    "  valueFrom:\n    secretKeyRef:\n      name: billing-db\n      key: password",
    "DB_PASSWORD=op://Production/postgres/password",
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-password-a1B2c3",
    "  password: {{ .Values.postgresql.auth.password | quote }}",
    'ansible_become_pass: "{{ vault_become_pass }}"',
    "  password = random_password.db.result\n  username = var.db_username",
    "    GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}",
    'smtp_password = os.environ.get("SMTP_PASSWORD", "")',
    # documentation placeholders and example keys
    'access_key = "AKIAIOSFODNN7EXAMPLE"\nsecret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    'export OPENAI_API_KEY="your-api-key-here"',
    'client = Client(api_key="<YOUR_API_KEY>")',
    "STRIPE_SECRET_KEY=sk_live_...  # copy it from the dashboard",
    "slack:\n  bot_token: xoxb-your-bot-token  # from api.slack.com/apps",
    "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/",
    "Connect with postgresql://user:password@localhost/dbname as in the quickstart.",
    # prose about passwords, without one
    "If you forgot your password, click 'Reset password' and we'll email you a link.",
    "Das Passwort muss mindestens zwölf Zeichen lang sein.",
    "Ne partagez jamais votre mot de passe, même avec le support.",
    "La contraseña se guarda cifrada; nadie del equipo puede verla.",
    "请勿在工单中填写密码，我们不会向您索取密码。",
    "비밀번호는 90일마다 변경해야 합니다.",
    "User reports their password stopped working after the SSO migration; reset link sent.",
    "@dave can you rotate the staging API key? the new one goes in the vault, not in here",
    '<label>Password <input type="password" name="pw" autocomplete="new-password"></label>',
    "PASSWORD_PATTERN = r'^(?=.*[A-Z])(?=.*\\d)(?=.*[^\\w]).{12,}$'",
    # random-looking but harmless ids
    f"Order #ORD-2025-{_g(_D, 10)} has shipped.",
    f"Tracking number: 1Z{_g(_UP + _D, 6)}{_g(_D, 10)}",
    "Example IBAN from the docs: DE89 3704 0044 0532 0130 00",
    f"Test payout account {_iban('GB', 'NWBK' + _g(_D, 14))} (sandbox)",
    "Use the test card 4242 4242 4242 4242 with any future date.",
    f"Loyalty card no. {_luhn('6' + _g(_D, 14))}",
    f"Invoice INV-{_g(_UP, 3)}-{_g(_D, 6)} is due on 2025-02-01.",
    f"VIN: 1HG{_g('ABCDEFGHJKLMNPRSTUVWXYZ0123456789', 14)}",
    f"CONTAINER ID   IMAGE\n{_g(_HX, 12)}   redis:7-alpine",
    f"gtag('config', 'G-{_g(_UP + _D, 10)}');",
    f'appId: "1:{_g(_D, 12)}:web:{_g(_HX, 22)}"',
    f"GOOGLE_CLIENT_ID={_g(_D, 12)}-{_g(_LO + _D, 32)}.apps.googleusercontent.com",
    "role_arn = arn:aws:iam::123456789012:role/github-deploy",
)

HOLDOUT7_SECRETS: tuple[Case, ...] = tuple(Case(kind, text) for kind, text in _SECRETS)
HOLDOUT7_HARMLESS: tuple[Case, ...] = tuple(Case("", text) for text in _HARMLESS)
