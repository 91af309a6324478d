"""An eighth held-out secret set, written without reading the detector (issue 17).

Written by a session that never opened the detector's code nor the notes about its misses; it
is measured, never tuned on. It is weighted roughly like published leak studies: about 60 %
common shapes written in ordinary ways (``.env`` files, CI YAML, docker-compose, Kubernetes
manifests and Secrets, Terraform and its state, cloud credential files, connection strings and
URIs, shell history and cron lines, notebook cells, server and framework configs, PEM private
keys, tokens of the big SaaS vendors, webhook URLs, passwords in English tickets and chat) and
about 40 % less common vendors, tools, file formats and phrasings (Akamai ``.edgerc``,
FileZilla, CIFS credentials, Windows unattend files, Redis ACLs, payment providers outside the
US, AI and vector-store vendors, tokens that are base64 of a structured value, passwords in
eleven more human languages). The look-alikes are request, trace and correlation ids, commit
SHAs, Gerrit change ids, checksums and lock-file hashes, content addresses, base64 images and
fonts, public keys, CSRs, CRLs and certificates, fingerprints, password hashes of many
schemes, encrypted and sealed values, masked values, references and documentation example
keys, prose about passwords, and random-looking public ids (orders, parcels, IBAN examples,
IMEIs, EANs, build and transaction ids, public client and zone ids).

Most cases are written as templates, one a line (``kind | text`` for secrets), so that each
reads like the file it comes from; see :func:`_expand` for the placeholders. Values come from
``random.Random(8008)`` in each format's shape (prefix, length, alphabet, and the checksum
where it is easy: GitHub and npm tokens' CRC32, IBAN mod 97, Luhn, EAN-13); none is real.
"""

from __future__ import annotations

import base64
import random
import re
import string
import textwrap
import uuid
import zlib
from collections.abc import Callable

from benchmarks.secret_corpus import Case

__all__ = ["HOLDOUT8_HARMLESS", "HOLDOUT8_SECRETS"]

_rng = random.Random(8008)
_HEX = "0123456789abcdef"
_ALNUM = string.digits + string.ascii_uppercase + string.ascii_lowercase  # base62 order
_ALPHABETS = {
    "a": _ALNUM,
    "h": _HEX,
    "H": _HEX.upper(),
    "u": _ALNUM + "-_",
    "b": _ALNUM + "+/",
    "d": string.digits,
    "l": string.ascii_lowercase + string.digits,
    "U": string.ascii_uppercase + string.digits,
    "k": string.ascii_uppercase + "234567",  # AWS key ids
    "x": string.ascii_letters,
    "s": _ALNUM + "*_=+-",  # Elasticsearch's generated passwords
    "j": string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)",  # Django secret keys
    "w": string.ascii_lowercase,  # Apple app-specific passwords
    "z": string.ascii_lowercase + "234567",  # Azure DevOps PATs
}
_WORDS = ("copper", "lantern", "glacier", "pumpkin", "saffron", "otter", "violet", "compass")


def _s(alphabet: str, n: int) -> str:
    """``n`` characters drawn from ``alphabet``."""
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _pw() -> str:
    """A password as people, generators and passphrase habits make them."""
    style = _rng.randrange(4)
    if style == 0:
        return _rng.choice(_WORDS).title() + str(_rng.randrange(1990, 2027)) + _rng.choice("!$#*")
    if style == 1:
        return _s(_ALNUM + "!%^*()-_=+", 20)
    if style == 2:
        return ".".join(_rng.sample(_WORDS, 4)) + str(_rng.randrange(10))
    word = _s(string.ascii_uppercase, 1) + _s(string.ascii_lowercase, 5)
    return word + _s(string.digits, 3) + _rng.choice("@?!") + _s(_ALNUM, 3)


def _uuid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _crc_token(prefix: str) -> str:
    """GitHub / npm token shape: 30 base62 characters, then their CRC32 in 6 base62 digits."""
    body = _s(_ALNUM, 30)
    value, tail = zlib.crc32(body.encode()), ""
    for _ in range(6):
        value, digit = divmod(value, 62)
        tail = _ALNUM[digit] + tail
    return prefix + body + tail


