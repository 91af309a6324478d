"""A tenth held-out secret set, written without reading the detector (issue 17).

Written by a session that opened neither the detector's code nor the notes about its misses;
it is measured, never tuned on. About 60 % common shapes written the ordinary way (``.env``,
CI pipelines, docker-compose, Kubernetes, Terraform and its state, cloud credential files,
connection strings, shell history, notebooks, server configs, private keys, big SaaS vendors'
tokens, webhook URLs, passwords in English tickets, chat and mail) and 40 % less common tools,
vendors and phrasings (Stellar seeds with their CRC16, Foundry, TOTP, Databricks, Vault,
Consul, JFrog, Azure SAS, Windows, network gear, ESPHome, Zigbee, .NET, logs, CSV, passwords
in fifteen more languages). Look-alikes: request and trace ids, commit SHAs, checksums, lock
and content hashes, base64 media, public keys, certificates, fingerprints, password hashes,
encrypted, masked and referenced values, documentation example keys, prose about passwords in
eight languages, public ids (parcels, IBANs with mod 97, ISBNs, Luhn test cards, builds).

Cases are templates, one a row (``kind | template`` for secrets, see :func:`_fill`). Values
come from ``random.Random(10010)`` (``Values(10010)``) in each format's shape; none is real.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Callable

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B32, B58, B64, BECH32, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT10_HARMLESS", "HOLDOUT10_SECRETS"]

_values = Values(10010)
_rng, _g = _values.rng, _values.g
_BASE62 = D + UP + LO
# Slot letters: p framework secret keys, q crypt(3), t Azure client secrets, z base32 lowercase.
_SETS: tuple[str, ...] = (AN, B64, D, BECH32, HX, HX.upper(), B32, LO + D, "./" + AN, B58)
_SETS += (AN + "!#$%&*()-_=+[]<>?,.;:", URL + ".~", URL, UP + D, LO, LO + "234567")
_ALPHABET = dict(zip("abdehHklqsptuUwz", _SETS, strict=True))
_CITIES = ("Lisboa", "Bergen", "Valencia", "Krakow", "Osaka", "Porto", "Quito", "Tallinn")
_WORDS = ("basalt", "orchid", "meridian", "pumice", "harbor", "walnut", "zephyr", "candle")


def _pw() -> str:
    """A password in one of four habits: city and year, passphrase, generated, leet word."""
    habit = _rng.randrange(4)
    if habit == 0:
        return _rng.choice(_CITIES) + str(_rng.randrange(1990, 2027)) + _rng.choice("!#$.?")
    if habit == 1:
        return "-".join(_rng.sample(_WORDS, 3)) + "-" + _g(D, 2)
    if habit == 2:
        return _g(AN + "@%+=_-!", 20)
    word = _rng.choice(_WORDS).translate(str.maketrans("aeio", "@310"))
    return word.capitalize() + _g(D, 3) + _rng.choice("&*^")


def _uuid() -> str:
    raw = _g(HX, 32)
    parts = (raw[:8], raw[8:12], "4" + raw[13:16], _rng.choice("89ab") + raw[17:20], raw[20:])
    return "-".join(parts)


def _checksummed(prefix: str) -> str:
    """GitHub / npm token: 30 base62 characters, then their CRC32 in 6 base62 digits."""
    body = _g(_BASE62, 30)
    crc, digits = zlib.crc32(body.encode()), []
    for _ in range(6):
        crc, rest = divmod(crc, 62)
        digits.append(_BASE62[rest])
    return prefix + body + "".join(reversed(digits))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(claims: dict[str, object], alg: str = "HS256") -> str:
    """Real JSON header and claims, a random signature of the algorithm's size."""
    size = {"HS256": 32, "RS256": 256, "EdDSA": 64}[alg]
    parts = [json.dumps(p, separators=(",", ":")).encode() for p in ({"alg": alg}, claims)]
    return ".".join(_b64url(part) for part in [*parts, _rng.randbytes(size)])


def _stellar_seed() -> str:
    """A Stellar secret seed: version byte, 32 bytes, CRC16-XModem (little endian), base32."""
    payload = bytes([18 << 3]) + _rng.randbytes(32)
    return base64.b32encode(payload + binascii.crc_hqx(payload, 0).to_bytes(2, "little")).decode()


