"""Credentials stated in words (metaclaw_plugin/credentials.py), by class: the value after a credential noun is
redacted however plain it looks, in every form of statement and in the languages the memory extractor reads, and
a mention of a credential without one is left alone. Values are drawn from a seeded RNG, so no test depends on
one spelling."""

from __future__ import annotations

import random
import string
from dataclasses import replace

import pytest

from metaclaw_plugin import credentials
from metaclaw_plugin.config import PrivacySettings, Settings
from metaclaw_plugin.lookalikes import fold_mixed
from metaclaw_plugin.privacy import Redactor, disk_redactor, redactor_for

RNG = random.Random(4242)
WORDS = ["sunflower", "bluebird", "swordfish", "marigold", "pinecone", "lighthouse", "tangerine", "nebula", "otter"]
R = Redactor()


def word() -> str:
    return RNG.choice(WORDS)


def shaped() -> str:
    return RNG.choice(WORDS).title() + "".join(RNG.choice(string.digits) for _ in range(3)) + RNG.choice("!#%")


def digits(n: int) -> str:
    return "".join(RNG.choice(string.digits) for _ in range(n))


def _gone(template: str, *values: str) -> None:
    text = template.format(*values)
    out = R.redact(text)
    for v in values:
        assert v not in out, (text, out)
    assert "[REDACTED:" in out


# A password named in a sentence: the value is whatever the sentence gives it, a plain word included.
PASSWORD_FORMS = [
    "my password is {}",
    "the password for the router is {}",
    "The staging admin password was {} until Friday",
    "the wifi password: {}",
    "Remember: my bank password = {}",
    "I set the wifi password to {} yesterday",
    "I changed my email password to {}",
    "my laptop password was changed to {} this morning",
    "the router password changed, it's now {}",
    "my Apple ID password is still {}",
    "use '{}' as the password for the test account",
    "{} is my password for the forum",
    "log in with the password {} please",
    "pw: {}",
    "The new password I picked is {}",
    "passcode is {}",
]
PASSWORD_FORMS_I18N = [
    "Mi contraseña del banco es {}",
    "La contraseña de la base de datos es {} y no la compartas",
    "mon mot de passe est {}",
    "le mot de passe du wifi, c'est {}",
    "a minha senha é {}",
    "a senha do banco é {}",
    "Mein Passwort ist {}",
    "Das WLAN-Passwort ist {}",
    "Das Passwort für den Server lautet: {}",
    "La password del router è {}",
    "我的密码是{}",
    "服务器的密码是 {} 请保密",
    "パスワードは {} です",
    "비밀번호는 {} 입니다",
]


# The edges the lead's probe found leaking (issue 41): a clause or an aside between the noun and its copula, and an
# environment variable named for a secret (each fails on the code before its fix).
PASSWORD_FORMS_EDGES = [
    "the password we chose together is {}",
    "The VPN password that the helpdesk sent me was {}",
    "the router password (the one on the label) is {}",
    "my email password, as you know, is {}",
    "the password — the one for the shared drive — is {}",
    "la contraseña que usamos en casa es {}",
    "le mot de passe qu'il m'a donné est {}",
    "the Spotify password my brother uses is {}",
    "set SMTP_PASSWORD to {} before you start",
    "change JWT_SECRET to {} in the .env file",
    "I set POSTGRES_PASSWORD to {} in compose",
    "PGPASSWORD is now {}",
    "update WIFI_PSK to {}",
    "then set SLACK_BOT_TOKEN to {} and restart",
    "ADMIN_PWD should be set to {} on staging",
    "the shared secret we agreed on is '{}'",
    "our secret word is {}",
    "**Password:** {}",
    "- **Wi-Fi password**: {}",
    "my pass word is {}",
    "pswd: {}",
]


@pytest.mark.parametrize("form", PASSWORD_FORMS + PASSWORD_FORMS_I18N + PASSWORD_FORMS_EDGES)
@pytest.mark.parametrize("value", ["word", "shaped"])
def test_a_password_stated_in_a_sentence_is_redacted_however_plain(form: str, value: str) -> None:
    _gone(form, word() if value == "word" else shaped())


@pytest.mark.parametrize(
    "form",
    [
        "my passphrase is {}",
        "the wallet recovery phrase: {}",
        "the seed phrase is {} so write it down",
        "my passphrase is {} and it unlocks the backup disk",
        "frase secreta: {}",
    ],
)
def test_a_passphrase_is_redacted_whole_every_word_of_it(form: str) -> None:
    phrase = RNG.sample(WORDS, 5)
    out = R.redact(form.format(" ".join(phrase)))
    assert not any(w in out for w in phrase), out