_NAMED: dict[str, Callable[[], str]] = {
    "pw": _pw,
    "uuid": _uuid,
    "UUID": lambda: _uuid().upper(),
    "akia": lambda: "AKIA" + _s(_ALPHABETS["k"], 16),
    "r32": lambda: _b64(_rng.randbytes(32)),
    "ghp": lambda: _crc_token("ghp_"),
    "ghu": lambda: _crc_token("ghu_"),
    "npm": lambda: _crc_token("npm_"),
}
_NAMES, _LETTERS = "|".join(_NAMED), "".join(_ALPHABETS)
_PLACEHOLDER = re.compile(rf"\{{(?:({_NAMES})|([{_LETTERS}])(\d+))\}}")


def _expand(template: str) -> str:
    """Fill a template's placeholders, left to right, from the seeded generator.

    ``{pw}`` a password, ``{uuid}`` / ``{UUID}`` a UUID4, ``{akia}`` an AWS key id, ``{r32}``
    base64 of 32 random bytes, ``{ghp}`` / ``{ghu}`` / ``{npm}`` a checksummed token, and
    ``{x40}`` 40 characters of alphabet ``x`` (see ``_ALPHABETS``). A literal ``\\n`` in the
    template becomes a line break.
    """

    def fill(match: re.Match[str]) -> str:
        name, alphabet, size = match.groups()
        return _NAMED[name]() if name else _s(_ALPHABETS[alphabet], int(size))

    return _PLACEHOLDER.sub(fill, template.replace("\\n", "\n"))


def _b64t(template: str) -> str:
    """Base64 of an expanded template (values that are encoded before they are stored)."""
    return _b64(_expand(template).encode())


def _pem(label: str, der_start: str, size: int = 300) -> str:
    """A PEM block whose base64 body starts like the real DER structure."""
    body = "\n".join(textwrap.wrap(der_start + _s(_ALPHABETS["b"], size - len(der_start)), 64))
    return f"-----BEGIN {label}-----\n{body}=\n-----END {label}-----"