def _pem(label: str, start: str, size: int, escaped: bool = False) -> str:
    """A PEM block whose base64 body (``size`` characters) starts like the real encoding.

    ``escaped`` joins the lines with a literal ``\\n``, as in JSON and ``.env`` values.
    """
    body = start + _g(B64, size - len(start))
    rows = [f"-----BEGIN {label}-----", *(body[i : i + 64] for i in range(0, size, 64))]
    return ("\\n" if escaped else "\n").join([*rows, f"-----END {label}-----"])


def _ups() -> str:
    """A UPS 1Z tracking number with its mod-10 check digit."""
    body = _g(UP + D, 6) + "03" + _g(D, 7)
    values = [int(c) if c.isdigit() else (ord(c) - 63) % 10 for c in body]
    return "1Z" + body + str(-(sum(values[0::2]) + 2 * sum(values[1::2])) % 10)


def _iban(country: str, bban: str) -> str:
    """An IBAN whose two check digits satisfy mod 97."""
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def _isbn13() -> str:
    body = "978" + _g(D, 9)
    return body + str(-sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10)


def _luhn(body: str) -> str:
    doubled = [int(c) * (2 if i % 2 == 0 else 1) for i, c in enumerate(reversed(body))]
    return body + str(-sum(n - 9 if n > 9 else n for n in doubled) % 10)


_RSA_HEAD = "MIIEowIBAAKCAQEA"
_MAKERS: dict[str, Callable[[], str]] = {
    "pw": _pw,
    "fp": lambda: ":".join(_g(HX.upper(), 2) for _ in range(16)),
    "uuid": _uuid,
    "zkey": lambda: ", ".join(str(_rng.randrange(256)) for _ in range(16)),
    "stellar": _stellar_seed,
    "akia": lambda: "AKIA" + _g(B32, 16),
    "ghp": lambda: _checksummed("ghp_"),
    "ghs": lambda: _checksummed("ghs_"),
    "npm": lambda: _checksummed("npm_"),
    "sbjwt": lambda: _jwt({"iss": "supabase", "ref": _g(LO, 20), "role": "service_role"}),
    "sajwt": lambda: _jwt({"iss": "kubernetes/serviceaccount", "sub": "ci:deployer"}, "RS256"),
    "edjwt": lambda: _jwt({"a": "rw", "iat": 1740000000, "id": _uuid()}, "EdDSA"),
    "mapbox": lambda: "sk." + _b64url(f'{{"u":"acme","a":"{_g(LO + D, 25)}"}}'.encode()),
    "intercom": lambda: b64(f"tok:{_uuid()}:1:0"),
    "jfrog": lambda: b64(f"reftkn:01:1772000000:{_g(AN, 32)}"),
    "pwb64": lambda: b64(_pw()),
    "cib64": lambda: b64("ci:" + _pw()),
    "rsa": lambda: _pem("RSA PRIVATE KEY", _RSA_HEAD, 1588),
    "rsab64": lambda: b64(_pem("RSA PRIVATE KEY", _RSA_HEAD, 1588)),
    "sapk": lambda: _pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1624, True) + "\\n",
    "pk8": lambda: _pem(
        "PRIVATE KEY", "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", 184, True
    ),
    "ssh": lambda: _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 388),
    "ec": lambda: _pem("EC PRIVATE KEY", "MHcCAQEEI", 164),
    "pgp": lambda: _pem("PGP PRIVATE KEY BLOCK", "lFgEZ", 520).replace("-\n", "-\n\n", 1),
    "pub": lambda: _pem("PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 392),
    "cert": lambda: _pem("CERTIFICATE", "MIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAwDQYJKo", 1900),
    "csr": lambda: _pem("CERTIFICATE REQUEST", "MIICvDCCAaQCAQAwdzELMAkGA1UEBhMCUFQx", 960),
    "ups": _ups,
    "iban": lambda: _iban("NL", "ABNA" + _g(D, 10)),
    "isbn": _isbn13,
    "card": lambda: _luhn("424242" + _g(D, 9)),
}
_SLOT = re.compile(r"\{(" + "|".join(_MAKERS) + "|[" + "".join(_ALPHABET) + r"]\d+)\}")