@pytest.mark.parametrize(
    "form",
    [
        "my bank PIN is {}",
        "phone unlock pin: {}",
        "the office door code is {} after 6pm",
        "The alarm disarm code is {}",
        "our gate code is {}#",
        "door code {}",
        "el código de acceso es {}",
        "le code de la porte : {}",
        "the garage PIN is secret {} so keep it to yourself",
        "Her new passcode is temporary {}",
        "the alarm PIN that the installer set is {}",
        # what a lock opens with, the code before what it opens, a combo (stop 59's red-team sets)
        "The safe opens with {}.",
        "Use the code {} to get into the server room.",
        "Gym locker combo: {}",
        "my bike lock combo is {}",
        # a lock labelled with its code (stop 60's held-out probe: "The safe in the hotel room: 5-1-5-1")
        "The safe in the hotel room: {}, then press lock.",
        "locker: {}",
        "Garage keypad - {}",
        "alarm: {}",
        # a combination and a door code in other languages (stop 60's second held-out probe)
        "La combinación del candado del gimnasio es {}",
        "A combinação do cofre é {}",
        "Die Kombination vom Zahlenschloss ist {}",
        "La combinazione della cassaforte è {}",
        "Le digicode de l'immeuble est {}",
    ],
)
def test_a_code_is_redacted(form: str) -> None:
    _gone(form, digits(RNG.choice((4, 6))))


def test_a_list_of_backup_codes_is_redacted_whole() -> None:
    a, b = digits(4) + "-" + digits(4), digits(4) + "-" + digits(4)
    _gone("2FA backup codes: {}, {}", a, b)


@pytest.mark.parametrize(
    ("form", "value"),
    [
        ("my SSN is {}", f"{RNG.randint(100, 599)}-{RNG.randint(10, 99)}-{RNG.randint(1000, 9999)}"),
        ("SSN: {}", digits(9)),
        ("my social is {}", f"{RNG.randint(100, 599)} {RNG.randint(10, 99)} {RNG.randint(1000, 9999)}"),
        ("national insurance number {}", "QQ" + digits(6) + "C"),
        ("my passport number is {}", "X" + digits(8)),
        ("Mi número de pasaporte es {}", "AB" + digits(7)),
        ("meu CPF é {}", f"{digits(3)}.{digits(3)}.{digits(3)}-{digits(2)}"),
        ("Meine Steuer-ID lautet {}", f"{digits(2)} {digits(3)} {digits(3)} {digits(3)}"),
        ("我的身份证号是 {}", digits(17) + "X"),
        ("my Aadhaar number is {}", f"{digits(4)} {digits(4)} {digits(4)}"),
        ("the intake form had {} in the notes", f"{RNG.randint(100, 599)}-{RNG.randint(10, 99)}-{digits(4)}"),
    ],
)
def test_a_national_id_is_redacted(form: str, value: str) -> None:
    _gone(form, value)


@pytest.mark.parametrize(
    "form",
    [
        "log in with ops-admin / {} on the staging box",
        "credentials are admin:{}",
        "our shared account: team@example.org / {}",
        "I log in as root with {} every morning",
        "username jdoe and password {} for the portal",
        "User: bob.smith Password: {}",
        "login: bob, pass: {}",
        "login for the router: admin / {}",
        "wifi credentials: guest | {}",
    ],
)
@pytest.mark.parametrize("value", ["word", "shaped"])
def test_the_secret_half_of_a_login_pair_is_redacted(form: str, value: str) -> None:
    _gone(form, word() if value == "word" else shaped())


@pytest.mark.parametrize(
    "text",
    [
        "I unlock the work laptop with {}.",  # a token a lock opens with
        "Das WLAN-Passwort im Büro ist {}.",  # a German compound, a place before the copula
        "Het wifi-wachtwoord thuis is {}.",
        "The password here is {}.",
    ],
)
def test_a_shaped_value_said_around_its_lock_or_place_is_redacted(text: str) -> None:
    _gone(text, shaped())


def test_canadas_social_insurance_number_by_its_initials_is_redacted() -> None:
    _gone("My SIN is {}.", f"{digits(3)} {digits(3)} {digits(3)}")