def _iban(country: str, bank: str, digits: int) -> str:
    bban = bank + _s(string.digits, digits)
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _luhn(partial: str) -> str:
    """``partial`` with its Luhn check digit appended (IMEIs, card numbers)."""
    doubled = [int(c) * (1 + (i % 2 == 0)) for i, c in enumerate(reversed(partial))]
    return partial + str(-sum(d // 10 + d % 10 for d in doubled) % 10)


def _ean13(partial: str) -> str:
    weighted = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(partial))
    return partial + str(-weighted % 10)


def _colons(pairs: int, alphabet: str = _HEX.upper()) -> str:
    return ":".join(_s(alphabet, 2) for _ in range(pairs))


def _lines(block: str) -> list[str]:
    """The non-blank lines of a block of templates."""
    return [line for line in block.strip("\n").splitlines() if line.strip()]


_OPENSSH = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ"
_PKCS8 = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ"

_SECRET_LINES = r"""
openai_env | # LLM\nOPENAI_API_KEY=sk-proj-{u74}T3BlbkFJ{u74}
aws_env | # .env.production\nAWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={b40}
stripe_env | STRIPE_PUBLIC_KEY=pk_live_51{a97}\nSTRIPE_SECRET_KEY=sk_live_51{a97}
django_env | DEBUG=False\nDJANGO_SECRET_KEY={j50}
heroku_db_url | DATABASE_URL=postgres://u{l13}:p{h63}@ec2-52-1-9-4.compute-1.amazonaws.com/d{l13}
laravel_mail | MAIL_USERNAME=apikey\nMAIL_PASSWORD=SG.{u22}.{u43}
nextauth | NEXTAUTH_URL=https://app.acme.dev\nNEXTAUTH_SECRET={r32}
jwt_env | JWT_SECRET={h64}\nJWT_EXPIRES_IN=7d
anthropic_env | CLAUDE_API_KEY=sk-ant-api03-{u93}AA
neo4j_aura | NEO4J_URI=neo4j+s://{h8}.databases.neo4j.io\nNEO4J_USERNAME=neo4j\nNEO4J_PASSWORD={u43}
gha_npm | - run: npm publish\n  env:\n    NODE_AUTH_TOKEN: {npm}
gitlab_trigger | script:\n  - curl -X POST -F token=glptt-{h40} -F ref=main "$TRIGGER_URL"
bitbucket_pipe | variables:\n  AWS_ACCESS_KEY_ID: '{akia}'\n  AWS_SECRET_ACCESS_KEY: '{b40}'
travis_pypi | deploy:\n  provider: pypi\n  user: __token__\n  password: pypi-AgEIcHlwaS5vcmc{u150}
codecov | environment:\n  CODECOV_TOKEN: {uuid}
compose_mysql | wp-db:\n  environment:\n    MYSQL_USER: wp\n    MYSQL_PASSWORD: {pw}
compose_grafana | grafana:\n  environment:\n    - GF_SECURITY_ADMIN_PASSWORD={pw}
compose_redis | cache:\n  image: redis:7\n  command: redis-server --requirepass {pw}
compose_pgadmin | PGADMIN_DEFAULT_EMAIL: ops@acme.dev\nPGADMIN_DEFAULT_PASSWORD: '{pw}'
k8s_env_aws | env:\n- name: AWS_SECRET_ACCESS_KEY\n  value: {b40}
k8s_configmap_slack | kind: ConfigMap\ndata:\n  SLACK_TOKEN: xoxb-{d12}-{d13}-{a24}
kubectl_regcred | kubectl create secret docker-registry regcred --docker-password='{pw}'
tfvars_github | github_owner = "acme"\ngithub_token = "{ghp}"
tf_cloudflare | provider "cloudflare" {\n  api_token = "{u40}"\n}
tf_rds | resource "aws_rds_cluster" "main" {\n  master_password = "{pw}"\n}
doctl_config | access-token: ""\nauth-contexts:\n  default: dop_v1_{h64}\ncontext: default
aws_session | [prod]\naws_access_key_id = ASIA{k16}\naws_secret_access_key = {b40}
amqp_uri | broker_url = 'amqps://worker:{pw}@b-1.mq.eu-west-1.amazonaws.com:5671/orders'
mssql_sqlalchemy | engine = create_engine("mssql+pyodbc://sa:{pw}@sql02:1433/crm?driver=ODBC+18")
neo4j_uri | driver = GraphDatabase.driver("neo4j+s://neo4j:{u43}@{h8}.databases.neo4j.io")
clickhouse_uri | CLICKHOUSE_DSN=clickhouse://default:{pw}@ch01.acme.dev:9440/analytics
pip_git_pat | RUN pip install git+https://{ghp}@github.com/acme/internal-sdk.git@v2.1.0
history_apikey |   877  curl -s -H "X-API-KEY: {a40}" https://api.acme-partners.com/v1/stock
history_mongodump |   230  mongodump --uri="mongodb+srv://admin:{pw}@cluster1.xk2pq.mongodb.net/s"
history_aws |   415  aws configure set aws_secret_access_key {b40} --profile ops
cron_mysqldump | 0 3 * * * mysqldump -uroot --password='{pw}' shop | gzip > /backup/shop.gz
nb_boto3 | s3 = boto3.client('s3', aws_access_key_id='{akia}', aws_secret_access_key='{b40}')
tomcat_datasource | <Resource name="jdbc/shop" username="shop" password="{pw}"/>
grafana_datasource |     user: grafana\n    secureJsonData:\n      password: {pw}
prometheus_basic | - job_name: node\n  basic_auth:\n    username: scraper\n    password: {pw}
alertmanager_smtp | global:\n  smtp_auth_username: alerts\n  smtp_auth_password: {pw}
alertmanager_slack | - api_url: https://hooks.slack.com/services/T0{U8}/B0{U9}/{a24}
pip_conf | [global]\nextra-index-url = https://__token__:glpat-{u20}@gitlab.acme.dev/pypi/simple
yarnrc | npmScopes:\n  acme:\n    npmAuthToken: "{npm}"
rails_master_key | $ cat config/master.key\n{h32}
flask_secret | app = Flask(__name__)\napp.secret_key = '{u32}'
express_session | app.use(session({ secret: '{a28}', resave: false }))
spring_oauth | spring.security.oauth2.client.registration.github.client-secret={h40}
github_fine_grained | curl -H "Authorization: token github_pat_11{U20}_{a59}" https://api.github.com
github_ghu | const octokit = new Octokit({ auth: '{ghu}' });
slack_user_token | https://slack.com/api/chat.postMessage?token=xoxp-{d12}-{d12}-{d13}-{h32}&channel=C1
twilio_node | const client = twilio('AC{h32}', '{h32}');
sendgrid_php | $sendgrid = new \SendGrid('SG.{u22}.{u43}');
shopify_custom_app | X-Shopify-Access-Token: shpca_{h32}
atlassian_curl | curl -u ana@acme.dev:ATATT3xFfGF0{u180}={H8} https://acme.atlassian.net/rest/api/3/myself
azure_devops_pat | git clone https://{z52}@dev.azure.com/acme/infra/_git/infra
aws_java | AWSCredentials creds = new BasicAWSCredentials("{akia}", "{b40}");
heroku_netrc | machine api.heroku.com\n  login dev@acme.dev\n  password {uuid}
openai_js | const openai = new OpenAI({ apiKey: 'sk-svcacct-{u74}T3BlbkFJ{u74}' });
paypal | PAYPAL_CLIENT_ID=A{u79}\nPAYPAL_CLIENT_SECRET=E{u79}
newrelic_license | common: &default_settings\n  license_key: eu01xx{h30}NRAL
trello | https://api.trello.com/1/boards/x/cards?key={h32}&token=ATTA{h64}{H8}
zendesk | curl https://acme.zendesk.com/api/v2/tickets.json -u agent@acme.dev/token:{a40}
llamacloud | LlamaParse(api_key="llx-{a48}", result_type="markdown")
tavily | tool = TavilySearch(tavily_api_key="tvly-dev-{a32}")
elevenlabs | ELEVENLABS_API_KEY=sk_{h48}
deepseek | client = OpenAI(api_key="sk-{h32}", base_url="https://api.deepseek.com")
vercel | vercel deploy --prod --token {a24}
backblaze | B2_APPLICATION_KEY_ID=005{h22}\nB2_APPLICATION_KEY=K005{a27}
minio_alias | mc alias set prod https://s3.acme.dev {U20} {a40}
paystack | PAYSTACK_SECRET_KEY=sk_live_{h40}
flutterwave | FLW_SECRET_KEY=FLWSECK-{h32}-X
mollie | $mollie->setApiKey('live_{a30}');
salesforce | SF_USERNAME=integration@acme.dev\nSF_PASSWORD={pw}\nSF_SECURITY_TOKEN={a24}
ably | const ably = new Ably.Realtime('{u6}.{u6}:{u43}');
splunk_hec | Authorization: Splunk {UUID}
reddit_praw | [bot1]\nclient_id={u22}\nclient_secret={u30}\nusername=acme_bot\npassword={pw}
confluent_kafka | sasl.mechanisms=PLAIN\nsasl.username={U16}\nsasl.password={b64}
auth0 | AUTH0_DOMAIN=acme.eu.auth0.com\nAUTH0_CLIENT_SECRET={u64}
ldap_passport | bindDN: 'CN=svc_web,OU=svc,DC=acme,DC=local', bindCredentials: '{pw}' }
hardhat_key | networks: { sepolia: { url: RPC_URL, accounts: ['{h64}'] } },
jenkins_initial | Please use the following password to proceed to installation:\n\n{h32}
elastic_reset | Password for the [elastic] user successfully reset.\nNew value: {s20}
neo4j_admin | neo4j-admin dbms set-initial-password '{pw}'
django_session_cookie | curl 'https://shop.acme.dev/admin/' -H 'Cookie: sessionid={l32}'
tsql_login | CREATE LOGIN etl_loader WITH PASSWORD = '{pw}', CHECK_POLICY = OFF;
redis_acl | ACL SETUSER worker on >{pw} ~jobs:* +@list +@connection
unattend_xml | <AdministratorPassword>\n  <Value>{pw}</Value>\n  <PlainText>true</PlainText>
cifs_credentials | # /root/.smbcred\nusername=scanner\npassword={pw}\ndomain=ACME
fstab_cifs | //nas02/media /mnt/media cifs username=media,password={pw},uid=1000 0 0
iwd_psk | # /var/lib/iwd/AcmeLab.psk\n[Security]\nPassphrase={pw}
dovecot_plain | jdoe@acme.dev:{PLAIN}{pw}::::::
restic | export RESTIC_REPOSITORY=s3:s3.amazonaws.com/acme-backup\nexport RESTIC_PASSWORD='{pw}'
qdrant | QdrantClient(url="https://{uuid}.eu-central-1-0.aws.cloud.qdrant.io", api_key="{u43}")
tfstate | {"type": "aws_db_instance", "instances": [{"attributes": {"password": "{pw}"}}]}
azure_sp | {"appId": "{uuid}", "password": "{a3}8Q~{u34}", "tenant": "{uuid}"}
gcp | {"client_secret": "GOCSPX-{u28}", "refresh_token": "1//03{u98}", "type": "authorized_user"}
aws_session_token | aws_session_token = IQoJb3JpZ2luX2VjEJr{b300}
nb_openai_legacy | {"cell_type": "code", "source": ["openai.api_key = \"sk-{a48}\""]}
nb_hf_login | {"cell_type": "code", "source": ["login(token=\"hf_{x34}\")"]}
nb_gemini | {"source": ["genai.configure(api_key='AIza{u35}')"]}
keycloak_adapter | {"realm": "acme", "resource": "orders-api", "credentials": {"secret": "{a32}"}}
fastlane | FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD={w4}-{w4}-{w4}-{w4}
akamai | client_secret = {r32}\naccess_token = akab-{l16}-{l16}\nclient_token = akab-{l16}-{l16}
ticket_en | SUP-20931: customer gave us their login to reproduce: user m.keller, pass {pw}
pr_comment | oops, I pasted my token in the fixture earlier ({ghp}), revoking now
stackoverflow | My code:\n\n    conn = pymysql.connect(host=h, user='root', passwd='{pw}')\n\nhangs.
chat_en | [14:03] raj: whats the grafana admin pw again\n[14:04] lea: {pw}
mail_en | Hello Priya,\nyour build server account is ready.\nUser: priya\nOne-time password: {pw}
ticket_de | Zugangsdaten für den Drucker-Webserver: Benutzer admin, Kennwort {pw}
chat_fr | le mdp du compte de test c'est {pw} stp ne le mets pas dans le wiki
mail_es | Te paso la clave del FTP: {pw} (usuario: proveedores)
prose_no | Passordet til gjestenettet er {pw}
prose_hu | A szerver jelszava: {pw}
prose_he | הסיסמה לשרת היא {pw}
prose_th | รหัสผ่านของเซิร์ฟเวอร์คือ {pw}
prose_ms | Kata laluan pangkalan data ialah {pw}
prose_fa | رمز عبور سرور {pw} است
prose_zh_tw | 測試機的密碼是 {pw}，用完請改掉。
chat_ja | 田中: 検証環境のパスワード：{pw}
"""

_SECRETS = [
    (kind, _expand(text)) for kind, text in (ln.split(" | ", 1) for ln in _lines(_SECRET_LINES))
]
_SECRETS += [
    ("k8s_secret_url", "kind: Secret\ndata:\n  DATABASE_URL: " + _b64t("postgresql://o:{pw}@pg/o")),
    ("intercom", "INTERCOM_ACCESS_TOKEN=" + _b64t("tok:{uuid}:1:0")),
    ("jfrog_identity", "accessToken: " + _b64t("reftkn:01:{d10}:{u32}").rstrip("=")),
    ("grafana_cloud", "GRAFANA_CLOUD_TOKEN=glc_" + _b64t('{"o":"{d6}","n":"ingest","k":"{a24}"}')),
    (
        "neptune",
        "NEPTUNE_API_TOKEN=" + _b64t('{"api_address":"https://app.neptune.ai","api_key":"{uuid}"}'),
    ),
    ("har_basic", '{"name": "Authorization", "value": "Basic ' + _b64t("reports:{pw}") + '"}'),
    ("filezilla", '<User>uploads</User>\n<Pass encoding="base64">' + _b64t("{pw}") + "</Pass>"),
    ("discord_config", '{"token": "' + _b64t("1{d18}").rstrip("=") + _expand('.{u6}.{u38}"}')),
    (
        "rsa_key_python",
        'PRIVATE_KEY = """' + _pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1600) + '"""',
    ),
    (
        "openssh_key_ticket",
        "Here is the deploy key:\n" + _pem("OPENSSH PRIVATE KEY", _OPENSSH, 380),
    ),
    (
        "pkcs8_env",
        'FIREBASE_PRIVATE_KEY="' + _pem("PRIVATE KEY", _PKCS8, 1600).replace("\n", "\\n") + '"',
    ),
    ("ec_key", _pem("EC PRIVATE KEY", "MHcCAQEEI", 220)),
]