def _fill(template: str) -> str:
    """Fill a template's slots left to right from the seeded generator.

    A slot is a named maker (``{pw}``, ``{uuid}``, ``{ghp}``, ...) or an alphabet letter and
    a length (``{h32}``: 32 characters of ``_ALPHABET["h"]``). A literal ``\\n`` or ``\\t``
    becomes a line break or a tab.
    """
    text = template.replace("\\n", "\n").replace("\\t", "\t")
    return _SLOT.sub(lambda m: _MAKERS[m[1]]() if m[1] in _MAKERS else _chars(m[1]), text)


def _chars(slot: str) -> str:
    return _g(_ALPHABET[slot[0]], int(slot[1:]))


def _rows(block: str) -> list[str]:
    """Non-blank rows of a block; a row ending in a backslash continues on the next line."""
    return [row for row in block.replace("\\\n", "").split("\n") if row.strip()]


def _typed(block: str) -> list[tuple[str, str]]:
    pairs = [row.split(" | ", 1) for row in _rows(block)]
    return [(kind, _fill(template)) for kind, template in pairs]


# Common shapes, written the ordinary way.
_COMMON = r"""
env_django_prod | DJANGO_DEBUG=0\nDJANGO_ALLOWED_HOSTS=shop.acme.pt\nDJANGO_SECRET_KEY={p50}
env_openai_svc | # summariser service account\nOPENAI_API_KEY=sk-svcacct-{u74}T3BlbkFJ{u74}
env_aws_s3 | S3_BUCKET=acme-invoices-prod\nAWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={b40}
env_mysql | DB_HOST=127.0.0.1\nDB_DATABASE=crm\nDB_USERNAME=crm\nDB_PASSWORD={pw}
env_upstash | REDIS_URL=rediss://default:{a34}@eu1-brave-{w6}-{d5}.upstash.io:6379
env_smtp | SMTP_HOST=smtp.office365.com\nSMTP_PORT=587\nSMTP_USER=noreply@acme.pt\nSMTP_PASS={pw}
env_supabase | NEXT_PUBLIC_SUPABASE_URL=https://{w20}.supabase.co\nSUPABASE_SERVICE_ROLE_KEY={sbjwt}
env_gh_webhook | GITHUB_APP_ID={d6}\nGITHUB_WEBHOOK_SECRET={h40}
env_sentry_token | SENTRY_ORG=acme\nSENTRY_PROJECT=web\nSENTRY_AUTH_TOKEN=sntryu_{h64}
gha_aws_inline | - uses: aws-actions/configure-aws-credentials@v4\n  with:\n\
    aws-access-key-id: {akia}\n    aws-secret-access-key: {b40}\n    aws-region: eu-west-1
gha_npm_publish | - run: npm publish --access public\n  env:\n    NODE_AUTH_TOKEN: {npm}
gitlab_deploy_tok | build:\n  script:\n    - docker login -u gitlab+deploy-token-{d6} \
-p gldt-{u20} registry.gitlab.com
azure_devops_pat | - script: az devops login --organization https://dev.azure.com/acme\n  env:\n\
    AZURE_DEVOPS_EXT_PAT: {z52}
jenkins_sonar | withEnv(['SONAR_TOKEN=squ_{h40}']) {\n  sh 'mvn -B verify sonar:sonar'\n}
compose_pg_list | services:\n  db:\n    image: postgres:16\n    environment:\n\
      - POSTGRES_USER=orders\n      - POSTGRES_PASSWORD={pw}
compose_rabbitmq | rabbitmq:\n  image: rabbitmq:3-management\n  environment:\n\
    RABBITMQ_DEFAULT_USER: app\n    RABBITMQ_DEFAULT_PASS: {pw}
compose_mongo | mongo:\n  image: mongo:7\n  environment:\n    MONGO_INITDB_ROOT_USERNAME: root\n\
    MONGO_INITDB_ROOT_PASSWORD: {pw}
k8s_stringdata | apiVersion: v1\nkind: Secret\nmetadata:\n  name: catalog-db\nstringData:\n\
  MONGODB_URI: mongodb://catalog:{pw}@mongo-0.mongo.data.svc:27017/catalog
k8s_deploy_env | containers:\n  - name: checkout\n    env:\n      - name: STRIPE_API_KEY\n\
        value: sk_live_51{a97}
kubectl_sa_creds | kubectl config set-credentials ci-deployer --token={sajwt}
argocd_login | argocd login cd.acme.pt --username admin --password '{pw}' --grpc-web
tfvars_do | do_token = "dop_v1_{h64}"\nregion   = "fra1"
tf_aws_provider | provider "aws" {\n  region     = "eu-west-1"\n  access_key = "{akia}"\n\
  secret_key = "{b40}"\n}
tfstate_random_pw | "type": "random_password",\n\
"instances": [{"attributes": {"length": 24, "result": "{p24}"}}]
aws_credentials | [default]\naws_access_key_id = {akia}\naws_secret_access_key = {b40}\n\n\
[staging]\nregion = eu-west-3
azure_sp_output | {\n  "appId": "{uuid}",\n  "displayName": "gh-deployer",\n\
  "password": "{a3}8Q~{t34}",\n  "tenant": "{uuid}"\n}
go_mysql_dsn | db, err := sql.Open("mysql", "root:{pw}@tcp(127.0.0.1:3306)/shop?parseTime=true")
azure_sql_conn | "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=sales;\
User ID=sqladmin;Password={pw};Encrypt=True;"
celery_amqps | broker_url = "amqps://worker:{pw}@b-{uuid}.mq.eu-west-1.amazonaws.com:5671"
hist_mysql |  1042  mysql -u root -p'{pw}' -e 'show databases;'
hist_curl_basic |   233  curl -u "admin:{pw}" -X POST http://jenkins.acme.pt:8080/job/deploy/build
hist_git_oauth2 |   301  git remote set-url origin https://oauth2:glpat-{u20}@gitlab.com/acme/billing.git
hist_psql_uri |  1200  psql "postgresql://admin:{pw}@10.8.0.4:5432/postgres"
nb_openai_env | {"cell_type": "code", "execution_count": 3, "metadata": {}, \
"source": ["os.environ[\"OPENAI_API_KEY\"] = \"sk-proj-{u74}T3BlbkFJ{u74}\""]}
nb_anthropic_lc | # In[7]:\n\nllm = ChatAnthropic(model="claude-3-5-sonnet-latest", \
api_key="sk-ant-api03-{u93}AA")
nginx_bearer | location /api/ {\n    proxy_pass http://backend;\n\
    proxy_set_header Authorization "Bearer {a40}";\n}
redis_conf | bind 0.0.0.0\nprotected-mode yes\nrequirepass {pw}
postfix_sasl | # /etc/postfix/sasl_passwd\n[smtp.sendgrid.net]:587 apikey:SG.{u22}.{u43}
spring_yml | spring:\n  datasource:\n    url: jdbc:postgresql://db:5432/orders\n\
    username: orders\n    password: {pw}
maven_settings | <server>\n  <id>acme-releases</id>\n  <username>deployer</username>\n\
  <password>{pw}</password>\n</server>
gitlab_runner | gitlab-runner register --non-interactive --url https://gitlab.com --token glrt-{u20}
slack_socket_mode | app = App(token="xoxb-{d12}-{d13}-{a24}")\n\
SocketModeHandler(app, "xapp-1-A{U10}-{d13}-{h64}").start()
stripe_whsec_node | const event = stripe.webhooks.constructEvent(body, sig, "whsec_{a32}");
twilio_api_key | TWILIO_API_KEY=SK{h32}\nTWILIO_API_SECRET={a32}
google_oauth | GOOGLE_CLIENT_ID={d12}-{l32}.apps.googleusercontent.com\n\
GOOGLE_CLIENT_SECRET=GOCSPX-{u28}
google_maps_php | $url = "https://maps.googleapis.com/maps/api/geocode/json?address=$q&key=AIzaSy{u33}";
anthropic_ts | const anthropic = new Anthropic({ apiKey: 'sk-ant-api03-{u93}AA' });
atlassian_token | JIRA_USER=ops@acme.pt\nJIRA_API_TOKEN=ATATT3xFfGF0{u182}={H8}
shopify_secret | SHOPIFY_API_KEY={h32}\nSHOPIFY_API_SECRET=shpss_{h32}
datadog_curl | curl "https://api.datadoghq.eu/api/v1/series" -H "DD-API-KEY: {h32}" -d @m.json
notion_token | NOTION_TOKEN=ntn_{d11}{a35}
grafana_sa | GRAFANA_TOKEN=glsa_{a32}_{h8}
cloudflare_global | CF_API_EMAIL=it@acme.pt\nCF_API_KEY={h37}
azure_openai | AZURE_OPENAI_ENDPOINT=https://acme-oai.openai.azure.com/\nAZURE_OPENAI_API_KEY={h32}
fcm_server_key | headers = {"Authorization": "key=AAAA{u7}:APA91b{u134}"}
mapbox_netrc | machine api.mapbox.com\n  login mapbox\n  password {mapbox}.{u22}
slack_hook_sh | #!/bin/sh\nWEBHOOK="https://hooks.slack.com/services/T{U8}/B{U10}/{a24}"\n\
curl -s -X POST -H 'Content-type: application/json' --data "{\"text\":\"$1\"}" "$WEBHOOK"
discord_hook_py | requests.post("https://discordapp.com/api/webhooks/{d18}/{u68}", json=payload)
teams_hook_ps | Invoke-RestMethod -Method Post -ContentType 'application/json' -Body $card -Uri \
"https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{h32}/{uuid}/V2{u45}"
gchat_hook_yaml | notify:\n  google_chat:\n    webhook: "https://chat.googleapis.com/v1/spaces/\
AAAA{u7}/messages?key=AIzaSy{u33}&token={u43}%3D"
ticket_temp_pw | SUP-5521 User cannot log in after the migration. I set a temporary password \
({pw}) and ticked "change at next logon".
chat_staging_pw | @here new staging admin pw is {pw} - pls don't paste it anywhere else
mail_onboarding | Welcome aboard, Priya! Your laptop login is priya.n and your first password \
is {pw}. You'll be asked to change it.
pr_comment_npm | > CI fails on the private registry\nWorks for me with NPM_TOKEN={npm}, try that
so_question | I get "Access denied for user 'root'@'localhost'" with this:\n\
$conn = new mysqli("localhost", "root", "{pw}", "shop");
k8s_secret_data | apiVersion: v1\nkind: Secret\nmetadata:\n  name: smtp-relay\ntype: Opaque\n\
data:\n  username: cmVsYXlAYWNtZS5wdA==\n  password: {pwb64}
kubeconfig_key | users:\n- name: admin@prod\n  user:\n    client-key-data: {rsab64}
gcp_sa_json | {\n  "type": "service_account",\n  "project_id": "acme-data-prod",\n\
  "private_key_id": "{h40}",\n  "private_key": "{sapk}",\n\
  "client_email": "etl@acme-data-prod.iam.gserviceaccount.com"\n}
docker_config | {\n "auths": {\n  "registry.acme.pt": {\n   "auth": "{cib64}"\n  }\n }\n}
rsa_pem_gist | Here's the deploy key from the old box, `deploy.pem`:\n\n{rsa}
openssh_chat | [14:02] Rui: use this one for the bastion\n{ssh}
ec_pem_cat | $ sudo cat /etc/ssl/private/api.acme.pt.key\n{ec}
pgp_private | Signing key for the apt repo, until we move it to the vault:\n{pgp}
env_pkcs8_jwt | JWT_PRIVATE_KEY="{pk8}"
"""

