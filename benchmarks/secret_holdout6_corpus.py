"""A sixth held-out secret set, written before any detector change of round 6 (issue 17).

Committed alone, measured once against the round-5 detector, and checked once at the end of
round 6. It avoids the syntaxes of the older sets where it can: Windows administration
(``cmdkey``, ``schtasks /RP``, ``sc.exe ... password=``, ``psexec``, ``winrs``,
``ConvertTo-SecureString``), more tools (``smbclient -U u%p``, ``htpasswd -b``,
``rabbitmqctl add_user``, ``keytool -storepass``, ``openssl ... pass:``, ``7z -p``,
``nmcli ... password``, ``chpasswd``, ``ldapsearch -w``, ``mysqladmin ... password``), mail
and monitoring daemons (msmtp, fetchmail, mutt, offlineimap, sendmail ``AuthInfo``,
keepalived, FreeRADIUS, NATS, Kafka JAAS, strongSwan, BIND TSIG, SNMPv3 users, Nagios
``$USERn$``, Zabbix), Java and .NET configuration (Tomcat users, ``web.config``,
``appsettings.json``, Hibernate, Flyway), Vagrant, Packer, Helm values, more languages
(Kotlin, C#, Clojure, Erlang, OCaml, Nim, Zig, Groovy, Fish, Makefile, CMake, Objective-C,
Visual Basic, Crystal), vendor formats not in the older sets, and prose and chat in Italian,
Portuguese, Dutch, Polish, Russian, Japanese, Turkish and English. The look-alikes stress
what round 5 left open: public keys (SSH, age, PGP, X.509, JWK, crypto addresses, site
keys), fingerprints and pins, password hashes of more schemes, encrypted and sealed values
(hiera-eyaml, Chef, Vault transit, KMS, Rails credentials, ``{cipher}``, PGP messages),
checksums, identifiers of payment objects, documentation example keys, masked values and
prose about credentials. Values come from a fixed seed in each format's shape; none is real.
"""

from __future__ import annotations

import json

from benchmarks.secret_corpus import Case
from benchmarks.secret_values import AN, B58, B64, BECH32, HX, LO, UP, URL, D, Values, b64

__all__ = ["HOLDOUT6_HARMLESS", "HOLDOUT6_SECRETS"]

_values = Values(6006)
_rng = _values.rng
_g = _values.g


def _pw() -> str:
    """A human-chosen-looking password: a word, digits, one symbol and a few characters."""
    word = _rng.choice(["Winter", "copper", "Lotus", "bridge", "Kestrel", "amber", "Nova", "fig"])
    return word + _g(D, 3) + _rng.choice("!#$%&*+-.@_") + _g(AN, 3)


def _uuid() -> str:
    return f"{_g(HX, 8)}-{_g(HX, 4)}-4{_g(HX, 3)}-a{_g(HX, 3)}-{_g(HX, 12)}"