BENIGN = [
    "reset your password to regain access",
    "The password is case sensitive and must be rotated.",
    "my password manager is Bitwarden and the password policy needs 12 characters",
    "the password field is empty and the password reset link expired",
    "what is my password? ¿Cuál es mi contraseña? Je veux changer mon mot de passe.",
    "La contraseña es obligatoria.",
    "The meeting opens with 5 minutes of updates.",
    "Use code 2024 for the discount.",
    "I ordered the lunch combo for 12.50.",
    "I unlock the repo with git-crypt.",
    "I unlock the vault with the YubiKey-5C.",
    "Sin embargo, no es verdad.",
    "Das Passwort im Büro ist abgelaufen.",
    "the verification code expires in 10 minutes; enter the code you received",
    "the error code is 404 and the status is failed",
    "pin numpy to 1.26, I pinned torch to 2.13.0 yesterday",
    "log in to the dashboard, then click settings",
    "log in to staging.example.com:8443 and check the account page",
    "credentials: see the vault entry db/prod",
    "Passport photos are 35x45 mm; the ssn column is encrypted at rest",
    "the answer is 42 and the key is to keep functions small",
    "Our account manager is Dana",
    "dates 2024-01-15 and 2023-12-31, ISBN 978-3-16-148410-0, item 123-45-678",
    "the user is admin and the role is owner",
    "This passes all tests: 123 passed, 2 failed",
    "phrase it differently: be concise",
    "The combination of both approaches is better",
    # a sentence's end is not part of the word before it
    "The login fails even though I'm sure my password is correct.",
    "it keeps telling me the password is wrong!",
    # the passive says what happens to a password, not what it is
    "the password is used for the VPN and the mail server",
    "Our root password is typed by hand on every deploy",
    "the password is left blank on purpose in the test fixture",
    "my password is synced between the laptop and the phone",
    "the admin password was stolen last spring",
    "The wifi password is made of four dictionary words",
    "the staging password is kept in the team vault",
    # a question about a credential names none
    "What is the passphrase for the vault?",
    "what is the passphrase format",
    "Which is the password field on this form?",
    # sentences about passwords on public pages (not written here) that read as a value after "is"
    "Sharing your Wi-Fi password is like handing someone a master key to your house.",
    "Protecting the main password is even more important.",
    "So, when you give out your Wi-Fi password it's likely you're giving someone the keys to the kingdom.",
]


@pytest.mark.parametrize("adverb", ["really", "probably", "likely", "usually", "even"])
def test_an_adverb_before_the_value_is_not_the_value(adverb: str) -> None:
    _gone(f"my password is {adverb} {{}}", word())


@pytest.mark.parametrize("text", BENIGN)
def test_a_mention_of_a_credential_without_one_is_left_alone(text: str) -> None:
    assert R.redact(text) == text


@pytest.mark.parametrize(
    "noun",
    [
        "password",
        "passwort",
        "mot de passe",
        "contraseña",
        "senha",
        "pw",
        "wifi key",
        "passphrase",
        "seed phrase",
        "frase secreta",
        "pin",
        "door code",
        "alarm disarm code",
        "código de acceso",
        "ssn",
        "social security number",
        "passport number",
        "número de pasaporte",
        "cpf",
        "steuer-id",
        "aadhaar",
        "密码",
        "身份证号",
        "パスワード",
        "비밀번호",
        "пароль",
        "wachtwoord",
        "parola d'ordine",
        "palavra-passe",
        "iban",
        "account number",
        "numéro de compte",
        "número de cuenta",
        "card number",
        "numero della carta",
        "codice",
        "пин-код",
        "ключ",
        "chiavi",
        "clé",
        "sleutel",
        "schlüssel",
        "unlock",
        "hasło",
        "şifre",
        "lösenord",
        "kata sandi",
        "mật khẩu",
        "كلمة المرور",
        "הסיסמה",
        "암호",
        "cyfrinair",
        "nghyfrinair",
    ],
)
def test_every_credential_noun_wakes_the_scan(noun: str) -> None:
    """The scan only runs where one of its anchors occurs (the redactor's literal pre-scan): each noun holds one."""
    low = credentials.lower(noun)
    assert any(a in low for a in credentials.LITERALS), noun


def test_the_home_has_one_redactor_built_in_one_place(tmp_path) -> None:
    from metaclaw_plugin import MetaClawPlugin

    s = Settings(home=tmp_path, privacy={"extra_patterns": [r"ACME-[0-9]{6}"]})
    p = MetaClawPlugin(s)
    assert p.redactor is redactor_for(s.privacy) is p.store.redactor is p.ids.redactor
    assert redactor_for(PrivacySettings()) is redactor_for(PrivacySettings())
    assert redactor_for(PrivacySettings()) is not p.redactor  # other settings, another redactor
    assert disk_redactor(PrivacySettings(redact=False)) is None