# Less common tools, vendors, file formats and human languages.
_RARER = r"""
stellar_seed | # anchor server .env\nSTELLAR_NETWORK=public\nSIGNING_SECRET_SEED={stellar}
foundry_cast | cast send 0x{h40} "transfer(address,uint256)" 0x{h40} 1000 --rpc-url $RPC \
--private-key 0x{h64}
totp_uri | otpauth://totp/ACME%20VPN:j.silva?secret={k32}&issuer=ACME%20VPN&digits=6
duplicity_pass | PASSPHRASE='{pw}' duplicity /srv/www sftp://backup@nas.acme.pt//volume1/www
sqlcmd | sqlcmd -S tcp:db01,1433 -U sa -P '{pw}' -Q "BACKUP DATABASE crm TO DISK='D:\bak\crm.bak'"
databricks_pat | DATABRICKS_HOST=https://adb-{d16}.7.azuredatabricks.net\nDATABRICKS_TOKEN=dapi{h32}
tfc_token_env | export TF_TOKEN_app_terraform_io={a14}.atlasv1.{a67}
vault_token_curl | curl -H "X-Vault-Token: hvs.{u90}" https://vault.acme.pt:8200/v1/kv/data/ci
consul_token | CONSUL_HTTP_ADDR=consul.service.dc1:8500\nCONSUL_HTTP_TOKEN={uuid}
azure_sas_url | https://acmebackups.blob.core.windows.net/sql/full-0312.bak?sv=2022-11-02&ss=b\
&srt=sco&sp=rwdlac&se=2026-12-31T18:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig={b43}%3D
yandex_oauth | export YC_TOKEN=y0_AgAAAAA{u50}
midtrans_key | MIDTRANS_SERVER_KEY=Mid-server-{u24}
telegram_systemd | [Service]\nEnvironment=TELEGRAM_BOT_TOKEN={d10}:AA{u33}\n\
ExecStart=/usr/bin/python3 /opt/bot/main.py
turso_token | TURSO_DATABASE_URL=libsql://app-acme.turso.io\nTURSO_AUTH_TOKEN={edjwt}
upstash_rest | UPSTASH_REDIS_REST_TOKEN=A{u3}AAIjcD{u60}
intercom_token | curl https://api.intercom.io/contacts -H "Authorization: Bearer {intercom}"
hubspot_pat | HUBSPOT_ACCESS_TOKEN=pat-eu1-{uuid}
notarytool_pw | xcrun notarytool submit App.zip --apple-id dev@acme.pt --team-id {U10} \
--password {w4}-{w4}-{w4}-{w4} --wait
net_user | C:\> net user Administrator {pw} /domain
ps_env_secret | $env:AZURE_CLIENT_ID = '{uuid}'\n$env:AZURE_CLIENT_SECRET = '{a3}8Q~{t34}'
tacacs_key | tacacs server ISE01\n address ipv4 10.10.1.5\n key 0 {pw}
esphome_yaml | wifi:\n  ssid: IoT\n  password: "{pw}"\napi:\n  encryption:\n    key: "{b43}="
zigbee_key | advanced:\n  network_key: [{zkey}]\n  pan_id: 6754
aspnet_machinekey | <machineKey validationKey="{H128}" decryptionKey="{H48}" \
validation="HMACSHA256" decryption="AES" />
jasypt_docker | ENTRYPOINT ["java", "-Djasypt.encryptor.password={pw}", "-jar", "/app.jar"]
app_log_dsn | 2025-03-04 09:12:44,118 DEBUG engine connect: mysql+pymysql://report:{pw}@10.0.3.7/report
access_log_key | 198.51.100.23 - - [11/Feb/2025:07:45:10 +0000] \
"GET /v2/export?api_key={a32}&fmt=csv HTTP/1.1" 200 5120
csv_export | username,email,password,role\nmsantos,msantos@acme.pt,{pw},admin\n\
jlee,jlee@acme.pt,{pw},viewer
oci_config | [DEFAULT]\nuser=ocid1.user.oc1..aaaaaaaa{w52}\nfingerprint={fp}\n\
key_file=~/.oci/oci_api_key.pem\npass_phrase={pw}\nregion=eu-frankfurt-1
aliyun_env | ALIBABA_CLOUD_ACCESS_KEY_ID=LTAI5t{a18}\nALIBABA_CLOUD_ACCESS_KEY_SECRET={a30}
gh_install_token | {"token": "{ghs}", "expires_at": "2025-03-04T11:02:17Z"}
airtable_pat | AIRTABLE_TOKEN=pat{a14}.{h64}
okta_ssws | curl -H "Authorization: SSWS 00{u40}" "https://acme.okta.com/api/v1/users?limit=25"
prose_de_chat | [09:41] Jonas: Das neue Passwort für den Jenkins-Admin lautet {pw}
prose_fr_ticket | INC0048812 – Réinitialisation effectuée. Mot de passe provisoire : {pw}
prose_es_mail | Hola Marta, te paso el acceso al FTP: usuario proveedores, contraseña {pw}. Saludos
prose_pt_pt | Palavra-passe do router do armazém: {pw}
prose_sv | Lösenordet till gästnätet är {pw}
prose_da | Adgangskoden til NAS'en er nu {pw}
prose_ro | Parola pentru contul de test este {pw}
prose_sk | Heslo k serveru je {pw}, zmeň si ho prosím.
prose_zh_cn | 测试环境数据库密码：{pw}
prose_ja_chat | 本番サーバーのrootパスワードは {pw} です
prose_ko_mail | 관리자 계정 비밀번호는 {pw} 입니다. 외부 공유 금지.
prose_tl | Ang password ng admin account ay {pw}
prose_ta | சர்வர் கடவுச்சொல்: {pw}
prose_lt | Slaptažodis: {pw} (vartotojas: buhalterija)
prose_uk_chat | пароль від адмінки: {pw}
jfrog_ref_token | artifactory_access_token = {jfrog}
"""