HOLDOUT6_SECRETS: tuple[Case, ...] = (
    # Windows administration
    Case("cli", f"cmdkey /add:fs02.acme.local /user:ACME\\svc_sync /pass:{_pw()}"),
    Case(
        "cli",
        f'schtasks /Create /TN "Nightly" /TR C:\\jobs\\run.bat /SC DAILY '
        f"/RU ACME\\batch /RP {_pw()}",
    ),
    Case("cli", f"sc.exe config MySvc obj= .\\svc_app password= {_pw()}"),
    Case("cli", f"psexec \\\\web07 -u ACME\\admin -p {_pw()} cmd /c ipconfig"),
    Case("cli", f"winrs -r:srv09 -u:Administrator -p:{_pw()} dir c:\\"),
    Case(
        "powershell",
        f"$sec = ConvertTo-SecureString '{_pw()}' -AsPlainText -Force\n"
        "$cred = New-Object PSCredential('ACME\\ops', $sec)",
    ),
    Case("powershell", f'Invoke-Sqlcmd -ServerInstance sql01 -Username sa -Password "{_pw()}"'),
    # more command-line tools
    Case("cli", f"smbclient //nas01/backup -U backup%{_pw()} -c 'ls'"),
    Case("cli", f"htpasswd -b -c /etc/nginx/.htpasswd admin {_pw()}"),
    Case("cli", f"rabbitmqctl add_user telemetry {_pw()}"),
    Case(
        "cli", f"keytool -importcert -alias ca -file ca.pem -keystore trust.jks -storepass {_pw()}"
    ),
    Case("cli", f"openssl pkcs12 -export -in c.pem -inkey k.pem -out c.p12 -passout pass:{_pw()}"),
    Case("cli", f"7z a -p{_pw()} -mhe=on backup.7z ./data"),
    Case("cli", f"nmcli dev wifi connect Acme-5G password {_pw()}"),
    Case("cli", f"echo 'deploy:{_pw()}' | chpasswd"),
    Case("cli", f'ldapsearch -x -H ldap://dc1 -D "cn=reader,dc=acme" -w {_pw()} "(uid=*)"'),
    Case("cli", f"mysqladmin -u root password '{_pw()}'"),
    Case("cli", f"redis-cli -h cache01 -a {_pw()} --no-auth-warning INFO"),
    Case("cli", f"sshpass -p '{_pw()}' scp dump.sql ops@10.0.4.4:/tmp"),
    Case("cli", f"wget --user=ci --password={_pw()} https://repo.acme.io/pkg.tgz"),
    Case(
        "cli",
        f"az login --service-principal -u {_uuid()} -p {_g(URL + '~.', 40)} --tenant acme.io",
    ),
    Case(
        "cli", f"snowsql -a acme-xy12 -u loader --authenticator snowflake -P\nSNOWSQL_PWD={_pw()}"
    ),
    # mail, monitoring and network daemons
    Case("msmtp", f"account work\nhost smtp.acme.io\nuser jdoe\npassword {_pw()}"),
    Case("fetchmail", f"poll imap.acme.io protocol IMAP user 'jdoe' password '{_pw()}' ssl"),
    Case("mutt", f'set smtp_pass = "{_pw()}"'),
    Case(
        "offlineimap", f"[Repository Remote]\ntype = IMAP\nremoteuser = jdoe\nremotepass = {_pw()}"
    ),
    Case("sendmail", f'AuthInfo:smtp.acme.io "U:relay" "P:{_pw()}" "M:PLAIN"'),
    Case("keepalived", f"authentication {{\n    auth_type PASS\n    auth_pass {_g(AN, 8)}\n}}"),
    Case("freeradius", f"client office {{\n    ipaddr = 10.1.0.0/16\n    secret = {_pw()}\n}}"),
    Case("nats", f'authorization {{\n  user: ingest\n  password: "{_pw()}"\n}}'),
    Case(
        "kafka",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="svc" password="{_pw()}";',
    ),
    Case("strongswan", f': PSK "{_pw()}{_g(AN, 8)}"'),
    Case(
        "bind",
        'key "xfer-key" {\n    algorithm hmac-sha256;\n'
        f'    secret "{b64(_rng.randbytes(32))}";\n}};',
    ),
    Case("snmp", f'createUser monitor SHA "{_pw()}" AES "{_pw()}"'),
    Case("nagios", f"$USER3$=svc_nagios\n$USER4$={_pw()}"),
    Case("zabbix", f"DBHost=localhost\nDBName=zabbix\nDBUser=zabbix\nDBPassword={_pw()}"),
    Case("openvpn", f"# auth.txt for auth-user-pass\nvpnuser01\n{_pw()}"),
    # Java, .NET and provisioning
    Case("tomcat", f'<user username="manager" password="{_pw()}" roles="manager-gui"/>'),
    Case("webconfig", f'<add key="SmtpPassword" value="{_pw()}" />'),
    Case(
        "appsettings",
        json.dumps({"AzureAd": {"ClientId": _uuid(), "ClientSecret": _g(URL + "~.", 40)}}),
    ),
    Case("hibernate", f'<property name="hibernate.connection.password">{_pw()}</property>'),
    Case("flyway", f"flyway.user=migrator\nflyway.password={_pw()}"),
    Case("vagrant", f'  config.ssh.password = "{_pw()}"'),
    Case("packer", json.dumps({"type": "vsphere-iso", "winrm_password": _pw()})),
    Case("helm", f"auth:\n  rootPassword: {_pw()}\n  replicationPassword: {_pw()}"),
    Case("jupyter", f"c.ServerApp.token = '{_g(HX, 48)}'"),
    Case("grafana", f"[security]\nadmin_user = admin\nadmin_password = {_pw()}"),
    # source code in more languages
    Case("kotlin", f'private const val SIGNING_SECRET = "{_g(AN, 32)}"'),
    Case(
        "csharp",
        'var client = new SmtpClient("smtp.acme.io") { Credentials = '
        f'new NetworkCredential("noreply", "{_pw()}") }};',
    ),
    Case("clojure", f'(def db {{:dbtype "postgresql" :user "app" :password "{_pw()}"}})'),
    Case("erlang", f'{{ok, C}} = epgsql:connect("db", "app", "{_pw()}", #{{database => "app"}}),'),
    Case("ocaml", f'let api_secret = "{_g(AN, 36)}"'),
    Case(
        "nim",
        f'let client = newHttpClient(headers = newHttpHeaders({{"X-Api-Key": "{_g(HX, 32)}"}}))',
    ),
    Case("zig", f'const token: []const u8 = "{_g(AN, 40)}";'),
    Case(
        "groovy",
        f"withCredentials([]) {{ sh \"curl -H 'X-JFrog-Art-Api: AKCp8{_g(AN, 68)}' $URL\" }}",
    ),
    Case("fish", f"set -gx GITLAB_TOKEN glpat-{_g(URL, 20)}"),
    Case("makefile", f"REGISTRY_PASS := {_pw()}\npush:\n\tdocker login -u ci -p $(REGISTRY_PASS)"),
    Case(
        "cmake",
        f'set(LICENSE_KEY "{_g(UP + D, 5)}-{_g(UP + D, 5)}-{_g(UP + D, 5)}-{_g(UP + D, 5)}")',
    ),
    Case("objc", f'NSString *const kClientSecret = @"{_g(AN, 40)}";'),
    Case("vb", f'Dim conn As New SqlConnection("Server=sql02;User Id=rpt;Password={_pw()};")'),
    Case("crystal", f'DB.open "mysql://root:{_pw()}@localhost/shop"'),
    Case("python", f'smtp.login("alerts@acme.io", "{_pw()}")'),
    Case(
        "js",
        "const sftp = new Client(); "
        f'await sftp.connect({{ host, username: "edi", password: "{_pw()}" }});',
    ),
    # vendor formats not in the older sets
    Case("anthropic", f"ANTHROPIC_API_KEY=sk-ant-api03-{_g(URL, 93)}AA"),
    Case("groq", f'Groq(api_key="gsk_{_g(AN, 52)}")'),
    Case("replicate", f"export REPLICATE_API_TOKEN=r8_{_g(AN, 37)}"),
    Case("linear", f'headers = {{"Authorization": "lin_api_{_g(AN, 40)}"}}'),
    Case("notion", f"notion = Client(auth='ntn_{_g(D, 11)}{_g(AN, 35)}')"),
    Case("figma", f"FIGMA_TOKEN=figd_{_g(URL, 40)}"),
    Case(
        "atlassian",
        "jira = JIRA(server, basic_auth=('me@acme.io', "
        f"'ATATT3xFfGF0{_g(URL, 180)}={_g(HX.upper(), 8)}'))",
    ),
    Case("tailscale", f"tailscale up --authkey tskey-auth-k{_g(AN, 16)}-{_g(AN, 33)}"),
    Case("supabase", f"supabase login --token sbp_{_g(HX, 40)}"),
    Case(
        "planetscale",
        f"DATABASE_URL='mysql://{_g(LO + D, 12)}:pscale_pw_{_g(URL, 43)}"
        "@aws.connect.psdb.cloud/app'",
    ),
    Case("newrelic", f"NEW_RELIC_API_KEY=NRAK-{_g(UP + D, 27)}"),
    Case("dynatrace", f"DT_API_TOKEN=dt0c01.{_g(UP + D, 24)}.{_g(UP + D, 64)}"),
    Case(
        "databricks",
        f"databricks configure --host https://adb-1.azuredatabricks.net --token dapi{_g(HX, 32)}",
    ),
    Case("telegram", f"bot = telebot.TeleBot('{_g(D, 10)}:AA{_g(URL, 33)}')"),
    Case("twilio", f"client = Client('SK{_g(HX, 32)}', '{_g(AN, 32)}', account_sid)"),
    Case("clickup", f"CLICKUP_TOKEN=pk_{_g(D, 8)}_{_g(UP + D, 32)}"),
    Case("resend", f"resend.api_key = 're_{_g(AN, 8)}_{_g(AN, 24)}'"),
    # prose and chat in eight languages
    Case("prose_it", f"La password dell'utente admin è {_pw()}, cambiala al primo accesso."),
    Case("prose_pt", f"A senha do Wi-Fi do escritório é {_pw()}"),
    Case("prose_nl", f"Het wachtwoord voor de testomgeving is {_pw()}"),
    Case("prose_pl", f"Hasło do serwera: {_pw()}"),
    Case("prose_ru", f"Пароль от базы: {_pw()}"),
    Case("prose_ja", f"管理画面のパスワードは {_pw()} です。"),
    Case("prose_tr", f"Sunucu şifresi {_pw()} olarak güncellendi."),
    Case("chat", f"@carol the staging login is admin and {_pw()} for now, I'll rotate it friday"),
    Case("chat", f"> pass?\n{_pw()}"),
    Case(
        "mail",
        f"Subject: VPN access\n\nYour temporary credentials:\n  login: jdoe\n  initial: {_pw()}\n"
        "Please change it after the first sign-in.",
    ),
    Case("ticket", f"Repro: log in with qa_user / {_pw()} then open Settings > Billing."),
)