def test_screening_reads_the_homes_own_patterns(tmp_path) -> None:
    """Approving a skill screens it with the home's redactor (its extra patterns), not a default one."""
    from metaclaw_plugin.learning.approval import ApprovalRefused, approve
    from metaclaw_plugin.skillbank.files import SkillStore
    from metaclaw_plugin.types import Skill

    s = Settings(home=tmp_path, privacy={"extra_patterns": [r"ACME-[0-9]{6}"]})
    store = SkillStore(s.skills_path)
    store.ensure()
    skill = Skill(name="deploy-notes", description="How to deploy.", body="Deploy with badge ACME-123456.")
    store.add_batch([replace(skill, status="quarantined")], actor="test")
    with pytest.raises(ApprovalRefused):
        approve(store, "deploy-notes", max_body_chars=4000, actor="t", reason="t", redactor=redactor_for(s.privacy))
    assert (
        approve(
            store, "deploy-notes", max_body_chars=4000, actor="t", reason="t", redactor=redactor_for(PrivacySettings())
        ).status
        == "active"
    )


def _group() -> str:
    """A recovery code's group: four letters and digits, two of them digits at least."""
    chars = [RNG.choice(string.ascii_lowercase + string.digits) for _ in range(2)] + [RNG.choice(string.digits)] * 2
    RNG.shuffle(chars)
    return "".join(chars)


# More of issue 41's edges, by class (each fails on the code before its fix).


@pytest.mark.parametrize(
    "form",
    [
        "her password? it's {}",
        "What's the guest wifi password? It is {}",
        "The passphrase? Oh, that's '{}'",
        "the code for the front door? it's {}",
        "Need the admin password? Here it is: {}",
        "dad's password?? I think it's {}",
        "what is the wifi password? A: {}",
        "the PIN? {}",
    ],
)
def test_the_value_after_a_question_and_a_pronoun(form: str) -> None:
    _gone(form, digits(4) if "code" in form or "PIN" in form else shaped() if "Passphrase" in form else word())


@pytest.mark.parametrize(
    "form",
    [
        "security answer: {}",
        "the answer to my security question is {}",
        "The answer for the security question about my first school is {}",
        "security question answer - {}",
        "Security Q: name of first pet; A: {}",
        "security question: city of birth. Answer: {}",
    ],
)
def test_the_answer_to_a_security_question(form: str) -> None:
    _gone(form, word().title())


@pytest.mark.parametrize(
    "form",
    [
        "visa 4012 8888 8888 1881 exp 03/26 cvv {}",
        "CVC: {}",
        "my card's cvv2 is {}",
        "Amex 3782 822463 10005 CID {}",
        "the 3-digit code on the back is {}",
        "the code on the back of my card is {}",
    ],
)
def test_a_cards_three_digit_security_code(form: str) -> None:
    _gone(form, digits(3))


@pytest.mark.parametrize(
    "form",
    [
        "recovery codes: {} {} {}",
        "backup codes: {}, {}, {}",
        "my 2FA recovery codes are {} and {} and {}",
        "Recovery codes:\n{}\n{}\n{}\n",
        "backup codes:\n- {}\n- {}\n- {}",
        "2fa backup codes - {} {} {}",
    ],
)
def test_a_list_of_recovery_codes_is_redacted_whole(form: str) -> None:
    _gone(form, *(f"{_group()}-{_group()}" for _ in range(3)))


@pytest.mark.parametrize(
    "form",
    [
        "parola mea este {}",
        "parola: {}",
        "şifrem: {}",
        "wifi şifresi {}",
        "moje hasło to {}",
        "hasło do wifi: {}",
        "mitt lösenord är {}",
        "passordet er {}",
        "salasana on {}",
        "moje heslo je {}",
        "jelszó: {}",
        "kata sandi saya adalah {}",
        "mật khẩu của tôi là {}",
        "मेरा पासवर्ड है {}",
        "كلمة السر هي {}",
        "كلمة المرور: {}",
        "הסיסמה היא {}",
        "รหัสผ่าน: {}",
        "ο κωδικός μου είναι {}",
        "내 암호는 {}",
        "我的密碼是 {}",
        "moja lozinka je {}",
        "mano slaptažodis yra {}",
        "моята парола е {}",
        "lykilorðið mitt er {}",
        "la meva contrasenya és {}",
        "fy nghyfrinair yw {}",
        "nenosiri ni {}",
        "mijn wachtwoord luidt {}",
        "Parola contului este {}",
        "kata sandi akun saya adalah {}",
        "كلمة المرور الخاصة بي هي {}",
    ],
)
def test_a_password_noun_in_more_languages(form: str) -> None:
    _gone(form, shaped())


