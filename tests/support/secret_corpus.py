"""A corpus of secrets in the forms agent traffic carries them, built at run time.

No real-looking key is written in this file: every value is drawn from a seeded RNG in the alphabet and
length of its format (``AKIA`` + 16 of ``[A-Z0-9]``, 88 base64 characters for an Azure account key...), or
joined from fragments, so the repository holds no string a secret scanner (or a person) could mistake for a
leaked credential, and the corpus is the same on every run.

``build()`` returns ``Case``\\s: a kind (one per row of the table ``benchmarks/secret_corpus.py`` prints),
its class (the family of forms it belongs to), the text as a user or tool would write it, and the secret
values that must not survive redaction. ``BENIGN`` holds look-alikes that must come through unchanged:
placeholders, references to a secret rather than the secret, identifiers (commit hashes, UUIDs, digests),
and prose about credentials. Decision on hashes: a git commit hash, a UUID and a ``sha256:`` digest are
identifiers, not credentials, and stay; a hex string *assigned to a secret-named key* is redacted (a hex
API key is the common case there).
"""

from __future__ import annotations

import base64
import random
import re
import string
from dataclasses import dataclass

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
PASSWORD = string.ascii_letters + string.digits + "!%*+-.?^_~"  # no @ or #: they end a URL's userinfo


@dataclass(frozen=True)
class Case:
    kind: str
    cls: str
    text: str
    secrets: tuple[str, ...]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        """n characters of ``alphabet``, with at least one upper, lower and digit where it has them."""
        while True:
            v = "".join(self.rng.choice(alphabet) for _ in range(n))
            need = [
                c for c in (string.ascii_uppercase, string.ascii_lowercase, string.digits) if set(c) & set(alphabet)
            ]
            if n < 8 or all(set(v) & set(c) for c in need):
                return v

    def card(self, sep: str) -> str:
        """A 16-digit number starting 4 or 5 whose last digit makes the Luhn sum a multiple of 10."""
        digits = [self.rng.choice((4, 5))] + [self.rng.randrange(10) for _ in range(14)]
        total = sum(d if i % 2 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits)))
        digits.append((10 - total % 10) % 10)
        s = "".join(map(str, digits))
        return sep.join(s[i : i + 4] for i in range(0, 16, 4))

    def pw(self, n: int = 14) -> str:
        return self.s(PASSWORD, n)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode()

    def b64url(self, nbytes: int) -> str:
        return base64.urlsafe_b64encode(self.rng.randbytes(nbytes)).decode().rstrip("=")

    def jwt(self) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = base64.urlsafe_b64encode(f'{{"sub":"{self.s(HEX, 8)}","exp":1900000000}}'.encode()).decode()
        return f"{head}.{body.rstrip('=')}.{self.b64url(32)}"

    def pem(self, kind: str) -> str:
        lines = "\n".join(self.b64(48) for _ in range(6))
        return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----"


