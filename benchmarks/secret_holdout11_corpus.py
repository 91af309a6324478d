"""An eleventh held-out secret set, written without reading the detector (issue 17).

Written by a session that opened neither the detector's code nor the notes about its misses;
measured once, never tuned on. About 60 % common shapes written the ordinary way (``.env``
files, CI pipelines, docker-compose, Kubernetes, Helm, Terraform and its state, cloud and
package-manager credential files, connection strings, shell history, notebooks, server configs,
PEM private keys, big SaaS vendors' tokens, webhooks, passwords in English tickets, chat, mail)
and 40 % less common tools, vendors and phrasings (backup tools, age identities with their
bech32 checksum, network gear, database shells, deploy, observability, AI and payment vendors,
wallet keys, tokens that are base64 of JSON, mobile signing, home automation, passwords in
thirteen more languages). Look-alikes: request and task ids, commit SHAs, checksums, lock and
content hashes, base64 media, public keys, certificates, fingerprints, password hashes,
encrypted, masked and referenced values, documentation example keys and placeholders, settings
named like secrets, prose about passwords in many languages, public ids (orders, parcels, IBANs
with mod 97, Luhn cards and IMEIs, ISINs, builds, chat and cloud ids).

Secrets are ``kind | template`` rows, look-alikes template rows (a trailing backslash continues
a row); :func:`_fill` fills the slots from ``random.Random(11011)`` (``Values(11011)``) in each
format's shape; none is real.
"""

from __future__ import annotations

import base64
import json
import re
import textwrap
import uuid
import zlib
from collections.abc import Callable
from urllib.parse import quote

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B32, B64, BECH32, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT11_HARMLESS", "HOLDOUT11_SECRETS"]

_values = Values(11011)
_rng, _g = _values.rng, _values.g
_BASE62 = D + UP + LO
# Slot letters and the alphabets they draw from (p: Django keys, q: crypt(3), t: Azure secrets).
_ALPHABETS = {
    "a": AN, "b": B64, "d": D, "h": HX, "H": HX.upper(), "l": LO + D, "u": URL, "U": UP + D,
    "p": LO + D + "!@#$%^&*(-_=+)", "q": "./" + AN, "t": URL + ".~", "w": LO, "x": UP + LO,
    "z": LO + "234567",
}  # fmt: skip
_SEASONS = ("Spring", "Summer", "Autumn", "Winter")
_PETS = ("Biscuit", "Mochi", "Pepper", "Rocco", "Luna", "Tofu", "Nala", "Simba")
_BIP39 = (
    "abandon canyon drift elegant fossil harvest jungle lemon marble orbit pistol quantum rescue "
    "salmon tissue velvet wisdom yellow anchor blossom copper dinosaur galaxy hobby"
)
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _pw() -> str:
    """A password as people pick them: season and year, pet and date, generated, syllables."""
    habit = _rng.randrange(5)
    if habit == 0:
        return _rng.choice(_SEASONS) + str(_rng.randrange(2019, 2027)) + _rng.choice("!@#")
    if habit == 1:
        day, month = _rng.randrange(1, 29), _rng.randrange(1, 13)
        return f"{_rng.choice(_PETS)}{day:02d}{month:02d}{_rng.choice('$%*')}"
    if habit == 2:
        return _g(AN + "#%&*+-=?@^_", 18)
    if habit == 3:
        syllables = (_g(UP, 1) + _g("aeiou", 1) + _g("bdfgkmnprstvz", 1) for _ in range(3))
        return "-".join(syllables) + "-" + _g(D, 2)
    return _g(LO, 4) + _g(D, 4) + _g(UP, 2)


def _uuid4() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def _b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _b64json(value: dict[str, object]) -> str:
    return _b64u(json.dumps(value, separators=(",", ":")).encode())