# PIN as the languages that borrowed it write it, with their copulas, prepositions and possessives
@pytest.mark.parametrize(
    "form",
    [
        "PIN k telefonu je {}",
        "PIN do telefonu to {}",
        "min pinkod är {}",
        "PIN-koden min er {}",
        "PIN-koodi on {}",
        "a PIN-kódom {}",
        "PIN-ul cardului este {}",
        "PIN kodum {}",
        "ПИН кодът е {}",
        "мій PIN-код {}",
        "我的PIN码是 {}",
        "PINコードは {} です",
        "PIN 번호는 {}",
        "الرقم السري هو {}",
        "एटीएम पिन {} है",
        "PIN saya {}",
        "mã PIN của tôi là {}",
    ],
)
def test_a_pin_in_more_languages(form: str) -> None:
    _gone(form, digits(4))


# The lead's probe of the third round, as classes: a noun with its preposition in a language the scan did not read, a
# secret noun with a long modifier, "p/w", a login pair after a URL, a CJK noun right after a Latin word
@pytest.mark.parametrize(
    "form",
    [
        "Heslo k počítači je {}",
        "adgangskoden til routeren er {}",
        "salasana wifiin on {}",
        "password email saya adalah {}",
        "the shared secret that the gateway and the billing worker read at boot is {}",
        "my p/w is {}",
        "log in at https://admin.example.net: root / {}",
        "WiFi密码是 {}",
        "كلمة مرور البريد هي {}",
    ],
)
def test_a_password_behind_a_preposition_a_modifier_or_a_url(form: str) -> None:
    _gone(form, shaped())


@pytest.mark.parametrize(
    "text",
    [
        "the passphrase we use is long and random",
        "the passphrase they picked is easy to remember",
        "the shared secret between them is trust",
        "parool on vale",
        "geslo je prekratko",
        "slaptažodis yra neteisingas",
        "adgangskoden til routeren er den samme",
        "le parole: ciao, grazie",
        "PIN kód má 4 číslice",
        "ping 8.8.8.8 to test",
        "Is it safe to run 1234 jobs at once?",
        "safe: 2024-05-01 is the release date",
        "keypad - 3 rows of keys",
        "la combinación de colores es azul y verde",
    ],
)
def test_a_description_in_those_forms_is_not_a_value(text: str) -> None:
    assert R.redact(text) == text


@pytest.mark.parametrize(
    "form", ["我的密码是 {}!", "my password is {}!", "wifi pw: {}!!", "パスワードは {}? です", "мой пароль: {}!"]
)
def test_the_punctuation_a_password_ends_with_goes_with_it(form: str) -> None:
    value = shaped().title()
    out = R.redact(form.format(value))
    assert value not in out and "]!" not in out and "]?" not in out, out


@pytest.mark.parametrize("form", ["my pa$$word is {}", "my passw0rd is {}", "my p@ssword is {}", "my pa55word is {}"])
def test_a_password_noun_written_with_digits_or_signs(form: str) -> None:
    _gone(form, word())


@pytest.mark.parametrize(
    "form", ["my password used to be {}, now it's {}", "the passwords are {} and {}", "wachtwoorden: {} en {}"]
)
def test_both_values_of_a_password_that_changed_or_of_two(form: str) -> None:
    _gone(form, shaped(), shaped())


@pytest.mark.parametrize(
    "form", ["the secret we settled on is '{}'", "the secret I told you is {}", "the secret code is 4{}"]
)
def test_a_secret_that_is_no_word(form: str) -> None:
    """ "Secret" alone names a credential only when its value is no word ("the secret to bread is patience" stays)."""
    _gone(form, digits(3) if "code" in form else shaped())