def build(seed: int = 1337) -> list[Case]:
    g = _Gen(seed)
    cases: list[Case] = []

    def add(kind: str, cls: str, template: str, *secrets: str) -> None:
        cases.append(Case(kind, cls, template.format(*secrets), secrets))

    # -- provider formats (a prefix and an alphabet) --------------------------------------------------
    add(
        "aws_access_key_id", "provider", "deploy with {} from the ops vault please", "AK" + "IA" + g.s(UPPER_DIGITS, 16)
    )
    add(
        "aws_credentials_ini",
        "assignment",
        "[default]\naws_access_key_id = {}\naws_secret_access_key = {}\nregion = eu-west-1",
        "AS" + "IA" + g.s(UPPER_DIGITS, 16),
        g.s(ALNUM + "+/", 40),
    )
    add("gcp_api_key", "provider", "maps client: new Map({{ key: '{}' }})", "AI" + "za" + g.s(B64URL, 35))
    add(
        "gcp_service_account_json",
        "private_key",
        '{{"type": "service_account", "private_key_id": "{}", "private_key": "{}"}}',
        g.s(HEX, 40),
        g.pem("PRIVATE KEY").replace("\n", "\\n"),
    )
    add(
        "github_pat_classic",
        "provider",
        "git remote set-url origin with token {} then push",
        "gh" + "p_" + g.s(ALNUM, 36),
    )
    add("github_pat_fine", "provider", "GH_TOKEN: {}", "github" + "_pat_" + g.s(ALNUM, 22) + "_" + g.s(ALNUM, 59))
    add(
        "gitlab_pat",
        "provider",
        "CI_JOB: curl --header 'PRIVATE-TOKEN: {}' https://gitlab.example.com",
        "gl" + "pat-" + g.s(B64URL, 20),
    )
    add(
        "slack_bot",
        "provider",
        "slack_client = WebClient({!r})",
        "xo" + "xb-" + g.s("0123456789", 12) + "-" + g.s("0123456789", 13) + "-" + g.s(ALNUM, 24),
    )
    add(
        "slack_webhook",
        "provider",
        "post the alert to {}",
        "https://hooks."
        + "slack.com/services/T"
        + g.s(UPPER_DIGITS, 8)
        + "/B"
        + g.s(UPPER_DIGITS, 10)
        + "/"
        + g.s(ALNUM, 24),
    )
    add(
        "discord_bot",
        "provider",
        "client.run('{}')",
        "MT" + g.s(ALNUM, 22) + "." + g.s(B64URL, 6) + "." + g.s(B64URL, 27),
    )
    add("telegram_bot", "provider", 'bot = telebot.TeleBot("{}")', g.s("0123456789", 10) + ":AA" + g.s(B64URL, 33))
    add("stripe_live", "provider", 'Stripe.apiKey = "{}";', "sk" + "_live_" + g.s(ALNUM, 24))
    add("stripe_webhook", "provider", "endpoint secret {} from the dashboard", "wh" + "sec_" + g.s(ALNUM, 32))
    add("twilio_api_key", "provider", "twilio key {} sid", "S" + "K" + g.s(HEX, 32))
    add("sendgrid", "provider", "mail via {}", "S" + "G." + g.s(B64URL, 22) + "." + g.s(B64URL, 43))
    add("openai_project", "provider", 'client = OpenAI(api_key="{}")', "sk" + "-proj-" + g.s(B64URL, 48))
    add("anthropic", "provider", "export ANTHROPIC_API_KEY={}", "sk" + "-ant-api03-" + g.s(B64URL, 80))
    add("huggingface", "provider", "huggingface-cli login --token {}", "h" + "f_" + g.s(ALNUM, 34))
    add("npm_token", "provider", "//registry.npmjs.org/:_authToken={}", "np" + "m_" + g.s(ALNUM, 36))
    add("pypi_token", "provider", "twine upload -u __token__ -p {} dist/*", "py" + "pi-AgE" + g.s(B64URL, 60))
    add("jwt_bearer", "http_header", "curl -H 'Authorization: Bearer {}' https://api.example.com/me", g.jwt())

    # -- private key blocks --------------------------------------------------------------------------
    add("rsa_private_key", "private_key", "here is the deploy key:\n{}\nuse it once", g.pem("RSA PRIVATE KEY"))
    add("openssh_private_key", "private_key", "cat ~/.ssh/id_ed25519\n{}", g.pem("OPENSSH PRIVATE KEY"))
    ec = g.pem("EC PRIVATE KEY")
    add("ec_key_in_yaml", "private_key", "tls:\n  key: |\n    {}", ec.replace("\n", "\n    "))

    # -- URLs with credentials -------------------------------------------------------------------------
    add("postgres_url", "url_credentials", "DATABASE_URL=postgresql://app:{}@db.internal:5432/orders", g.pw())
    add("mysql_url", "url_credentials", "engine = create_engine('mysql+pymysql://root:{}@127.0.0.1/shop')", g.pw())
    add(
        "mongodb_srv",
        "url_credentials",
        'MONGO_URI="mongodb+srv://svc:{}@cluster0.ab1cd.mongodb.net/?retryWrites=true"',
        g.s(ALNUM, 16),
    )
    add("redis_no_user", "url_credentials", "CELERY_BROKER_URL = 'redis://:{}@cache:6379/0'", g.s(ALNUM, 20))
    add("amqp_url", "url_credentials", "amqp://rabbit:{}@mq.internal:5672/vhost", g.pw(12))
    add(
        "https_basic_in_url",
        "url_credentials",
        "git clone https://deploy:{}@git.example.com/team/repo.git",
        g.s(ALNUM, 18),
    )
    add(
        "url_token_param",
        "url_credentials",
        "GET https://api.example.com/v2/items?limit=10&access_token={} HTTP/1.1",
        g.s(ALNUM, 32),
    )
    add(
        "azure_sas_url",
        "url_credentials",
        "https://acct.blob.core.windows.net/c/b.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig={}",
        g.s(ALNUM, 40) + "%3D",
    )

    # -- connection strings ----------------------------------------------------------------------------
    add(
        "azure_storage_conn",
        "connection_string",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
        g.b64(64),
    )
    add(
        "azure_servicebus_conn",
        "connection_string",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}",
        g.b64(32),
    )
    add(
        "ado_sqlserver_conn",
        "connection_string",
        '"ConnectionStrings": {{"Default": "Server=tcp:acme.database.windows.net,1433;Initial Catalog=shop;User ID=app;Password={};Encrypt=True;"}}',
        g.pw(16),
    )
    add(
        "odbc_conn",
        "connection_string",
        "conn = pyodbc.connect('DRIVER={{ODBC Driver 18}};SERVER=db;UID=sa;PWD={};')",
        g.pw(12),
    )
    add(
        "jdbc_url",
        "connection_string",
        "spring.datasource.url=jdbc:postgresql://db:5432/app?user=app&password={}&ssl=true",
        g.pw(12),
    )

    # -- key-value assignments ---------------------------------------------------------------------------
    add("dotenv_db_password", "assignment", "# .env\nDB_HOST=db\nDB_PASSWORD={}\nDB_PORT=5432", g.pw(16))
    add(
        "dotenv_quoted_spaces",
        "assignment",
        'ADMIN_PASSWORD="{}"',
        g.s(ALNUM, 6) + " " + g.s(ALNUM, 7) + " " + g.s(ALNUM, 5),
    )
    add(
        "short_account_key",
        "connection_string",
        "AccountName=dev;AccountKey={};TableEndpoint=https://t.example",
        g.b64(33),
    )
    add("export_token_hex", "assignment", "export DEPLOY_TOKEN={}", g.s(HEX, 40))
    add("yaml_api_key_hex", "assignment", "datadog:\n  api_key: {}\n  site: datadoghq.eu", g.s(HEX, 32))
    add("json_camel_apikey", "assignment", '{{"service": "geo", "apiKey": "{}", "timeout": 30}}', g.s(ALNUM, 32))
    add("toml_password", "assignment", '[database]\nuser = "app"\npassword = "{}"\n', g.pw(14))
    add("ini_mycnf", "assignment", "[client]\nuser=root\npassword={}\nhost=localhost", g.pw(12))
    add("xml_attr_password", "assignment", '<property name="hibernate.connection.password" value="{}"/>', g.pw(12))
    add("xml_element_secret", "assignment", "<clientSecret>{}</clientSecret>", g.s(ALNUM, 30))
    add("k8s_secret_b64", "assignment", "kind: Secret\ndata:\n  password: {}\n", g.b64(18))
    add("docker_config_auth", "assignment", '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}', g.b64(24))
    add("signing_key_entropy", "assignment", "JWT_SIGNING_KEY = '{}'", g.b64(32))
    add("session_secret", "assignment", "app.config['SESSION_SECRET'] = '{}'", g.s(ALNUM, 40))
    add("api_key_header", "http_header", "X-Api-Key: {}", g.s(HEX, 32))
    add(
        "basic_header",
        "http_header",
        "Authorization: Basic {}",
        base64.b64encode(f"admin:{g.pw(12)}".encode()).decode(),
    )
    add("cookie_session", "http_header", "Cookie: theme=dark; sessionid={}; csrftoken=abc", g.s(ALNUM, 32))
    add("netrc", "assignment", "machine api.example.com login bot password {}", g.pw(14))

    # -- command-line flags ------------------------------------------------------------------------------
    add("cli_password_space", "cli_flag", "psql --host db --username app --password {} shop", g.pw(12))
    add("mysql_dash_p", "cli_flag", "mysql -u root -p{} -h db shop < dump.sql", g.pw(12))
    add("curl_user", "cli_flag", "curl -u admin:{} https://jenkins.example.com/api/json", g.pw(12))
    add("docker_login", "cli_flag", "echo done; docker login -u ci --password {} registry.example.com", g.pw(16))
    add("kubectl_literal", "cli_flag", "kubectl create secret generic db --from-literal=password={}", g.pw(14))

    # -- in prose, in several languages ------------------------------------------------------------------
    add("prose_en", "prose", "The staging admin password is {} until Friday, rotate it after.", g.pw(12))
    add("prose_es", "prose", "La contraseña de la base de datos es {} y no la compartas.", g.pw(12))
    add("prose_de", "prose", "Das Passwort für den Server lautet: {}", g.pw(12))
    add("prose_fr", "prose", "Le mot de passe du compte : {} (à changer)", g.pw(12))
    add("prose_zh", "prose", "服务器的密码是 {} 请保密", g.pw(12))
    add("prose_token_hex", "prose", "here's my API token: {} thanks", g.s(HEX, 40))
    add("prose_noun", "prose", "ssh in as root, password {} then restart nginx", g.pw(12))
    add("prose_passphrase", "prose", "the key's passphrase '{}' is in the vault too", g.pw(16))

    # -- credentials stated in words: a value that may look like any word, in several languages (credentials.py) ----
    word = g.rng.choice
    words = ["sunflower", "bluebird", "swordfish", "marigold", "pinecone", "lighthouse", "tangerine", "nebula"]
    add("prose_plain_word", "prose_credential", "my email password is {} so don't lose it", word(words))
    add(
        "prose_set_to",
        "prose_credential",
        "I set the wifi password to {} yesterday",
        word(words) + g.s("0123456789", 2),
    )
    add("prose_changed_now", "prose_credential", "the router password changed, it's now {}", g.s(ALNUM, 10))
    add(
        "prose_reverse", "prose_credential", "use '{}' as the password for the test account", word(words).title() + "99"
    )
    add(
        "prose_passphrase_words",
        "prose_credential",
        "my passphrase is {} and it unlocks the backup disk",
        " ".join(g.rng.sample(words, 4)),
    )
    add("prose_seed_phrase", "prose_credential", "the wallet recovery phrase: {}", " ".join(g.rng.sample(words, 6)))
    add("prose_login_pair", "prose_credential", "log in with ops-admin / {} on the staging box", g.pw(10))
    add("prose_login_as_with", "prose_credential", "I log in as root with {} every morning", word(words))
    add("prose_user_pass", "prose_credential", "username jdoe and password {} for the portal", word(words))
    add("prose_door_code", "prose_credential", "the office door code is {} after 6pm", g.s("0123456789", 4))
    add("prose_unlock_pin", "prose_credential", "phone unlock PIN: {}", g.s("0123456789", 6))
    add(
        "prose_ssn",
        "national_id",
        "my SSN is {}",
        f"{g.rng.randint(100, 599)}-{g.rng.randint(10, 99)}-{g.rng.randint(1000, 9999)}",
    )
    add("prose_passport", "national_id", "passport number {} expires in 2031", "X" + g.s("0123456789", 8))
    add("prose_aadhaar", "national_id", "my Aadhaar number is {}", " ".join(g.s("0123456789", 4) for _ in range(3)))
    add("prose_es_clave", "prose_credential", "Mi contraseña del banco es {}", word(["girasol", "mariposa", "tortuga"]))
    add("prose_fr_cest", "prose_credential", "le mot de passe du wifi, c'est {}", word(["soleil", "papillon"]) + "77")
    add("prose_pt_senha", "prose_credential", "a minha senha é {}", word(["abacaxi", "saudade"]))
    add(
        "prose_de_wlan", "prose_credential", "Das WLAN-Passwort ist {}", word(["Katze", "Sonne"]) + g.s("0123456789", 3)
    )
    add("prose_zh_password", "prose_credential", "我的密码是{}", word(words))
    add("prose_ru_password", "prose_credential", "мой пароль {}", g.pw(10))
    add(
        "prose_cpf",
        "national_id",
        "meu CPF é {}",
        f"{g.s('0123456789', 3)}.{g.s('0123456789', 3)}.{g.s('0123456789', 3)}-{g.s('0123456789', 2)}",
    )

    # -- payment data: a Luhn-valid card number however it is grouped, a PIN named as one ----------------
    add("card_grouped", "payment", "charge card {} exp 12/29", g.card(" "))
    add("card_dashed", "payment", "the customer's card is {} (visa)", g.card("-"))
    add("card_plain", "payment", "refund to {} please", g.card(""))
    add("pin_prose", "payment", "my bank PIN is {} don't share it", g.s(string.digits, 4))
    return cases