HOLDOUT6_HARMLESS: tuple[Case, ...] = (
    # public keys and addresses
    Case("", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_g(B64, 43)} deploy@ci"),
    Case("", f"public_key: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{_g(B64, 200)}"),
    Case("", f"# public key: age1{_g(BECH32, 58)}"),
    Case(
        "",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBG"
        f"{_g(B64, 64)}\n{_g(B64, 64)}\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    Case(
        "",
        f"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE{_g(B64, 44)}\n"
        f"{_g(B64, 64)}\n-----END CERTIFICATE-----",
    ),
    Case(
        "",
        json.dumps(
            {"kty": "RSA", "use": "sig", "kid": _g(URL, 20), "n": _g(URL, 342), "e": "AQAB"}
        ),
    ),
    Case("", f"npub1{_g(BECH32, 58)}"),
    Case("", f"Send donations to bc1q{_g(BECH32, 38)} or 0x{_g(HX + 'ABCDEF', 40)}"),
    Case("", f'treasury_public_key = "{_g(B58, 44)}"'),
    Case("", f"STRIPE_PUBLISHABLE_KEY=pk_live_{_g(AN, 99)}"),
    Case("", f'<div class="g-recaptcha" data-sitekey="6L{_g(URL, 38)}"></div>'),
    Case("", f"mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOi{_g(URL, 30)}.{_g(URL, 22)}';"),
    Case("", f"VAPID_PUBLIC_KEY=B{_g(URL, 86)}"),
    Case("", f"server_public_key = {b64(_rng.randbytes(32))}"),
    # fingerprints, pins and digests
    Case("", f"Key fingerprint = {' '.join(_g(HX.upper(), 4) for _ in range(10))}"),
    Case("", "SHA256 Fingerprint=" + ":".join(_g(HX.upper(), 2) for _ in range(32))),
    Case("", "RSA key fingerprint is MD5:" + ":".join(_g(HX, 2) for _ in range(16)) + "."),
    Case("", f"|1|{_g(B64, 27)}=|{_g(B64, 27)}= ecdsa-sha2-nistp256 AAAAE2VjZHNh"),
    Case("", f"acme.io. 3600 IN DS 2371 13 2 {_g(HX.upper(), 64)}"),
    Case("", f"acme.io. IN SSHFP 4 2 {_g(HX, 64)}"),
    Case("", f'Public-Key-Pins: pin-sha256="{_g(B64, 43)}="; max-age=5184000'),
    Case("", f"_443._tcp.mail.acme.io. IN TLSA 3 1 1 {_g(HX, 64)}"),
    Case("", f'"integrity": "sha512-{_g(B64, 86)}=="'),
    Case("", f"github.com/pkg/errors v0.9.1 h1:{_g(B64, 43)}="),
    Case("", f'checksum = "{_g(HX, 64)}"'),
    Case("", f"image: ghcr.io/acme/api@sha256:{_g(HX, 64)}"),
    Case("", f"version https://git-lfs.github.com/spec/v1\noid sha256:{_g(HX, 64)}\nsize 1048576"),
    Case("", f"signing_key_fingerprint: {_g(HX.upper(), 40)}"),
    # password hashes of more schemes
    Case("", f"admin:$apr1${_g(AN, 8)}${_g(AN + './', 22)}"),
    Case("", f"authentication_string: *{_g(HX.upper(), 40)}"),
    Case(
        "",
        f"rolpassword | SCRAM-SHA-256$4096:{_g(B64, 24)}${_g(B64, 43)}=:{_g(B64, 43)}=",
    ),
    Case("", f"password = pbkdf2_sha256$600000${_g(AN, 22)}${_g(B64, 43)}="),
    Case("", f"userPassword: {{SSHA}}{_g(B64, 32)}"),
    Case(
        "",
        f'set system root-authentication encrypted-password "$6${_g(AN, 8)}${_g(AN + "./", 86)}"',
    ),
    Case("", f"username netops privilege 15 secret 9 $9${_g(AN, 14)}${_g(AN + './', 43)}"),
    Case("", f"basicauth /admin/* {{\n    bob $2a$14${_g(AN + './', 53)}\n}}"),
    Case("", f'hashed_password: "$argon2i$v=19$m=4096,t=3,p=1${_g(B64, 22)}${_g(B64, 43)}"'),
    # encrypted and sealed values
    Case("", f"db_password: ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYCAQAx{_g(B64, 120)}]"),
    Case(
        "",
        json.dumps(
            {
                "id": "prod",
                "password": {
                    "encrypted_data": _g(B64, 44),
                    "iv": _g(B64, 16),
                    "auth_tag": _g(B64, 22),
                    "version": 3,
                    "cipher": "aes-256-gcm",
                },
            }
        ),
    ),
    Case("", f"ciphertext: vault:v1:{_g(B64, 64)}"),
    Case("", f"encrypted_token = AQICAHh{_g(B64, 160)}=="),
    Case("", f"{_g(B64, 120)}--{_g(B64, 16)}--{_g(B64, 22)}=="),
    Case("", f"spring.datasource.password={{cipher}}{_g(HX, 96)}"),
    Case(
        "",
        f"-----BEGIN PGP MESSAGE-----\n\nhQIMA{_g(B64, 60)}\n{_g(B64, 64)}\n"
        "=xYzW\n-----END PGP MESSAGE-----",
    ),
    Case("", f"sealed_api_key: AgA{_g(B64, 200)}"),
    Case(
        "",
        f"client_secret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  {_g(HX, 64)}\n  {_g(HX, 64)}",
    ),
    Case("", f"age-encryption.org/v1\n-> X25519 {_g(B64, 43)}\n{_g(B64, 43)}\n--- {_g(B64, 43)}"),
    # identifiers and documentation examples
    Case("", f"Refunded charge ch_{_g(AN, 24)} for customer cus_{_g(AN, 14)}"),
    Case(
        "",
        f"payment_intent: pi_{_g(AN, 24)}\nclient_secret: pi_{_g(AN, 24)}_secret_{_g(AN, 25)}",
    ),
    Case(
        "",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    Case("", "api_key: sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    Case("", f"x-request-id: req_{_g(AN, 24)}\ncf-ray: {_g(HX, 16)}-FRA"),
    Case("", f"build_id: {_g(HX, 40)}"),
    Case("", f'ETag: W/"{_g(HX, 32)}"'),
    Case("", f'"instance_id": "i-{_g(HX, 17)}", "ami": "ami-{_g(HX, 17)}"'),
    # masked, referenced, generated
    Case("", "password: '••••••••'\ntoken: ghp_****************************WXYZ"),
    Case("", "DB_PASSWORD=${{ secrets.DB_PASSWORD }}"),
    Case("", "$pass = Read-Host -AsSecureString 'Password'"),
    Case("", 'password_file = "/run/agenix/db-password"'),
    Case("", "openssl rand -base64 32 > secret.key"),
    Case("", "cmdkey /add:fs02.acme.local /user:ACME\\svc_sync /pass"),
    # code and help text about credentials
    Case(
        "",
        "if not check_password(raw_password, user.password):\n    raise AuthError('bad password')",
    ),
    Case("", "  -w, --password=PASSWORD   bind password (see also -W, -y passwdfile)"),
    Case("", 'public static final String PASSWORD_RESET_TOKEN_HEADER = "X-Reset-Token";'),
    Case("", "token_endpoint_auth_method: client_secret_basic"),
    # prose about credentials in several languages
    Case("", "La password deve essere cambiata ogni 90 giorni."),
    Case("", "A senha temporária expira em 24 horas."),
    Case("", "Пароль должен содержать не менее двенадцати символов."),
    Case("", "パスワードを忘れた場合は管理者に連絡してください。"),
    Case("", "The public key fingerprint is printed on the back of the device."),
    Case("", "@carol staging login is in the team vault under 'staging-admin'"),
)
