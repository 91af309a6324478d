"""A ninth held-out secret set, written without reading the detector (issue 17).

Written by a session that never opened the detector's code nor the notes about its misses; it
is measured, never tuned on. Weighted roughly like published leak studies: about 60 % common
shapes written the ordinary way (``.env`` files, CI YAML, docker-compose, Kubernetes, Terraform
and its state, cloud credential files and CLI output, connection strings, shell history,
notebook cells, server and framework configs, PEM private keys, big SaaS vendors' tokens,
webhook URLs, passwords in English tickets, chat and mail), about 40 % less common tools,
vendors and phrasings (backup tools, BMC and hypervisor CLIs, package managers' credentials,
PHP CMS configs, SQL, access logs, Asian and Latin American vendors, wallet keys with their
Base58Check checksum, backup codes, passwords in thirteen more human languages). Look-alikes:
request and object ids (UUID, ULID, KSUID, nanoid, ObjectId), commit SHAs, checksums, lock-file
and content hashes, base64 images, fonts, documents and signatures, public keys, certificates,
fingerprints and pins, password hashes, encrypted and sealed values, masked values, references,
documentation example keys, keys public by design, prose about passwords in several languages,
public ids (orders, S10 parcels, IBANs with mod 97, cards with Luhn, builds, cloud resources).

Most cases are one template a line (``kind | text`` for secrets); see :func:`_expand`. Values
come from ``random.Random(9009)`` (``Values(9009)``) in each format's shape; none is real.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections.abc import Callable
from urllib.parse import quote

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B32, B58, B64, BECH32, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT9_HARMLESS", "HOLDOUT9_SECRETS"]

_values = Values(9009)
_rng, _g = _values.rng, _values.g
_B62 = D + UP + LO  # the digit order GitHub's checksum uses
_MARKS = "!*+-=_~."
_WORDS = ("kestrel", "quartz", "nimbus", "juniper", "cobalt", "fennel", "sparrow", "tundra")
_SEASONS = ("Sommer", "Winter", "Spring", "Autumn", "Verano", "Primavera", "Herbst")
_SETS = {
    "a": AN,
    "b": B64,
    "c": "0123456789ABCDEFGHJKMNPQRSTVWXYZ",  # Crockford base32 (ULIDs)
    "d": D,
    "e": BECH32,
    "h": HX,
    "H": HX.upper(),
    "k": B32,
    "l": LO + D,
    "n": "0123456789abcdfghijklmnpqrsvwxyz",  # Nix's base32
    "p": AN + "!#$%^&*()-_[]<>~+=,.;:/?|",  # WordPress salts
    "q": "./" + AN,  # crypt(3) salts and hashes
    "t": URL + ".~",  # Azure client secrets
    "u": URL,
    "U": UP + D,
    "w": LO,
    "x": UP + LO,
}


def _pw() -> str:
    """A password in one of four habits: season and year, two words, generated, three words."""
    habit = _rng.randrange(4)
    if habit == 0:
        return _rng.choice(_SEASONS) + str(_rng.randrange(2019, 2027)) + _rng.choice(_MARKS)
    if habit == 1:
        one, two = _rng.sample(_WORDS, 2)
        return one.title() + _g(D, 2) + two.title() + _rng.choice(_MARKS)
    if habit == 2:
        return _g(AN + _MARKS, 22)
    return "".join(word + _g(D, 1) for word in _rng.sample(_WORDS, 3))


def _uuid() -> str:
    raw = f"{_rng.getrandbits(128):032x}"
    return f"{raw[:8]}-{raw[8:12]}-4{raw[13:16]}-{_rng.choice('89ab')}{raw[17:20]}-{raw[20:]}"


def _crc_token(prefix: str) -> str:
    """GitHub and npm token shape: 30 base62 characters and their CRC32 as 6 base62 digits."""
    body = _g(_B62, 30)
    crc, tail = zlib.crc32(body.encode()), ""
    while len(tail) < 6:
        crc, digit = divmod(crc, 62)
        tail = _B62[digit] + tail
    return prefix + body + tail


def _jwt(claims: dict[str, object], alg: str = "HS256") -> str:
    """A signed-looking JWT: real JSON header and claims, a random signature of the right size."""
    parts = [
        json.dumps(part, separators=(",", ":")) for part in ({"alg": alg, "typ": "JWT"}, claims)
    ]
    raw = [part.encode() for part in parts] + [_rng.randbytes(256 if alg == "RS256" else 32)]
    return ".".join(base64.urlsafe_b64encode(part).decode().rstrip("=") for part in raw)


_NAMED: dict[str, Callable[[], str]] = {
    "pw": _pw,
    "uuid": _uuid,
    "akia": lambda: "AKIA" + _g(B32, 16),
    "ghp": lambda: _crc_token("ghp_"),
    "npm": lambda: _crc_token("npm_"),
    "jwt": lambda: _jwt({"sub": _uuid(), "iat": 1735000000 + _rng.randrange(10**7)}),
    "sajwt": lambda: _jwt(
        {"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ci:deployer"}, "RS256"
    ),
}
_FIELD = re.compile(r"\{(?:(" + "|".join(_NAMED) + r")|([" + "".join(_SETS) + r"])(\d+))\}")


def _expand(template: str) -> str:
    """Fill a template from the seeded generator, left to right.

    ``{pw}`` is a password, ``{uuid}`` a UUID4, ``{akia}`` an AWS key id, ``{ghp}`` / ``{npm}``
    a checksummed token, ``{jwt}`` / ``{sajwt}`` a JWT, and ``{h32}`` 32 characters of the
    alphabet ``h`` in ``_SETS``. A literal ``\\n`` or ``\\t`` becomes a line break or a tab.
    """

    def fill(found: re.Match[str]) -> str:
        name, key, size = found.groups()
        return _NAMED[name]() if name else _g(_SETS[key], int(size))

    return _FIELD.sub(fill, template.replace("\\n", "\n").replace("\\t", "\t"))


def _rows(block: str) -> list[str]:
    """The non-blank rows of a block; a row ending in a backslash goes on on the next line."""
    return [row for row in block.replace("\\\n", "").splitlines() if row.strip()]


def _kinds(block: str) -> list[tuple[str, str]]:
    """The ``kind | template`` rows of a block, filled."""
    return [(kind, _expand(text)) for kind, text in (row.split(" | ", 1) for row in _rows(block))]


def _b64t(template: str) -> str:
    """Base64 of a filled template (values stored encoded)."""
    return b64(_expand(template))


def _pem(label: str, der_head: str, size: int) -> str:
    """A PEM block of ``size`` base64 characters whose body starts like the real DER."""
    body = der_head + _g(B64, size - len(der_head))
    rows = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *rows, f"-----END {label}-----"])


def _base58check(payload: bytes) -> str:
    """Base58Check (Bitcoin WIF keys, BIP32 extended keys): payload + 4 checksum bytes."""
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, text = int.from_bytes(raw, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        text = B58[digit] + text
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + text


def _luhn(body: str) -> str:
    weights = [(2 if i % 2 == 0 else 1) * int(c) for i, c in enumerate(reversed(body))]
    return body + str(-sum(w - 9 if w > 9 else w for w in weights) % 10)


def _iban(country: str, bban: str) -> str:
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _s10(service: str, country: str) -> str:
    """A UPU S10 parcel number: 8 digits, their weighted mod-11 check digit, the country."""
    digits = _g(D, 8)
    check = 11 - sum(int(c) * w for c, w in zip(digits, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    return service + digits + str({10: 0, 11: 5}.get(check, check)) + country


# Common shapes, written the ordinary way.
_COMMON = r"""
env_openai | OPENAI_MODEL=gpt-4o-mini\nOPENAI_API_KEY=sk-proj-{u74}T3BlbkFJ{u74}
env_aws | AWS_REGION=eu-central-1\nAWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={b40}
env_postgres | POSTGRES_HOST=10.4.0.12\nPOSTGRES_USER=billing\nPOSTGRES_PASSWORD={pw}
env_stripe | STRIPE_SECRET_KEY=rk_live_51{a97}\nSTRIPE_WEBHOOK_SECRET=whsec_{a32}
env_twilio | TWILIO_ACCOUNT_SID=AC{h32}\nTWILIO_AUTH_TOKEN={h32}\nTWILIO_FROM=+15005550006
env_mailgun | MAILGUN_DOMAIN=mg.acme-mail.com\nMAILGUN_API_KEY={h32}-{h8}-{h8}
env_jwt_secrets | ACCESS_TOKEN_SECRET={h128}\nREFRESH_TOKEN_SECRET={h128}
env_gemini | GOOGLE_API_KEY=AIzaSy{u33}  # gemini-1.5-flash, billing enabled
env_mongo | MONGO_URI=mongodb+srv://api-user:{pw}@shop.{l5}.mongodb.net/shop?retryWrites=true
env_groq | LLM_PROVIDER=groq\nGROQ_API_KEY=gsk_{a52}
env_sendgrid | SENDGRID_API_KEY="SG.{u22}.{u43}"\nFROM_EMAIL=hello@acme.io
rn_gradle_props | MYAPP_UPLOAD_STORE_FILE=upload.keystore\nMYAPP_UPLOAD_STORE_PASSWORD={pw}
gha_dockerhub | env:\n  IMAGE: acme/api\n  DOCKERHUB_TOKEN: dckr_pat_{u27}
gha_slack_notify | - run: curl -d @msg.json https://hooks.slack.com/services/T{U10}/B{U10}/{a24}
gitlab_sonar | sonar:\n  variables:\n    SONAR_TOKEN: sqp_{h40}\n  script: sonar-scanner
azure_pipeline_sp | - script: az login --service-principal -u {uuid} -p {a3}8Q~{t34} --tenant {uuid}
jenkinsfile_curl | sh 'curl -u deployer:{pw} -T app.war https://nexus.acme.io/repository/releases/'
drone_publish | - name: publish\n  image: plugins/docker\n  settings:\n    password: {pw}
bitbucket_heroku | - pipe: atlassian/heroku-deploy:2.4.0\n  variables:\n    HEROKU_API_KEY: '{uuid}'
compose_keycloak | keycloak:\n  environment:\n    KC_BOOTSTRAP_ADMIN_PASSWORD: {pw}
compose_minio | minio:\n  command: server /data\n  environment:\n    MINIO_ROOT_PASSWORD: {a40}
mssql_run | docker run -e ACCEPT_EULA=Y -e 'MSSQL_SA_PASSWORD={pw}' mcr.microsoft.com/mssql/server
k8s_stringdata | kind: Secret\nstringData:\n  ADYEN_API_KEY: AQE{a6}{b90}==-{b43}=-{a16}
helm_values_redis | redis:\n  auth:\n    enabled: true\n    password: {pw}
k8s_env_dsn | - name: DATABASE_URI\n  value: postgresql://reports:{pw}@pg-primary.data.svc/reports
kubectl_sa_token | kubectl --server=https://10.0.0.1:6443 --token={sajwt} get pods -A
tfvars_datadog | datadog_api_key = "{h32}"\ndatadog_app_key = "{h40}"
tf_azurerm | provider "azurerm" {\n  client_id     = "{uuid}"\n  client_secret = "{a3}8Q~{t34}"\n}
tf_pg_provider | provider "postgresql" {\n  host     = "pg.acme.internal"\n  password = "{pw}"\n}
tfstate_key | "type": "aws_iam_access_key", "attributes": {"id": "{akia}", "secret": "{b40}"}
aws_profile | [acme-prod]\naws_access_key_id={akia}\naws_secret_access_key={b40}\nregion = us-east-1
aws_create_key | "AccessKeyId": "{akia}",\n"Status": "Active",\n"SecretAccessKey": "{b40}",
aws_sts_output | "AccessKeyId": "ASIA{k16}",\n"SecretAccessKey": "{b40}",\n\
"SessionToken": "IQoJb3JpZ2luX2VjE{b600}",
azure_conn | AzureWebJobsStorage=DefaultEndpointsProtocol=https;AccountName=fn01;AccountKey={b86}==
s3cfg | [default]\naccess_key = {akia}\nsecret_key = {b40}\nhost_base = s3.amazonaws.com
sqlalchemy_pg | engine = create_engine("postgresql+psycopg://analytics:{pw}@dwh.acme.internal/dwh")
jdbc_sqlserver | jdbc:sqlserver://sql01:1433;databaseName=Billing;user=svc_billing;password={pw}
appsettings_json | "ConnectionStrings": {\n  "Default": "Host=pg;Username=id;Password={pw}"\n}
mongoose_uri | mongoose.connect('mongodb://admin:{pw}@10.0.5.21:27017/catalog?authSource=admin');
oledb_string | Provider=SQLOLEDB;Data Source=ERP01\SQLEXPRESS;User ID=erp;Pwd={pw};
history_gh_token |   301  export GITHUB_TOKEN={ghp}\n  302  gh repo clone acme/infra
history_sshpass |    88  sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no root@10.20.30.41
history_gitlab | curl --header "PRIVATE-TOKEN: glpat-{u20}" https://gitlab.acme.io/api/v4/projects
zsh_openssl | : 1731922044:0;openssl enc -aes-256-cbc -pbkdf2 -k '{pw}' -in db.sql -out db.sql.enc
nb_anthropic | {"cell_type": "code", "source": \
["client = anthropic.Anthropic(api_key=\"sk-ant-api03-{u93}AA\")"]}
nb_cohere | {"cell_type": "code", "source": ["co = cohere.ClientV2(\"{a40}\")"]}
jupyter_token_url | [I 10:14:07.312 ServerApp]     http://127.0.0.1:8888/lab?token={h48}
php_db_pass | <?php\n$db_host = 'localhost';\n$db_user = 'shop';\n$db_pass = '{pw}';
wp_salts | define( 'AUTH_KEY',         '{p64}' );\ndefine( 'SECURE_AUTH_KEY',  '{p64}' );
grafana_ini | [security]\nadmin_user = admin\nadmin_password = {pw}\nsecret_key = {a16}
django_databases | 'default': {'ENGINE': 'django.db.backends.mysql', 'PASSWORD': '{pw}'},
git_config_remote | [remote "origin"]\n\turl = https://jmiller:{ghp}@github.com/acme/payments.git
gh_fine_grained | GH_PAT = "github_pat_11{U20}_{a59}"  # needs contents:write
npmrc_gitlab | //gitlab.com/api/v4/projects/4821/packages/npm/:_authToken=glpat-{u20}
slack_bolt | app = App(token="xoxb-{d12}-{d13}-{a24}", signing_secret="{h32}")
discord_hook_json | {"url": "https://discord.com/api/webhooks/{d19}/{u68}", "username": "deploy"}
stripe_env_default | Stripe.api_key = ENV.fetch('STRIPE_KEY', 'sk_live_51{a97}')
openai_fetch | headers: { Authorization: 'Bearer sk-proj-{u74}T3BlbkFJ{u74}' },
anthropic_curl | curl https://api.anthropic.com/v1/messages -H "x-api-key: sk-ant-api03-{u93}AA"
android_maps_key | android:name="com.google.android.geo.API_KEY"\nandroid:value="AIzaSy{u33}" />
google_oauth_json | {"web": {"client_id": "{d12}-{l32}.apps.googleusercontent.com", \
"client_secret": "GOCSPX-{u28}", "redirect_uris": ["https://app.acme.io/oauth2/callback"]}}
hf_cli_login | $ huggingface-cli login --token hf_{x34} --add-to-git-credential
twilio_python | client = Client('AC{h32}', '{h32}')\nmsg = client.messages.create(to=to, body=text)
shopify_admin | shopifyApi({ adminApiAccessToken: "shpat_{h32}", apiVersion: "2024-10" });
npm_config_set | npm config set //registry.npmjs.org/:_authToken {npm}
twine_upload | twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJG{u140} dist/*
postman_bearer | "auth": {"type": "bearer", "bearer": [{"key": "token", "value": "{u64}"}]}
jwt_access_log | 10.1.4.7 - - [12/Mar/2025:10:31:02 +0000] "GET /api/me" 200 "Bearer {jwt}"
jira_repro | QA-1187 Steps:\n1. Log in to staging as qa_admin / {pw}\n2. Open Orders > Export
slack_chat_creds | <kim> anyone have creds for the old jenkins?\n<ola> svc_build / {pw} works
email_vpn | Hi Marco,\nyour VPN login is m.rossi, initial password {pw}. Change it at first login.
github_issue_env | Auth errors on `docker compose up`. My .env:\nDB_USER=postgres\nDB_PASS={pw}
"""

# Less common tools, vendors, file formats and languages.
_RARER = r"""
borg_passphrase | export BORG_REPO=ssh://borg@backup01/./srv\nexport BORG_PASSPHRASE='{pw}'
vault_pass_file | $ cat ~/.ansible/vault_pass.txt\n{pw}
ansible_extra_vars | ansible-playbook site.yml -i prod --extra-vars "ansible_password={pw}"
wpa_supplicant | network={\n    ssid="ACME-Corp"\n    psk="{pw}"\n    key_mgmt=WPA-PSK\n}
ipmitool | ipmitool -I lanplus -H bmc-r12.acme.local -U root -P '{pw}' sol activate
proxmox_token | Authorization: PVEAPIToken=terraform@pve!ci={uuid}
az_account_key | az storage blob upload --account-name stacme --account-key {b86}== -f a.zip -c b
supervisord_env | [program:worker]\nenvironment=DJANGO_SETTINGS_MODULE="app.prod",DB_PASSWORD="{pw}"
nuget_config | <packageSourceCredentials><AcmeFeed>\n  <add key="ClearTextPassword" value="{pw}" />
bundle_sidekiq | BUNDLE_ENTERPRISE__CONTRIBSYS__COM={h8}:{h8}
uv_index_token | UV_INDEX_ACME_USERNAME=oauth2accesstoken\nUV_INDEX_ACME_PASSWORD=ya29.{u150}
gitea_app_ini | [security]\nINSTALL_LOCK = true\nSECRET_KEY = {a64}\nINTERNAL_TOKEN = {jwt}
drupal_settings | $databases['default']['default'] = ['username' => 'drupal', 'password' => '{pw}'];
pg_alter_user | ALTER ROLE replicator WITH LOGIN PASSWORD '{pw}';
access_log_query | 203.0.113.9 - - [04/Jan/2025:22:10] "GET /login.php?user=admin&password={pw}"
kafka_jaas | sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.\
PlainLoginModule required username="{U16}" password="{b64}";
putty_ppk | PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20250312\n\
Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{b43}\nPrivate-Lines: 1\nAAAAI{b39}\nPrivate-MAC: {h64}
alipay_java | String APP_PRIVATE_KEY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ{b1500}";
backup_codes | Google backup codes for ops@acme.io (keep them safe)\n1. {d4} {d4}\n2. {d4} {d4}\n\
3. {d4} {d4}\n4. {d4} {d4}\n5. {d4} {d4}
linear_key | LINEAR_API_KEY=lin_api_{a40}
neon_url | postgresql://neondb_owner:npg_{a12}@ep-{w5}-{w6}-a{l7}.eu-central-1.aws.neon.tech/db
cloudinary_url | CLOUDINARY_URL=cloudinary://{d15}:{u27}@acme-media
postmark_curl | curl https://api.postmarkapp.com/email -H "X-Postmark-Server-Token: {uuid}"
binance_ccxt | exchange = ccxt.binance({'apiKey': '{a64}', 'secret': '{a64}'})
deepl_key | translator = deepl.Translator("{uuid}:fx")
bitbucket_app_pw | git clone https://jdoe:ATBB{a32}{H8}@bitbucket.org/acme/mobile.git
sanity_token | SANITY_API_WRITE_TOKEN=sk{a180}
mercadopago | sdk = mercadopago.SDK("APP_USR-{d16}-{d6}-{h32}-{d9}")
kakao_rest | curl -H "Authorization: KakaoAK {h32}" https://dapi.kakao.com/v2/local/search/address
line_channel | LINE_CHANNEL_ACCESS_TOKEN={b171}=\nLINE_CHANNEL_SECRET={h32}
wechat_secret | wechat:\n  appid: wx{h16}\n  appsecret: {h32}
huawei_aksk | export HUAWEICLOUD_SDK_AK={U20}\nexport HUAWEICLOUD_SDK_SK={a40}
prose_it | Ciao Luca, ti giro le credenziali del gestionale: utente admin, password {pw}
prose_pt_br | Oi pessoal, a senha do banco de homologação agora é {pw}
prose_nl | Het wachtwoord voor de gedeelde mailbox is {pw}, niet doorsturen aub.
prose_pl | Hasło do panelu: {pw} (login: biuro)
prose_ru | Логин: buh_1c, пароль: {pw}
prose_tr | Sunucunun root şifresi {pw} olarak değiştirildi.
prose_sw | Nenosiri la mtandao wa ofisi ni {pw}
prose_bn | সার্ভারের পাসওয়ার্ড হলো {pw}
prose_ko_chat | [오후 2:14] 민수: 스테이징 DB 비번 {pw} 입니다
prose_ja_mail | 各位\n共有フォルダのID: share01 / PW: {pw}\nよろしくお願いします。
prose_de_ticket | Ticket #48213: Bitte VPN einrichten. Benutzer: k.schulz, Initialkennwort: {pw}
prose_fr_mail | Bonjour,\nvos identifiants extranet : jdupont / mot de passe {pw}\nCordialement
prose_es_chat | [10:02, 3/4/2025] Carla: la clave del wifi de la oficina es {pw}
"""

_GH_AUTH = _b64t("acme-bot:{ghp}")
_SA_KEY = _pem("PRIVATE KEY", "MIIEvAIBADANBgkqhkiG9w0BAQEFAASC", 1600).replace("\n", "\\n")
_OPENSSH = _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 400)
_P8 = _pem("PRIVATE KEY", "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg", 200)
_SECRETS = _kinds(_COMMON)
_SECRETS += [
    ("k8s_data_b64", "kind: Secret\ndata:\n  ldap-bind-password: " + _b64t("{pw}")),
    (
        "k8s_dockercfg",
        ".dockerconfigjson: " + b64(json.dumps({"auths": {"ghcr.io": {"auth": _GH_AUTH}}})),
    ),
    ("k8s_tls_key", "data:\n  tls.key: " + b64(_pem("EC PRIVATE KEY", "MHcCAQEEI", 160))),
    (
        "docker_config",
        '{"auths": {"index.docker.io": {"auth": "' + _b64t("ci:dckr_pat_{u27}") + '"}}}',
    ),
    (
        "basic_auth_curl",
        "curl -H 'Authorization: Basic " + _b64t("reporting:{pw}") + "' https://prom.acme.io",
    ),
    (
        "urlenc_password",
        "DATABASE_URL=mysql://shop:" + quote(_pw() + "@#", safe="") + "@mysql-01/shop",
    ),
    ("rsa_pem", _pem("RSA PRIVATE KEY", "MIIEpQIBAAKCAQEA", 1580)),
    ("openssh_gist", "deploy_key (secret gist):\n" + _OPENSSH),
    ("apple_p8", "AuthKey_8KX2M4Q7ZP.p8\n" + _P8),
    (
        "gcp_sa_json",
        f'{{\n  "type": "service_account",\n  "private_key": "{_SA_KEY}\\n",\n'
        '  "client_email": "looker@acme-analytics.iam.gserviceaccount.com"\n}',
    ),
]
_SECRETS += _kinds(_RARER)
_WIF = b"\x80" + _rng.randbytes(32) + b"\x01"  # mainnet, compressed public key
_XPRV = bytes.fromhex("0488ade4") + bytes(9) + _rng.randbytes(32) + bytes(1) + _rng.randbytes(32)
_SECRETS += [
    ("wif_key", f'bitcoin-cli importprivkey {_base58check(_WIF)} "cold-storage" false'),
    ("xprv_key", f"# electrum wallet backup\nmaster_private_key: {_base58check(_XPRV)}"),
    ("solana_keypair", "~/.config/solana/id.json:\n" + json.dumps(list(_rng.randbytes(64)))),
]

_LOOKALIKES = r"""
x-amzn-RequestId: {uuid}\nx-amz-apigw-id: {u16}=
{"level":"info","msg":"payment captured","correlation_id":"{uuid}","amount":4200}
traceId={h32} spanId={h16} service=checkout status=OK
X-GitHub-Request-Id: {H4}:{H5}:{H7}:{H7}:{H8}
"tenantId": "{uuid}",\n"id": "{uuid}",\n"isDefault": true,
order_id: 01{c24}  # ULID, sortable by creation time
event=user.signup ksuid=2{a26} plan=free
{"id": "{u21}", "title": "Quarterly report", "createdBy": "{u21}"}
db.orders.find({ _id: ObjectId("{h24}") })
{"id": "pi_3{a23}", "object": "payment_intent", "customer": "cus_{a14}"}
https://open.spotify.com/track/{a22}?si={h16}
Logs are available at [https://console.cloud.google.com/cloud-build/builds/{uuid}?project={d12}].
"InstanceId": "i-0{h16}",\n"ImageId": "ami-0{h16}",\n"SubnetId": "subnet-0{h16}"
/subscriptions/{uuid}/resourceGroups/rg-web/providers/Microsoft.Web/sites/acme-api
$ docker inspect --format '{{.Id}}' api\n{h64}
- uses: actions/checkout@{h40} # v4.2.2
-   repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {h40}  # frozen: v0.8.4
golang.org/x/crypto v0.31.0 h1:{b43}=\ngolang.org/x/crypto v0.31.0/go.mod h1:{b43}=
    {file = "urllib3-2.2.3-py3-none-any.whl", hash = "sha256:{h64}"},
lodash@^4.17.21:\n  version "4.17.21"\n  integrity sha512-{b86}==
  hashes = [\n    "h1:{b43}=",\n    "zh:{h64}",\n  ]
{h64}  node-v22.11.0-linux-x64.tar.xz
version https://git-lfs.github.com/spec/v1\noid sha256:{h64}\nsize 48213904
outs:\n- md5: {h32}\n  size: 1048576\n  path: data/train.csv
100644 blob {h40}\tREADME.md\n040000 tree {h40}\tsrc
![architecture](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAoAAAAHg{b200})
{"output_type": "execute_result", "data": {"image/jpeg": "/9j/4AAQSkZJRgABAQEASABIAAD{b180}"}}
@font-face { font-family: Brand; src: url(data:font/otf;base64,T1RUTwAKAIAAAwAgQ0ZGI{b160}); }
{"filename": "invoice-2025-0113.pdf", "content_base64": "JVBERi0xLjcKJeLjz9MK{b200}"}
Content-Type: image/gif; name="spacer.gif"\nContent-Transfer-Encoding: base64\n\nR0lGODlh{b68}
DKIM-Signature: v=1; a=rsa-sha256; d=acme.io; s=s1; bh={b43}=; b={b171}=
<ds:SignatureValue>{b171}=</ds:SignatureValue>
<script nonce="{b22}==" src="/static/app.js"></script>
/authorize?response_type=code&client_id=web&code_challenge={u43}&code_challenge_method=S256
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} lena@thinkpad
creation_rules:\n  - path_regex: secrets/.*\.yaml\n    age: age1{e58}
Follow our release announcements on nostr: npub1{e58}
Donations: 0x{h40} (acme.eth) or bc1q{e38}
{"keys": [{"kty": "RSA", "kid": "{u43}", "use": "sig", "n": "{u342}", "e": "AQAB"}]}
2048 MD5:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2}:{h2} root@db
      Key fingerprint = {H4} {H4} {H4} {H4} {H4}  {H4} {H4} {H4} {H4} {H4}
Public-Key-Pins: pin-sha256="{b43}="; pin-sha256="{b43}="; max-age=5184000
admin:$apr1${q8}${q22}
| app  | %    | mysql_native_password | *{H40} |
pbkdf2_sha256$870000${a22}${b43}=
password_pbkdf2 root grub.pbkdf2.sha512.10000.{H128}.{H128}
<passwordHash>#jbcrypt:$2a$10${q53}</passwordHash>
www-data:$6${q16}${q86}:19800:0:99999:7:::
username admin privilege 15 secret 9 $9${q14}${q43}
db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  {h80}\n  {h80}
smtp_password: ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYCAQAxggEhMIIBHQIBADAFMAACAQEw{b120}]
spring.datasource.password=ENC({b64})
    - secure: "{b342}="
$ cat config/credentials.yml.enc\n{b300}--{b22}--{b22}==
"ciphertext": "vault:v1:{b92}"
password 51:b:01000000D08C9DDF0115D1118C7A00C04FC297EB01000000{H220}
<settingsSecurity>\n  <master>{{b43}=}</master>\n</settingsSecurity>
Started POST "/login"\n  Parameters: {"user"=>{"email"=>"a@acme.io", "password"=>"[FILTERED]"}}
INFO connecting jdbc:postgresql://db:5432/app user=app password=<masked>
env:\n  SLACK_WEBHOOK_URL: ***\n  DEPLOY_ENV: production
Name: ci-bot    Secret key: sk-...{a4}    Created: Mar 3, 2025    Last used: never
      Name                    Value             Type    Location\n\
access_key     ****************{U4} shared-credentials-file
Reproduced with `curl -u admin:**** https://nas01/api/status` (password removed from the ticket).
session = boto3.Session(aws_access_key_id="AKIAIOSFODNN7EXAMPLE", region_name="us-west-2")
# .env.example\nOPENAI_API_KEY=\nDATABASE_URL=postgres://USER:PASSWORD@localhost:5432/app_dev
export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
SLACK_SIGNING_SECRET=<paste the signing secret from api.slack.com>
stripe.api_key = "sk_test_..."  # replace with your test key
  password: {{ required "db.password is required" .Values.db.password }}
oidc:\n  client_secret: ${OIDC_CLIENT_SECRET}
DB_PASSWORD = os.getenv("DB_PASSWORD") or getpass("DB password: ")
client = Client("ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "your_auth_token")
https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX
The header is "Basic " plus base64 of "username:password", e.g. Basic dXNlcm5hbWU6cGFzc3dvcmQ=
{"login.password": "Password", "login.forgot": "Forgot your password?", "login.show": "Show"}
"passwort_vergessen": "Passwort vergessen?",\n"passwort_zeigen": "Passwort anzeigen"
Service account passwords are rotated every 30 days by the PAM tool; nobody knows them.
User locked out after 5 wrong password attempts; unlocked in AD, pointed her to self-service reset.
<lea> did you put the new token in the vault?\n<tom> yes, kv/ci/github, old one revoked
Non condividere mai la tua password con nessuno, nemmeno con l'assistenza.
Никогда не сообщайте свой пароль сотрудникам поддержки.
Şifrenizi mi unuttunuz? E-posta adresinize bir sıfırlama bağlantısı gönderdik.
Nunca pediremos sua senha por telefone ou WhatsApp.
パスワードは12文字以上で設定してください。
# TODO: mover la contraseña a variables de entorno antes del despliegue
<el-input v-model="form.password" type="password" placeholder="Password" show-password />
AUTH_PASSWORD_VALIDATORS = [{"NAME": "...MinimumLengthValidator", "OPTIONS": {"min_length": 12}}]
parser.add_argument("--password", help="database password (default: $PGPASSWORD)")
grant_type=client_credentials&client_id=$CLIENT_ID&client_secret=$CLIENT_SECRET
Bestellnummer: 302-{d7}-{d7}
DHL Sendungsnummer: JJD00{d18}
Stripe('pk_live_51{a97}');
Sentry.init({ dsn: "https://{h32}@o{d6}.ingest.de.sentry.io/{d16}" });
<div class="g-recaptcha" data-sitekey="6L{u38}"></div>
"""

_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 0L16 16H0z"/></svg>'
)
_HARMLESS = [_expand(row) for row in _rows(_LOOKALIKES)]
_HARMLESS += [
    "background-image: url('data:image/svg+xml;base64," + b64(_SVG) + "');",
    _pem("PGP PUBLIC KEY BLOCK", "mQINBGX", 900).replace("BLOCK-----\n", "BLOCK-----\n\n", 1),
    _pem("RSA PUBLIC KEY", "MIIBCgKCAQEA", 360),
    "ca.crt: |\n"
    + _pem("CERTIFICATE", "MIIDQTCCAimgAwIBAgITBmyfz5m/jAo54vB4ikPmljZbyjANBgkqhkiG9w0BAQsF", 1100),
    _pem("PGP MESSAGE", "hQIMA", 500),
    _pem("AGE ENCRYPTED FILE", b64("age-encryption.org/v1\n-> X25519 ")[:28], 300),
    f"Test card {_luhn('400000000000' + _g(D, 3))}, any CVC, any future date",
    f"Invoice INV-2025-{_g(D, 5)} for €1,240.00, reference {_iban('RF', _g(UP + D, 12))}",
    "SEPA sandbox creditor account " + _iban("DE", _g(D, 18)),
    "IBAN example from the ECBS guide: FR76 3000 6000 0112 3456 7890 189",
    "Royal Mail tracking " + _s10("RR", "GB") + ", La Poste suivi " + _s10("CP", "FR"),
]

HOLDOUT9_SECRETS: tuple[Case, ...] = tuple(Case(kind, text) for kind, text in _SECRETS)
HOLDOUT9_HARMLESS: tuple[Case, ...] = tuple(Case("", text) for text in _HARMLESS)