def _crc_token(prefix: str) -> str:
    """A GitHub-style token: 30 base62 characters, then their CRC32 in 6 base62 digits."""
    body = _g(_BASE62, 30)
    crc = zlib.crc32(body.encode())
    return prefix + body + "".join(_BASE62[crc // 62**i % 62] for i in reversed(range(6)))


def _jwt(claims: dict[str, object], alg: str = "HS256") -> str:
    """A JWT with real JSON header and claims and a random signature of the algorithm's size."""
    signature = _rng.randbytes(256 if alg.startswith("RS") else 32)
    return ".".join([_b64json({"alg": alg, "typ": "JWT"}), _b64json(claims), _b64u(signature)])


def _pem(label: str, head: str, size: int, joiner: str = "\n", indent: str = "") -> str:
    """A PEM block of ``size`` base64 characters starting with ``head`` (the DER prefix)."""
    rows = textwrap.wrap(head + _g(B64, size - len(head)), 64)
    block = [f"-----BEGIN {label}-----", *rows, f"-----END {label}-----"]
    return joiner.join(indent + row for row in block)


def _bech32(hrp: str, data: bytes) -> str:
    """Bech32 (BIP 173) of ``data`` under ``hrp``, checksum included, in lower case."""
    pad = -len(data) * 8 % 5
    number, count = int.from_bytes(data, "big") << pad, (len(data) * 8 + pad) // 5
    words = [number >> 5 * (count - 1 - i) & 31 for i in range(count)]
    check = 1
    for value in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + words + [0] * 6:
        top, check = check >> 25, (check & 0x1FFFFFF) << 5 ^ value
        for bit, generator in enumerate(_BECH32_GEN):
            check ^= generator if top >> bit & 1 else 0
    checksum = [(check ^ 1) >> 5 * (5 - i) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[w] for w in words + checksum)


def _luhn(body: str) -> str:
    """``body`` and its Luhn check digit (cards, IMEIs, ISINs)."""
    total = sum(sum(divmod(int(c) * (2 - i % 2), 10)) for i, c in enumerate(reversed(body)))
    return body + str(-total % 10)


def _isin(country: str) -> str:
    body = country + _g(UP + D, 9)
    return body + _luhn("".join(str(int(c, 36)) for c in body))[-1]


def _iban(country: str, bban: str) -> str:
    """An IBAN whose two check digits satisfy mod 97."""
    remainder = int("".join(str(int(c, 36)) for c in bban + country + "00")) % 97
    return f"{country}{98 - remainder:02d}{bban}"


_OPENSSH = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB"
_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle r="7"/></svg>'
_MAKERS: dict[str, Callable[[], str]] = {
    "pw": _pw,
    "upw": lambda: quote(_pw(), safe=""),
    "uuid": _uuid4,
    "akia": lambda: "AKIA" + _g(B32, 16),
    "asia": lambda: "ASIA" + _g(B32, 16),
    "ghp": lambda: _crc_token("ghp_"),
    "r32": lambda: b64(_rng.randbytes(32)),
    "akiab64": lambda: b64("AKIA" + _g(B32, 16)),
    "awsb64": lambda: b64(_g(B64, 40)),
    "quayauth": lambda: b64("lumen+ci:" + _g(UP + D, 64)),
    "nexusauth": lambda: b64("deploy:" + _pw()),
    "zendesk": lambda: b64("agent@lumen-labs.io/token:" + _g(AN, 40)),
    "esapikey": lambda: b64(_g(URL, 20) + ":" + _g(URL, 22)),
    "discord": lambda: _b64u(("1" + _g(D, 17)).encode()) + "." + _g(URL, 6) + "." + _g(URL, 38),
    "sajwt": lambda: _jwt({"iss": "kubernetes/serviceaccount", "sub": "ci:deployer"}, "RS256"),
    "hajwt": lambda: _jwt({"iss": _g(HX, 32), "iat": 1736500000, "exp": 2051860000}),
    "sentry": lambda: f"sntrys_{_b64json({'iat': 1738000000.1, 'org': 'lumen'})}_{_g(URL, 43)}",
    "glc": lambda: "glc_" + _b64json({"o": _g(D, 6), "n": "hm-write", "k": _g(AN, 24)}),
    "cftunnel": lambda: _b64json({"a": _g(HX, 32), "t": _uuid4(), "s": b64(_rng.randbytes(32))}),
    "opsa": lambda: "ops_" + _b64json({"signInAddress": "lumen.1password.eu", "srpX": _g(HX, 64)}),
    "mnemonic": lambda: " ".join(_rng.choices(_BIP39.split(), k=12)),
    "agesk": lambda: _bech32("age-secret-key-", _rng.randbytes(32)).upper(),
    "agepk": lambda: _bech32("age", _rng.randbytes(32)),
    "rsaesc": lambda: _pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1588, "\\n") + "\\n",
    "ed": lambda: _pem("OPENSSH PRIVATE KEY", _OPENSSH, 400),
    "pk8": lambda: _pem("PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 1624),
    "ecind": lambda: _pem("EC PRIVATE KEY", "MHcCAQEEI", 164, indent="    "),
    "pgppub": lambda: _pem("PGP PUBLIC KEY BLOCK", "mDMEZ", 300).replace("-\n", "-\n\n", 1),
    "cert": lambda: _pem("CERTIFICATE", "MIIDxTCCAq2gAwIBAgIQAqxcJmoLQJuPC3nyrkYldzANBgkq", 1300),
    "pubpem": lambda: _pem("PUBLIC KEY", "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE", 124),
    "svg": lambda: b64(_SVG),
    "ibande": lambda: _iban("DE", _g(D, 18)),
    "ibanes": lambda: _iban("ES", _g(D, 20)),
    "card": lambda: _luhn("5555" + _g(D, 11)),
    "imei": lambda: _luhn("35" + _g(D, 12)),
    "isin": lambda: _isin("US"),
    "colon20": lambda: ":".join(_g(HX.upper(), 2) for _ in range(20)),
}
_SLOT = re.compile(r"\{(" + "|".join(_MAKERS) + "|[" + "".join(_ALPHABETS) + r"]\d+)\}")


def _fill(template: str) -> str:
    """Replace each slot, left to right, with a fresh value; ``\\n`` becomes a line break.

    A slot is a named maker (``{pw}``, ``{uuid}``, ``{ghp}``, ...) or an alphabet letter and
    a length (``{h32}``: 32 characters of ``_ALPHABETS["h"]``).
    """

    def value(match: re.Match[str]) -> str:
        name = match[1]
        return _MAKERS[name]() if name in _MAKERS else _g(_ALPHABETS[name[0]], int(name[1:]))

    return _SLOT.sub(value, template.replace("\\n", "\n"))


def _rows(block: str) -> list[str]:
    """The block's non-blank rows, with backslash-continued lines joined."""
    return [row for row in block.replace("\\\n", "").splitlines() if row.strip()]


def _secrets(block: str) -> list[Case]:
    return [Case(kind, _fill(text)) for kind, text in (r.split(" | ", 1) for r in _rows(block))]


# Common shapes, written the ordinary way.
_COMMON = r"""
env_laravel | APP_NAME=Tienda\nAPP_ENV=production\nAPP_KEY=base64:{r32}\nAPP_DEBUG=false
env_stripe_pair | STRIPE_PUBLISHABLE_KEY=pk_live_51{a97}\nSTRIPE_SECRET_KEY=sk_live_51{a97}
env_openai_org | OPENAI_ORG_ID=org-{a24}\nOPENAI_API_KEY=sk-proj-{u74}T3BlbkFJ{u74}
env_prisma | DATABASE_URL="postgresql://lumen:{upw}@db.lumen-labs.io:5432/lumen?schema=public"
env_algolia | ALGOLIA_APP_ID={U10}\nALGOLIA_ADMIN_API_KEY={h32}
env_discord_hook | DISCORD_ALERTS_WEBHOOK=https://discord.com/api/webhooks/{d19}/{u68}
env_redis_cloud | REDIS_HOST=redis-{d5}.c{d3}.eu-west-1-2.ec2.redns.redis-cloud.com\n\
REDIS_PORT=1{d4}\nREDIS_PASSWORD={a32}
env_gh_pat | GITHUB_OWNER=lumen-labs\nGITHUB_PAT=github_pat_11{U20}_{a59}
gha_twine | - name: Publish\n  run: twine upload dist/*\n  env:\n    TWINE_USERNAME: __token__\n\
    TWINE_PASSWORD: pypi-AgEIcHlwaS5vcmcCJD{u140}
gha_docker_hub | - uses: docker/login-action@v3\n  with: { username: ci, password: dckr_pat_{u27} }
gitlab_ci_aws | variables:\n  AWS_ACCESS_KEY_ID: {akia}\n  AWS_SECRET_ACCESS_KEY: {b40}
azure_pipe_arm | variables:\n  ARM_CLIENT_ID: {uuid}\n  ARM_CLIENT_SECRET: {a3}7Q~{t34}
jenkins_docker | steps {\n  sh 'docker login -u lumen-ci -p {pw} harbor.lumen-labs.io'\n}
compose_mysql | services:\n  mysql:\n    image: mysql:8.4\n    environment:\n\
      MYSQL_DATABASE: wiki\n      MYSQL_USER: wiki\n      MYSQL_PASSWORD: {pw}
compose_grafana | grafana:\n  image: grafana/grafana\n  environment:\n\
    - GF_SECURITY_ADMIN_USER=ops\n    - GF_SECURITY_ADMIN_PASSWORD={pw}
k8s_data_aws | apiVersion: v1\nkind: Secret\nmetadata:\n  name: s3-backup\ntype: Opaque\ndata:\n\
  AWS_ACCESS_KEY_ID: {akiab64}\n  AWS_SECRET_ACCESS_KEY: {awsb64}
k8s_configmap_ses | kind: ConfigMap\nmetadata:\n  name: mailer-config\ndata:\n\
  SMTP_HOST: email-smtp.eu-west-1.amazonaws.com\n  SMTP_USERNAME: {akia}\n  SMTP_PASSWORD: B{b43}
helm_set_pw | helm install wiki-db bitnami/postgresql -n wiki --set auth.postgresPassword={pw}
kubectl_regcred | kubectl create secret docker-registry regcred --docker-server=ghcr.io \
--docker-username=lumen-bot --docker-password={ghp}
kubeconfig_token | users:\n- name: ci-deployer\n  user:\n    token: {sajwt}
k8s_tls_key | kind: Secret\ntype: kubernetes.io/tls\nstringData:\n  tls.key: |\n{ecind}
tfvars_github | github_owner = "lumen-labs"\ngithub_token = "{ghp}"
tf_rds_password | resource "aws_db_instance" "wiki" {\n  username = "wiki"\n  password = "{pw}"\n}
tfvars_cloudflare | cloudflare_api_token = "{u40}"\nzone_id              = "{h32}"
tfstate_tls_key | "type": "tls_private_key",\n\
"instances": [{"attributes": {"algorithm": "RSA", "private_key_pem": "{rsaesc}"}}]
aws_session_creds | [lumen-dev]\naws_access_key_id = {asia}\naws_secret_access_key = {b40}\n\
aws_session_token = IQoJb3JpZ2luX2VjE{b300}
gcloud_adc | {\n  "client_id": "{d12}-{l32}.apps.googleusercontent.com",\n\
  "client_secret": "GOCSPX-{u28}",\n  "refresh_token": "1//0{u99}",\n  "type": "authorized_user"\n}
azure_sdk_auth | {\n  "clientId": "{uuid}",\n  "clientSecret": "{a3}8Q~{t34}",\n\
  "tenantId": "{uuid}"\n}
quay_docker_cfg | {"auths": {"quay.io": {"auth": "{quayauth}", "email": ""}}}
npmrc_nexus | registry=https://nexus.lumen-labs.io/repository/npm-group/\n_auth={nexusauth}
pypirc | [distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\n\
password = pypi-AgEIcHlwaS5vcmcCJD{u140}
git_credentials | $ cat ~/.git-credentials\nhttps://dana-k:{ghp}@github.com
netrc_heroku | machine api.heroku.com\n  login dana@lumen-labs.io\n  password HRKU-{uuid}
pgpass | # ~/.pgpass\ndb.lumen-labs.io:5432:wiki:wiki:{pw}\n*:*:*:replicator:{pw}
jdbc_mysql_param | spring.datasource.url=jdbc:mysql://db:3306/billing?user=billing&password={upw}
pymongo_srv | client = MongoClient("mongodb+srv://etl:{upw}@analytics.{l5}.mongodb.net/")
sidekiq_redis | Sidekiq.configure_server { |c| c.redis = { url: "redis://:{upw}@redis:6379/2" } }
es_python | es = Elasticsearch("https://elastic:{upw}@es01.lumen.internal:9200", ca_certs="ca.crt")
csharp_conn | var cs = "Data Source=SQL02;Initial Catalog=Payroll;User ID=payroll_app;Pwd={pw};";
hist_export_oai |   512  export OPENAI_API_KEY=sk-proj-{u74}T3BlbkFJ{u74}\n\
  513  python summarise.py
hist_docker_p |  2031  docker login -u dana -p {pw} registry.lumen-labs.io
hist_mysqldump |    77  mysqldump -uroot -p{pw} --all-databases > /root/all.sql
hist_gh_api |  1903  curl -H "Authorization: token {ghp}" https://api.github.com/user/repos
fish_history | - cmd: set -gx ANTHROPIC_API_KEY sk-ant-api03-{u93}AA\n  when: 1733905112
nb_openai_cell | {"cell_type": "code", "execution_count": 1, "metadata": {}, \
"source": ["openai.api_key = \"sk-{a20}T3BlbkFJ{a20}\""]}
nb_hf_login | # In[2]:\nfrom huggingface_hub import login\nlogin(token="hf_{x34}")
nb_read_sql | In [14]: df = pd.read_sql(q, "postgresql://analyst:{upw}@warehouse:5432/dwh")
nb_kaggle | !mkdir -p ~/.kaggle && echo '{"username":"danak","key":"{h32}"}' > ~/.kaggle/kaggle.json
nb_env_output | Out[3]: environ({'AWS_ACCESS_KEY_ID': '{akia}', 'AWS_SECRET_ACCESS_KEY': '{b40}'})
nb_gemini_curl | !curl "https://generativelanguage.googleapis.com/v1beta/models/\
gemini-2.0-flash:generateContent?key=AIza{u35}" -H 'Content-Type: application/json' -d @req.json
my_cnf | [client]\nuser=backup\npassword={pw}\nhost=127.0.0.1
spring_gmail | spring.mail.username=alerts@lumen-labs.io\nspring.mail.password={w4} {w4} {w4} {w4}
django_secret | # settings/prod.py\nSECRET_KEY = 'django-insecure-{p50}'\nDEBUG = False
wp_config | define( 'DB_USER', 'wpuser' );\ndefine( 'DB_PASSWORD', '{pw}' );
gh_issue_sshkey | **Steps to reproduce**\nI made the key with `ssh-keygen -t ed25519`, \
here it is so you can check the format:\n```\n{ed}\n```
py_pk8_const | PRIVATE_KEY = '''{pk8}'''\nsigner = Signer(PRIVATE_KEY)
python_gitlab | [lumen]\nurl = https://gitlab.lumen-labs.io\nprivate_token = glpat-{u20}
slack_xoxp | SLACK_USER_TOKEN="xoxp-{d12}-{d12}-{d13}-{h32}"\n\
curl -H "Authorization: Bearer $SLACK_USER_TOKEN" https://slack.com/api/auth.test
jenkins_slack | slackSend(channel: '#deploys', message: msg, \
webhookUrl: 'https://hooks.slack.com/services/T{U10}/B{U10}/{a24}')
discord_bot | client.once("ready", () => console.log("up"));\nclient.login("{discord}");
stripe_rk_php | \Stripe\Stripe::setApiKey('rk_live_51{a97}');
langchain_openai | llm = ChatOpenAI(model="gpt-4o-mini", temperature=0, \
openai_api_key="sk-proj-{u74}T3BlbkFJ{u74}")
aider_conf | # ~/.aider.conf.yml\nmodel: sonnet\nanthropic-api-key: sk-ant-api03-{u93}AA
boto3_literal | s3 = boto3.client("s3", aws_access_key_id="{akia}", aws_secret_access_key="{b40}")
appsettings_blob | "Storage": {\n  "ConnectionString": "DefaultEndpointsProtocol=https;\
AccountName=lumenfiles;AccountKey={b86}==;EndpointSuffix=core.windows.net"\n}
django_sendgrid | EMAIL_HOST_USER = "apikey"\nEMAIL_HOST_PASSWORD = "SG.{u22}.{u43}"
mailgun_requests | requests.post(MAILGUN_URL, auth=("api", "key-{h32}"), data=msg)
shopify_shpca | session = ShopifyAPI::Auth::Session.new(shop: shop, access_token: "shpca_{h32}")
hf_git_remote | git remote add space https://dana:hf_{x34}@huggingface.co/spaces/lumen/demo
mattermost_hook | curl -X POST -d '{"text": "build failed"}' https://chat.lumen-labs.io/hooks/{l26}
ticket_repro | BUG-2214 Export times out.\nRepro: log in as qa.lead / {pw}, export 2024.
chat_nas_root | [16:48] dana: root pw for the synology is {pw} btw
mail_new_account | Subject: Your account\n\nHello Tomasz,\nyour account has been created.\n\
Username: t.nowak\nTemporary password: {pw}\nPlease change it after your first login.
wiki_office | ## Office\n- Wi-Fi: LUMEN-STAFF\n- Wi-Fi password: {pw}\n- Printer: 2nd floor
gh_issue_config | It crashes on start with the 2.3 image and this config:\n```yaml\nsmtp:\n\
  host: smtp.mailgun.org\n  user: postmaster@mg.lumen-labs.io\n  pass: {h32}-{h8}-{h8}\n```
review_comment | > hardcoded for now\nDon't commit `API_KEY = "{a40}"`, it is the live key.
"""

# Less common tools, vendors, file formats and human languages.
_RARER = r"""
env_resend | RESEND_API_KEY=re_{a8}_{a24}\nEMAIL_FROM="Lumen <no-reply@lumen-labs.io>"
env_clerk | NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_live_{b40}\nCLERK_SECRET_KEY=sk_live_{a46}
env_pinecone | PINECONE_API_KEY=pcsk_{a5}_{a63}\nPINECONE_INDEX=support-docs
newrelic_license | NEW_RELIC_APP_NAME=wiki-api\nNEW_RELIC_LICENSE_KEY=eu01xx{h34}NRAL
figma_pat | curl -H "X-Figma-Token: figd_{u40}" https://api.figma.com/v1/files/{a22}
vault_legacy |    88  export VAULT_ADDR=https://vault:8200\n   89  vault login s.{a24}
restic_env | export RESTIC_REPOSITORY=s3:s3.wasabisys.com/restic\nexport RESTIC_PASSWORD='{pw}'
age_identity | # created: 2025-01-14T09:12:55+01:00\n# public key: {agepk}\n{agesk}
nm_wireguard | [wireguard]\nprivate-key={r32}\nlisten-port=51820\n\n[wireguard-peer.{r32}]
forti_psk | config vpn ipsec phase1-interface\n    edit "to-lisbon"\n        set psksecret {pw}\n\
    next\nend
sssd_authtok | [domain/lumen.internal]\nldap_default_bind_dn = cn=sssd\nldap_default_authtok = {pw}
mongo_createuser | db.createUser({ user: "reporting", pwd: "{pw}", roles: ["read"] })
clickhouse_users | <users><etl>\n  <password>{pw}</password>\n</etl></users>
influx_token | INFLUX_HOST=https://eu-central-1-1.aws.cloud2.influxdata.com\nINFLUX_TOKEN={u86}==
fly_token | FLY_API_TOKEN="FlyV1 fm2_{b180}"
sentry_org_token | SENTRY_AUTH_TOKEN={sentry}
zendesk_basic | curl -H "Authorization: Basic {zendesk}" https://lumen.zendesk.com/api/v2/users
meta_wa_token | WHATSAPP_PHONE_ID={d15}\nWHATSAPP_TOKEN=EAA{a6}ZC{a180}
square_token | SQUARE_ENVIRONMENT=production\nSQUARE_ACCESS_TOKEN=EAAA{u60}
paypal_secret | PAYPAL_CLIENT_ID=A{u79}\nPAYPAL_CLIENT_SECRET=E{u79}
razorpay | RAZORPAY_KEY_ID=rzp_live_{a14}\nRAZORPAY_KEY_SECRET={a24}
hardhat_key | networks: { sepolia: { url: RPC_URL, accounts: ["0x{h64}"] } },
mnemonic_env | WALLET_MNEMONIC="{mnemonic}"
tailscale_key | tailscale up --authkey=tskey-auth-{a11}CNTRL-{a32} --advertise-tags=tag:ci
ngrok_yml | version: "3"\nagent:\n  authtoken: {a27}_{a21}
cf_tunnel | sudo cloudflared service install {cftunnel}
op_sa_token | export OP_SERVICE_ACCOUNT_TOKEN={opsa}
fastlane_asp | FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD={w4}-{w4}-{w4}-{w4}
gradle_signing | signingConfigs {\n    release {\n        storeFile file("lumen.jks")\n\
        storePassword "{pw}"\n        keyAlias "lumen"\n        keyPassword "{pw}"\n    }\n}
odoo_conf | [options]\nadmin_passwd = {pw}\ndb_host = pg01\ndb_user = odoo\ndb_password = {pw}
ha_secrets | # secrets.yaml\nmqtt_password: {pw}\nha_api_token: {hajwt}
prom_remote_write | remote_write:\n  - url: https://prometheus-prod-24-prod-eu-west-2.grafana.net/\
api/prom/push\n    basic_auth:\n      username: {d7}\n      password: {glc}
elastic_apikey | curl -H "Authorization: ApiKey {esapikey}" https://es.lumen.internal:9200/
splunk_hec | curl https://splunk:8088/services/collector -H "Authorization: Splunk {uuid}"
langsmith | LANGCHAIN_TRACING_V2=true\nLANGCHAIN_API_KEY=lsv2_pt_{h32}_{h10}
openrouter | client = OpenAI(base_url="https://openrouter.ai/api/v1", api_key="sk-or-v1-{h64}")
elevenlabs | headers = {"xi-api-key": "sk_{h48}", "Content-Type": "application/json"}
prose_it_chat | [11:20] Giulia: la password del WiFi ospiti è {pw}
prose_nl_mail | Beste Sanne, je tijdelijke wachtwoord is {pw}. Wijzig het na het inloggen.
prose_fi | Palvelimen salasana on nyt {pw}
prose_cs_ticket | Požadavek #5531: heslo k účtu servis je {pw}
prose_he | הסיסמה לשרת הבדיקות היא {pw}
prose_ar | كلمة المرور لحساب المدير هي {pw}
prose_hi | सर्वर का पासवर्ड {pw} है, किसी को मत बताना।
prose_vi | Mật khẩu wifi văn phòng: {pw}
prose_id | Password email kantor kamu sudah direset jadi {pw} ya
prose_pt_br_chat | [08:15] Rafa: senha do painel da hospedagem é {pw}
prose_de_mail | Hallo Jan,\nKundenportal: Benutzer lumen_support, Kennwort {pw}.\nGruß, Petra
prose_es_ticket | Ticket 77120 – no podía entrar; le puse la contraseña {pw} y ya funciona.
prose_fr_slack | @channel le mdp du compte partagé Canva c'est {pw}
"""

# Harmless look-alikes, one template a row.
_LOOKALIKES = r"""
Request ID: {uuid} (please quote it when you contact support)
{"ts":"2025-05-02T08:14:22.901Z","level":"warn","reqId":"req-{l20}","msg":"slow query","ms":1840}
X-Request-Id: {h32}\nX-Runtime: 0.041822
"operationId": "{uuid}",\n"status": "Running",\n"startTime": "2025-04-30T11:02:00Z"
X-Amz-Cf-Id: {u54}==\nX-Cache: Miss from cloudfront
Task tasks.send_invoice[{uuid}] succeeded in 0.31s: None
Fixes a regression introduced in {h40} (see #2291).
$ git log --oneline -2\n{h7} Bump ruff to 0.6.9\n{h7} Merge branch 'release/2.4'
Reviewed-on: https://review.lumen-labs.io/c/wiki/+/{d5}\nChange-Id: I{h40}
SHA256SUMS\n{h64}  lumen-wiki-2.4.1.tar.gz\n{h64}  lumen-wiki-2.4.1.zip
"dist": {"shasum": "{h40}", "integrity": "sha512-{b86}=="}
  /lodash/4.17.21:\n    resolution: {integrity: sha512-{b86}==}
requests==2.32.3 \\n    --hash=sha256:{h64}
    sha256 = "{h64}",\n    strip_prefix = "abseil-cpp-20240722.0",
    Hash (crc32c):          {b6}==\n    Hash (md5):             {b22}==
Digest: sha256:{h64}\nStatus: Downloaded newer image for redis:7.4
"digest": "sha256:{h64}", "mediaType": "application/vnd.oci.image.manifest.v1+json"
Pinned: ipfs://bafkrei{z52}
<link rel="icon" href="data:image/x-icon;base64,AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQ{b200}">
.icon-search { background: url("data:image/svg+xml;base64,{svg}") no-repeat; }
![plot](data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA{b300})
src: url("data:font/ttf;base64,AAEAAAASAQAABAAgR0RFRr{b240}") format("truetype");
{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAA{b260}"}}
Content-Type: application/pdf; name="quote.pdf"\nContent-Transfer-Encoding: base64\n\n\
JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK{b180}
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} tomasz@lumen-laptop
gitlab.lumen-labs.io,10.0.4.2 ecdsa-sha2-nistp256 \
AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b107}=
Release signing key:\n{pgppub}
$ openssl s_client -connect wiki.lumen-labs.io:443 -showcerts\n---\n{cert}
{"keys":[{"kty":"EC","crv":"P-256","kid":"{h16}","x":"{u43}","y":"{u43}","use":"sig"}]}
$ age-keygen -y ~/.config/sops/age/keys.txt\n{agepk}
peer: {r32}\n  endpoint: 203.0.113.4:51820\n  allowed ips: 10.8.0.3/32
PUBLIC_KEY = '''{pubpem}'''\njwt.decode(token, PUBLIC_KEY, algorithms=["ES256"])
ED25519 key fingerprint is SHA256:{b43}.\nAre you sure you want to continue connecting?
pub   ed25519 2024-03-11 [SC]\n      {H40}\nuid           [ultimate] Dana K <dana@lumen-labs.io>
sha1 Fingerprint={colon20}
ci:$2y$05${q53}
{"model": "auth.user", "pk": 7, "fields": {"password": "pbkdf2_sha256$720000${a22}${b43}="}}
password_hash('x', PASSWORD_ARGON2I) => $argon2i$v=19$m=65536,t=4,p=1${b22}${b43}
backup:$6$rounds=5000${q16}${q86}:20011:0:99999:7:::
{"algorithm": "pbkdf2-sha256", "hashIterations": 27500, "value": "{b86}==", "salt": "{b22}=="}
userPassword: {SSHA512}{b96}
$ANSIBLE_VAULT;1.2;AES256;prod\n{h80}\n{h80}\n{h80}
"password": "ENC[AES256_GCM,data:{b16},iv:{b43}=,tag:{b22}==,type:str]",\n\
"sops": {"kms": [{"arn": "arn:aws:kms:eu-west-1:{d12}:key/{uuid}"}]}
kind: SealedSecret\nspec:\n  encryptedData:\n    api-token: AgA{b400}
"ciphertext": "vault:v2:{b60}"
{"password": {"encrypted_data": "{b44}", "iv": "{b16}", "auth_tag": "{b22}==", "version": 3}}
DOTENV_PUBLIC_KEY="03{h64}"\nDATABASE_URL="encrypted:{b120}"
"encrypted": true,\n"data": "2.{b22}==|{b64}|{b43}="
SECRET_KEY=************************
"api_key": "sk-proj-********************************",
Run echo "deploying with token ***"
  + password = (sensitive value)
Data\n====\npassword:  24 bytes\nusername:  5 bytes
Secret access key: ••••••••••••••••  Show
2025-05-02 10:11:09 INFO login ok user=dana password=******** ip=10.0.7.12
"Env": ["PGHOST=db", "PGPASSWORD=<hidden>", "TZ=UTC"]
AccessKeyID: "AKIAIOSFODNN7EXAMPLE", // example credentials from the SDK docs
STRIPE_SECRET_KEY=sk_test_your_key_here\nSTRIPE_WEBHOOK_SECRET=whsec_...
OPENAI_API_KEY="<YOUR_OPENAI_API_KEY>"
api_token: "REPLACE_ME"  # see README, section Tokens
curl -u "$JIRA_USER:$JIRA_TOKEN" https://lumen.atlassian.net/rest/api/3/myself
  password: "${DB_PASSWORD}"\n  host: ${DB_HOST}
The docs show the header as `Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a`.
client = WebClient(token="xoxb-not-a-real-token-this-will-not-work")  # sample from the docs
stripe.api_key = "sk_test_BQokikJOvBiI2HlWgH4olfQ2"  # sample key used in Stripe's docs
Server=myServerAddress;Database=myDataBase;User Id=myUsername;Password=myPassword;
mongodb+srv://<username>:<password>@cluster0.abcde.mongodb.net/?retryWrites=true
  password: ${{ secrets.REGISTRY_PASSWORD }}
envFrom:\n  - secretRef:\n      name: wiki-env
remoteRef:\n  key: prod/wiki/db\n  property: password
password = data.aws_secretsmanager_secret_version.db.secret_string
api_key = keyring.get_password("lumen", "openai")
secrets:\n  db_password:\n    file: ./secrets/db_password.txt
spring.datasource.password=${SPRING_DATASOURCE_PASSWORD}
PASSWORD_MIN_LENGTH=12\nPASSWORD_REQUIRE_SYMBOL=true
TOKEN_TTL_SECONDS=3600\nREFRESH_TOKEN_TTL_DAYS=30
response = client.messages.create(model=model, max_tokens=1024, messages=history)
api_key_header: X-API-Key\napi_key_query_param: api_key
auth:\n  type: password\n  password_file: /etc/wiki/.pw
Reminder: IT will never ask for your password by email or phone.
Ticket 4471: user forgot her password again, sent a reset link, closing.
# TODO: stop logging the password field in debug mode
<tom> what's the token for the staging api?\n<dana> ask in #secrets-requests, not pasting it here
Das Passwort muss mindestens zwölf Zeichen lang sein und darf den Benutzernamen nicht enthalten.
Nous ne vous demanderons jamais votre mot de passe.
Hai dimenticato la password? Clicca su "Recupera".
Je wachtwoord is gewijzigd. Was jij dit niet? Neem dan contact met ons op.
密码已重置，请使用新密码登录。
Пароль должен содержать не менее 10 символов.
अपना पासवर्ड किसी के साथ साझा न करें।
Order #LMN-2025-{d6} shipped via PostNL, track 3SLMNB{d9}
USPS Tracking: 9400 1{d3} {d4} {d4} {d4} {d4} {d2}
Test IBAN for the sandbox: {ibande}
Pago domiciliado en {ibanes} (cuenta de pruebas)
Mastercard test number {card}, any CVC
Device IMEI {imei}, model SM-A546B
Bought 12 shares, ISIN {isin}
CI run #{d5} finished; artifact build-{h12}.tar.gz uploaded
Invoice RE-{d4}-{d6}, customer number KD{d7}
s3://lumen-wiki-backups/{d4}/{h16}.tar.gz (arn:aws:s3:::lumen-wiki-backups)
"projectId": "lumen-wiki-prod", "projectNumber": "{d12}"
<script>const stripe = Stripe("pk_test_51{a97}");</script>
<@U{U10}> joined #incidents (C{U10})
lumen-wiki 2.4.1+build.{d8}.sha.{h7}
"""

HOLDOUT11_SECRETS: tuple[Case, ...] = tuple(_secrets(_COMMON) + _secrets(_RARER))
HOLDOUT11_HARMLESS: tuple[Case, ...] = tuple(Case("", _fill(row)) for row in _rows(_LOOKALIKES))