# Harmless look-alikes, one template a row.
_LOOKALIKES = r"""
curl -H "traceparent: 00-{h32}-{h16}-01" http://localhost:8080/checkout
X-Amzn-Trace-Id: Root=1-{h8}-{h24};Parent={h16};Sampled=1
x-ms-request-id: {uuid}\nx-ms-version: 2021-08-06
cf-ray: {h16}-LIS
Request req_{a14} failed with status 402 (card_declined).
2025-02-11T10:22:31.114Z INFO [{uuid}] GET /api/v1/products 200 34ms
"workflow_id": "{uuid}", "pipeline_number": 4821, "status": "success"
metadata:\n  name: api-config\n  namespace: prod\n  uid: {uuid}
{"_id": {"$oid": "{h24}"}, "sku": "LAMP-042", "qty": 3}
{h7} Merge pull request #1412 from acme/fix/timezone-parse
git revert --no-edit {h40}
{"version": "3.8.1", "git_sha": "{h40}", "built": "2025-03-01T08:00:00Z"}
{h64}  acme-cli_2.4.0_linux_amd64.tar.gz\n{h64}  acme-cli_2.4.0_darwin_arm64.tar.gz
ADD --checksum=sha256:{h64} https://example.org/tool.tgz /opt/
[[package]]\nname = "tokio"\nversion = "1.40.0"\nchecksum = "{h64}"
"narHash": "sha256-{b43}=",\n"owner": "NixOS",\n"repo": "nixpkgs",\n"rev": "{h40}"
SPEC CHECKSUMS:\n  Alamofire: {h40}\n  SDWebImage: {h40}
  url "https://github.com/acme/cli/releases/download/v1.2.0/cli.tar.gz"\n  sha256 "{h64}"
"source": {"type": "git", "url": "https://github.com/php-fig/log.git", "reference": "{h40}"}
<script src="/assets/main.{h20}.js" integrity="sha384-{b64}" crossorigin="anonymous"></script>
Pinned to ipfs://bafybei{z52}
https://ipfs.io/ipfs/Qm{s44}/metadata.json
FROM python:3.12-slim@sha256:{h64} AS runtime
<img alt="chart" src="data:image/webp;base64,UklGR{b240}">
@font-face{font-family:"Inter";src:url(data:font/woff2;base64,d09GMgABAAAAA{b300}) format("woff2")}
{"name": "export.zip", "mime": "application/zip", "data": "UEsDBBQAAAAIA{b200}"}
<p align="center"><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAlgAAAGQ{b250}"></p>
ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{b500} deploy@ci-runner
ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b107}= ana@mbp
command="/usr/local/bin/backup-only",no-pty ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} backup@nas
[Peer]\nPublicKey = {b43}=\nAllowedIPs = 10.66.0.2/32\nEndpoint = vpn.acme.pt:51820
minisign -Vm acme-2.4.0.tar.gz -P RWQ{b53}
s1._domainkey.acme.pt. TXT "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b300}"
SHA256 Fingerprint={fp}:{fp}
The ECDSA host key fingerprint is SHA256:{b43}.
INSERT INTO users (email, password_hash) VALUES ('a@acme.pt', '$2b$12${q53}');
"hash": "$argon2id$v=19$m=65536,t=3,p=4${b22}${b43}"
root:$y$j9T${q22}${q43}:19990:0:99999:7:::
 app | SCRAM-SHA-256$4096:{b22}==${b43}=:{b43}=
dn: uid=jdoe,ou=people,dc=acme,dc=pt\nuserPassword: {SSHA}{b32}
kind: SealedSecret\nspec:\n  encryptedData:\n    DB_PASSWORD: AgB{b380}==
stripe_key: ENC[AES256_GCM,data:{b24},iv:{b43}=,tag:{b22}==,type:str]
"CiphertextBlob": "AQICAHh{b200}"
<apiToken>{AQAAABAAAAAQ{b44}=}</apiToken>
{"name": "DB_PASSWORD", "value": "@Microsoft.KeyVault(VaultName=kv-acme;SecretName=db-password)"}
Secret key   sk_live_••••••••••••••••{a4}   Revealed once, on creation
aws_access_key_id = AKIA************{U4}
"password": "<redacted>",
level=info msg="push" token=[REDACTED] user=ci-bot
Run ./deploy.sh --token *** --env prod
  username: admin\n  password: ********
curl -H "Authorization: Bearer <token>" https://api.acme.pt/v1/me
DATABASE_URL=postgres://app:•••••@db.internal:5432/app
Created key sk-proj-...{a4} (last used 2 days ago)
provider "aws" {\n  access_key = "AKIAIOSFODNN7EXAMPLE"\n\
  secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n}  # from the provider docs
AWS docs use AKIAI44QH8DHBEXAMPLE / je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY in their examples.
stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"  # Stripe docs sample key
export SLACK_BOT_TOKEN=xoxb-your-token-here  # from api.slack.com/apps
    env:\n      NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
password: "{{ lookup('env', 'DB_ADMIN_PASSWORD') }}"
environment:\n  POSTGRES_PASSWORD_FILE: /run/secrets/pg_password
- name: SMTP_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: smtp\n      key: password
MasterUserPassword: '{{resolve:secretsmanager:prod/rds:SecretString:password}}'
export PGPASSWORD="$(op read op://Engineering/Postgres/password)"
GITHUB_TOKEN=<your-personal-access-token>
If you forget your password, click "Forgot password" on the sign-in page; we email a reset link.
Customer says password-reset mails land in spam. Checked SPF and DKIM, both pass.
<ana> where's the staging db password?\n<rui> 1Password, vault "Staging" - don't paste it here
Bitte ändern Sie Ihr Passwort alle 90 Tage.
Votre mot de passe doit contenir au moins 12 caractères, dont un chiffre.
¿Olvidaste tu contraseña? Te enviaremos un enlace para restablecerla.
请勿将密码告诉任何人，包括客服人员。
パスワードを忘れた方は、こちらから再設定してください。
비밀번호는 8자 이상이어야 합니다.
كلمة المرور غير صحيحة. حاول مرة أخرى.
Passwords are now hashed with Argon2id; old bcrypt hashes are upgraded at the next login.
if len(password) < MIN_PASSWORD_LENGTH:\n    raise ValueError("password too short")
<label for="pw">Password</label><input id="pw" name="password" type="password" required>
"password": {"type": "string", "minLength": 12, "writeOnly": true}
  -p, --password TEXT  SMTP password (read from SMTP_PASSWORD when unset)
FedEx tracking {d12}, delivered Tuesday
Your order 114-{d7}-{d7} is on its way
Build #1{d3} passed: https://github.com/acme/api/actions/runs/{d11}
"Role": "arn:aws:iam::{d12}:role/service-role/lambda-exec-{l8}",
Device MAC 3c:22:fb:{h2}:{h2}:{h2}, serial {U12}
const map = new mapboxgl.Map({ container: "map", \
accessToken: "pk.eyJ1IjoiYWNtZS1tYXBzIiwiYSI6I{u20}In0.{u22}" });
Transaction Hash: 0x{h64}\nStatus: Success\nBlock: {d8}
bitcoin txid {h64} confirmed (6 confirmations)
Solana signature {s88}
https://docs.google.com/document/d/{u44}/edit#heading=h.{l12}
Runbook: https://www.notion.so/acme/Runbook-{h32}
<input type="hidden" name="csrfmiddlewaretoken" value="{a64}">
https://app.acme.pt/callback?state={u43}&session_state={uuid}
# jwt verification key\n{pub}
chain.pem:\n{cert}\n{cert}
$ cat api.acme.pt.csr\n{csr}
UPS {ups} - out for delivery
Refund to {iban} (sandbox account)
IBAN format example: GB82 WEST 1234 5698 7654 32
ISBN {isbn}, 2nd edition, 412 pages
In test mode use card {card}, any future expiry and any CVC.
Wallet address (public, for donations): bc1q{e38}
"""

HOLDOUT10_SECRETS: tuple[Case, ...] = tuple(
    Case(kind, text) for kind, text in _typed(_COMMON) + _typed(_RARER)
)
HOLDOUT10_HARMLESS: tuple[Case, ...] = tuple(Case("", _fill(row)) for row in _rows(_LOOKALIKES))