@pytest.mark.parametrize(
    "text",
    [
        "the secret to a good sourdough is patience",
        "the answer to the security question is case-insensitive",
        "set PASSWORD_MIN_LENGTH to 14",
        "change TOKEN_TTL_SECONDS to 900",
        "set SECRET_SCANNING_ENABLED to false",
        "set SSH_KEY to ~/.ssh/id_ed25519",
        "Password? Reset it.",
        "the **password** is **required**",
        "**Password**: see the vault",
        "export SMTP_PASS='...'",
        "secret: auth_key: ...",
        'VERSION_KEY = "version"',
        r"senhas?|wachtwoord(?:en)?",
        "password? it's somewhere in my notes",
        "Password? It's stored in the vault.",
        "your PIN? it's the one you set at the branch",
        "the code review? it's on Friday",
        "generate new backup codes from the settings page",
        "the CVV field must accept 3 or 4 digits",
        "hasło jest nieprawidłowe",
        "lösenordet är fel",
        "mật khẩu là bắt buộc",
        "parola este greșită",
        "heslo je příliš krátké",
        "kata sandi salah, coba lagi",
        "Passwort vergessen? Das Passwort ist falsch",
        "it keeps telling me the password is wrong!",
        "Reset your password at the login page if it expired.",
    ],
)
def test_look_alikes_of_these_forms_are_left_alone(text: str) -> None:
    assert R.redact(text) == text


def test_a_word_of_another_alphabet_keeps_its_letters_when_a_value_beside_it_goes() -> None:
    """Only a noun disguised with look-alikes is read folded: a Polish or Turkish word keeps its own letters."""
    value = shaped()
    assert R.redact(f"moje hasło to {value}, dziękuję") == "moje hasło to [REDACTED:password], dziękuję"
    assert fold_mixed("pаsswоrd łódź", lambda word, folded: "pass" in folded) == "password łódź"


@pytest.mark.parametrize(
    "form",
    [
        "To unlock my phone you type {} twice.",  # the lock first, then what is keyed in
        "to unlock the tablet just enter {}",
        "When the kiosk asks, enter {} and it lets you in.",  # what is keyed in, then that it opens
        "type {} to get in",
        "Garage door opener code: {}",  # a device that opens, named before "code"
        "the gym locker pin is {}",
    ],
)
def test_a_code_keyed_in_to_open_something_is_redacted(form: str) -> None:
    _gone(form, digits(5))


@pytest.mark.parametrize(
    "form",
    [
        "Hulu: bob.k / {}",  # a service, then a login pair with no word for it
        "Netflix - me@mail.example / {}",
        "I use the same pw everywhere: {}",  # an adverb between the noun and its colon
    ],
)
def test_a_login_pair_or_a_password_with_no_word_beside_its_value(form: str) -> None:
    _gone(form, RNG.choice(WORDS).title() + "!" + RNG.choice(WORDS).title() + digits(1))


@pytest.mark.parametrize(
    "text",
    [
        "Stack: React / Node18",
        "Versions: v1.2 / v2.0-beta",
        "Compare: pandas / PyArrow14",
        "Branches: main / Release-2024!",
        "Ratio: 3 / 4",
        "Type 5 and it opens the menu",
        "Enter your email and it lets you in",
        "Enter 2 to open the settings",
        "Type npm install to get in the habit",
        "The garage door opener stopped working again.",
    ],
)
def test_look_alikes_of_pairs_and_keyed_codes_are_left_alone(text: str) -> None:
    assert R.redact(text) == text


@pytest.mark.parametrize(
    "form",
    [
        "Type {} when the laptop asks for the password.",  # keyed in where a prompt asks for it
        "when it asks for the code just enter {}",
        "I reuse {} for most sites, which I know is bad.",  # no noun at all: the habit says it
    ],
)
def test_a_value_keyed_in_where_a_prompt_asks_for_it_is_redacted(form: str) -> None:
    _gone(form, RNG.choice(WORDS).title() + digits(2) + "!")


@pytest.mark.parametrize(
    "form",
    [
        "To get into the shed, punch in {} on the keypad.",
        "Key in {} on the panel by the back door.",
        "The storage unit code is {} and the gate code is 1122.",  # what a code opens, said before "code"
        "Zoom host key is {}.",
    ],
)
def test_digits_keyed_into_a_lock_or_a_meeting_are_redacted(form: str) -> None:
    _gone(form, digits(5))


@pytest.mark.parametrize(
    "text",
    [
        "Enter 2024 in the year field.",
        "Type 1000 into the calculator.",
        "Use Python3 for all scripts.",
        "I reuse the same template for most sites.",
        "Reuse SharedUtils_v2 for most services.",
        "When the form asks for the code, enter the one from the email.",
        "To get into the building, enter through the side door.",
        "Zoom host is Maria for the weekly sync.",
    ],
)
def test_look_alikes_of_keyed_values_are_left_alone(text: str) -> None:
    assert R.redact(text) == text