_HARMLESS_LINES = r"""
Something went wrong. Correlation ID: {uuid}
{"error": {"code": "rate_limited", "requestId": "{uuid}"}}
X-Cloud-Trace-Context: {h32}/{d19};o=1
2025-06-02 08:14:11,032 INFO [worker-3] job {uuid} done in 412 ms
Idempotency-Key: {uuid}
"operationId": "operation-{d13}-{h13}-{h8}-{h8}"
$ git rev-parse HEAD\n{h40}
See https://github.com/acme/shop/commit/{h40} for the fix.
Change-Id: I{h40}\nSigned-off-by: Ana Ruiz <ana@acme.dev>
v2.8.0-14-g{h7}
acme-sdk @ git+https://github.com/acme/sdk-python@{h40}
$ sha256sum acme-agent-1.9.3.deb\n{h64}  acme-agent-1.9.3.deb
  url "https://downloads.acme.dev/cli-4.2.0.tar.gz"\n  sha256 "{h64}"
Checksums-Sha256:\n {h64} 18244 acme_1.2-1.dsc
"narHash": "sha256-{r32}"
  "content-hash": "{h32}",
{h40}  commons-io-2.16.1.jar.sha1
REPOSITORY   TAG     IMAGE ID       CREATED\nacme/api     1.4.2   {h12}   2 days ago
Content-Security-Policy: script-src 'self' 'sha256-{r32}'
https://www.gravatar.com/avatar/{h32}?s=80&d=identicon
ETag: "{h32}-17"
<img src="data:image/webp;base64,UklGR{b180}" alt="hero">
<link rel="icon" href="data:image/x-icon;base64,AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQ{b160}">
@font-face { font-family: Inter; src: url(data:font/ttf;base64,AAEAAAASAQAABAAgR0RFRg{b200}); }
src: url('data:application/font-woff;base64,d09GRgABAAAAA{b150}') format('woff');
{"attachments": [{"filename": "chart.jpg", "data": "/9j/4AAQSkZJRgABAgAAAQABAAD{b160}"}]}
ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b87}= root@bastion
@cert-authority *.acme.dev ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43}
ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAACAQ{b300} jenkins@build-02
ed25519_public_key_hex: {h64}
The key fingerprint is:\nSHA256:{b43} mia@laptop\nThe key's randomart image is:
pub   rsa4096 2023-04-11 [SC]\n      {H40}\nuid   Acme Releases <release@acme.dev>
encrypted_password: $2a$11${b53}
olduser:$1${a8}${a22}:18000:0:99999:7:::
svc:$5$rounds=535000${a16}${a43}
password_hash = 'scrypt:32768:8:1${a16}${h128}'
$pbkdf2-sha512$25000${a22}${a86}
userPassword: {SSHA512}{b96}
user_pass: $P$B{a30}
enable secret 8 $8${a14}${a43}
DB_PASSWORD=ENC[AES256_GCM,data:{b20}=,iv:{b43}=,tag:{b22}==,type:str]
{"_public_key": "{h64}", "db_password": "EJ[1:{b43}=:{b32}:{b40}]"}
DOTENV_VAULT_PRODUCTION="{b160}=="
DbPassword=@Microsoft.KeyVault(SecretUri=https://kv-acme.vault.azure.net/secrets/db-password/)
sops:\n  kms:\n  - arn: arn:aws:kms:eu-west-1:111122223333:key/{uuid}\n    enc: AQICAHj{b180}
Incorrect API key provided: sk-proj-{a4}****************************************{a4}
2025-05-30T09:12:44Z docker login -u ci-bot -p *** registry.acme.dev
Password: "******"  (masked by the Mask Passwords plugin)
token=xxxxxxxxxxxxxxxxxxxxxxxx&user=demo
DATABASE_URL: postgres://app:********@db.internal:5432/app
Secret access key: ****************************************
API key: …a91f (created 12 Mar, last used 2 days ago)
[config] smtp_password = <redacted by logger>
curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:
const stripe = Stripe('pk_test_TYooMQauvdEDq54NiTphI7jx');
SLACK_BOT_TOKEN=xoxb-not-a-real-token-this-will-not-work
keystore password: changeit (the JDK default; set your own)
- task: Docker@2\n  inputs:\n    password: $(System.AccessToken)
set DB_PASSWORD=%DB_PASSWORD_FROM_VAULT%
Octopus variable: #{Database.Password}
"password": "${env:API_PASSWORD}"
NEO4J_AUTH=neo4j/${NEO4J_PASSWORD}
api_key: YOUR_TAVILY_API_KEY  # get one at app.tavily.com
HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
ANTHROPIC_API_KEY=sk-ant-... # see .env.example
Hinweis: Das Kennwort läuft nach 60 Tagen ab und muss dann neu gesetzt werden.
Passordet må ha minst 14 tegn og kan ikke gjenbrukes.
We never ask for your password by email or chat. If someone does, report it.
密碼錯誤次數過多，帳號已被鎖定 15 分鐘。
Sua senha foi alterada com sucesso. Se não foi você, entre em contato.
SUP-20932: customer can't log in after the password reset; sent a new reset link.
[11:20] tom: did anyone rotate the stripe key?\n[11:21] ana: yes, new one is in 1Password
ERROR 1045 (28000): Access denied for user 'app'@'10.0.3.7' (using password: YES)
Your order #{d10} has shipped; FedEx tracking {d12}.
USPS tracking: 9400 1{d3} {d4} {d4} {d4} {d2}
Example IBAN from the standard: GB82 WEST 1234 5698 7654 32
Twilio message SM{h32} delivered to +44 7700 900123
tx 0x{h64} confirmed in block 20481337
Slack channel C0{U9} in workspace T0{U9}
zone_id = "{h32}"\naccount_id = "{h32}"
AUTH0_CLIENT_ID={a32}
ALGOLIA_APP_ID={U10}
https://docs.google.com/spreadsheets/d/1{u43}/edit#gid=0
https://www.notion.so/acme/Runbook-{h32}
airtable base app{a14}, table tbl{a14}
ocid1.instance.oc1.eu-frankfurt-1.{l60}
Build #{d4} (run {d10}) passed on runner i-{h17}
pod/api-{l10}-{l5} 1/1 Running
price_{a24} belongs to prod_{a14}
Apple Team ID {U10}, bundle com.acme.shop
"""