def pieces(secret: str) -> list[str]:
    """The secret and every 16-character piece of its long parts (a line of a key block counts as a leak)."""
    out = [secret]
    for part in secret.replace("\\n", "\n").split():
        if len(part) >= 16 and not part.startswith("-----"):
            out += [part[i : i + 16] for i in range(0, len(part) - 15, 8)]
    return out


def leaked(secret: str, text: str) -> bool:
    """Whether ``text`` holds the secret or a piece of it. A short one (a PIN's four digits) counts only as a whole
    token: by chance alone it is inside a timestamp or a hash of any long file."""
    if len(secret) < 8:
        return re.search(rf"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])", text) is not None
    return any(p in text for p in pieces(secret))


# Must come through unchanged.
BENIGN = [
    "password=<your-password>",
    "api_key: YOUR_KEY_HERE",
    "token=xxx",
    "DB_PASSWORD=${DB_PASSWORD}",
    'token = os.environ["TOKEN"]',
    "api_key = os.getenv('OPENAI_API_KEY')",
    "secret_key = settings.SECRET_KEY",
    "const key = process.env.API_KEY;",
    'password: ""',
    "password=****",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "the password is required and must be rotated",
    "max_tokens=512, tokens: 4096",
    "echo $PW | docker login --password-stdin -u ci registry.example.com",
    "mysql -u root -p shop",
    "docker run -p 8080:80 nginx",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "image@sha256:" + "a3f5" * 16,
    "postgres://localhost:5432/app",
    "https://docs.python.org/3/library/re.html?highlight=token",
    "see src/metaclaw_plugin/skillbank/retrieve.py line 42",
    "Keep the password and the api key out of the repository; the token is read from the environment.",
    "La contraseña es obligatoria.",
    "keyboard shortcut: Ctrl+K, the primary key is id",
    "connect the LED to pin 13 of the board; GPIO pin: 7",
    "the password field is empty and the password reset link expired",
    "order 4111111111111112 shipped on 2026-12-01, invoice 5500 0000 0000 0005",
    "call +1 555 0100 between 9 and 5, ticket 3456-7890-1234",
    # credential words without a credential (credentials.py)
    "reset your password to regain access",
    "my password manager is Bitwarden and the password policy needs 12 characters",
    "the verification code expires in 10 minutes; enter the code you received",
    "pin numpy to 1.26 and log in to the dashboard, then click settings",
    "log in to staging.example.com:8443 and check the account page",
    "credentials: see the vault entry db/prod",
    "Passport photos are 35x45 mm; the ssn column is encrypted at rest",
    "what is my password? ¿Cuál es mi contraseña? Je veux changer mon mot de passe.",
    "the answer is 42 and the key is to keep functions small",
]