_HARMLESS = [_expand(line) for line in _lines(_HARMLESS_LINES)]
_HARMLESS += [
    "AWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE\n"
    "AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    "Default region name [None]: us-west-2",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "ipfs cat Qm" + _s("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 44),
    _pem("CERTIFICATE REQUEST", "MIICvDCCAaQCAQAwdzELMAkGA1UEBhMC", 700),
    _pem("X509 CRL", "MIIBzTCBtgIBATANBgkqhkiG9w0BAQsFADBC", 400),
    "cosign.pub:\n" + _pem("PUBLIC KEY", "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE", 124),
    "# fullchain.pem\n" + _pem("CERTIFICATE", "MIIFBjCCA+6gAwIBAgISA", 900),
    "sha256 Fingerprint=" + _colons(32),
    "SHA-256 certificate fingerprint: " + _colons(32),
    '"KeyFingerprint": "' + _colons(20, _HEX) + '"',
    "Sandbox payout IBAN " + _iban("NL", "ABNA", 10),
    "IMEI: " + _luhn("35" + _s(string.digits, 12)),
    "EAN: " + _ean13(_s(string.digits, 12)),
    f"Discord user id {_rng.randrange(10**17, 2 * 10**18)} joined the server",
]

HOLDOUT8_SECRETS: tuple[Case, ...] = tuple(Case(kind, text) for kind, text in _SECRETS)
HOLDOUT8_HARMLESS: tuple[Case, ...] = tuple(Case("", text) for text in _HARMLESS)
