"""Credentials stated in prose that slipped past redaction (the lead's probe of issue 41's edges), as classes, and
look-alikes that must come through unchanged. Written before the fixes, by class, none of it the probe's own text.

``SECRETS``: a class, the text, the values that must not survive (a value is "leaked" when any of them, or a
trailing character of it, is still in the output). ``BENIGN``: a class and a text that ``redact`` must return as it
is. ``split(text)`` puts each case in ``tuning`` or ``heldout`` by a hash of its text, so no one picks which half a
case lands in; fixes are made looking at the tuning half only, and the held-out half is reported, not read.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Secret:
    cls: str
    text: str
    values: tuple[str, ...]

    @property
    def split(self) -> str:
        return split(self.text)


@dataclass(frozen=True)
class Benign:
    cls: str
    text: str

    @property
    def split(self) -> str:
        return split(self.text)


def split(text: str) -> str:
    return "heldout" if zlib.crc32(text.encode()) % 2 else "tuning"


def _s(cls: str, text: str, *values: str) -> Secret:
    return Secret(cls, text, values)


SECRETS = [
    # a relative clause or an aside between the noun and its copula
    _s("aside", "The passphrase that we picked last week is 'orange-kite-77'", "orange-kite-77"),
    _s("aside", "the password I use for the NAS is marmalade19", "marmalade19"),
    _s("aside", "the Wi-Fi password (guest network) is latte4everyone", "latte4everyone"),
    _s("aside", "The admin password, the one on the sticky note, is Tangerine#88", "Tangerine#88"),
    _s("aside", "my email password, which I never change, is bluebird2019", "bluebird2019"),
    _s("aside", "the shared key we settled on is 'copper-moth-19'", "copper-moth-19"),
    _s("aside", "the VPN password that IT gave me is Wombat!2024", "Wombat!2024"),
    _s("aside", "the PIN that opens the side gate is 7291", "7291"),
    _s("aside", "the router's password (printed on the back) is xk7-plum-3", "xk7-plum-3"),
    _s("aside", "The database password that the app reads at startup was Cedar_Lake_55", "Cedar_Lake_55"),
    _s("aside", "our team's shared secret, as agreed in the meeting, is 'violet-harbor-8'", "violet-harbor-8"),
    _s("aside", "le mot de passe qu'on a choisi est framboise22", "framboise22"),
    _s("aside", "la contraseña que me diste es girasol2020", "girasol2020"),
    _s("aside", "the Netflix password my sister uses is popcornNight", "popcornNight"),
    _s("aside", "the password we all share for the printer is lemoncurd", "lemoncurd"),
    _s("aside", "the shared secret between the two services is 'quiet-otter-51'", "quiet-otter-51"),
    # a question, then the value after a pronoun
    _s("question", "his password? it's 'riverstone5'", "riverstone5"),
    _s("question", "What's the wifi password? It is mangoTree88", "mangoTree88"),
    _s("question", "the code for the garage? it's 4417", "4417"),
    _s("question", "Password? Sure, it's seashell42", "seashell42"),
    _s("question", "the passphrase? oh, that's 'purple monkey dishwasher'", "purple monkey dishwasher"),
    _s("question", "your PIN? it was 0852", "0852"),
    _s("question", "Need the admin password? Here it is: Gl@cier77", "Gl@cier77"),
    _s("question", "wifi password?? it's cafe-au-lait", "cafe-au-lait"),
    _s("question", "mom's password? I think it's gardenia", "gardenia"),
    # an environment variable named for a secret, given its value with "to" or "="
    _s("env", "set SMTP_PASSWORD to Yellow!Kite9 before starting", "Yellow!Kite9"),
    _s("env", "change API_SECRET to hollyhock55 in the .env file", "hollyhock55"),
    _s("env", "I set MYSQL_ROOT_PASSWORD to toffee in compose", "toffee"),
    _s("env", "set the env var DB_PASS to 'chestnut 99'", "chestnut 99"),
    _s("env", "ADMIN_PASSWORD should be set to sparrow2023 on prod", "sparrow2023"),
    _s("env", "PGPASSWORD is now lantern31", "lantern31"),
    _s("env", "then set REDIS_AUTH_TOKEN to pebble-beach-4 and restart", "pebble-beach-4"),
    _s("env", "update WIFI_PSK to harbourlights", "harbourlights"),
    # security questions and their answers
    _s("answer", "security answer: Rover", "Rover"),
    _s("answer", "the answer to my security question is Springfield", "Springfield"),
    _s("answer", "Security question: first pet's name. Answer: Biscuit", "Biscuit"),
    _s("answer", "mother's maiden name: Kowalski", "Kowalski"),
    _s("answer", "my secret answer is 'blue Toyota'", "blue Toyota"),
    _s("answer", "security question answer - Hillcrest Elementary", "Hillcrest"),
    _s("answer", "The answer for the security question about my first car is Corolla", "Corolla"),
    _s("answer", "security Q: favourite teacher; A: Mrs Patel", "Patel"),
    # card security codes beside a card
    _s("cvv", "visa 4012 8888 8888 1881, exp 03/26, CVV 871", "871"),
    _s("cvv", "card 5555 5555 5555 4444, expiry 11/28, security code 442", "442"),
    _s("cvv", "CVC: 319", "319"),
    _s("cvv", "the 3-digit code on the back is 618", "618"),
    _s("cvv", "Amex 3782 822463 10005 exp 0529 CID 4410", "4410"),
    _s("cvv", "4242 4242 4242 4242 exp 09/27 cvc 007", "007"),
    _s("cvv", "my debit card's cvv2 is 905", "905"),
    # lists of recovery or backup codes
    _s("codes", "backup codes: 4k9d-2m7x 8p3q-6r1t 5w2e-9y4u", "4k9d-2m7x", "8p3q-6r1t", "5w2e-9y4u"),
    _s("codes", "my 2FA recovery codes are 83920174, 29384756, 10293847", "83920174", "29384756", "10293847"),
    _s("codes", "GitHub recovery codes: a1b2c-d3e4f, g5h6i-j7k8l", "a1b2c-d3e4f", "g5h6i-j7k8l"),
    _s("codes", "the backup codes are x7kq-p2mv and r9tz-w3hd", "x7kq-p2mv", "r9tz-w3hd"),
    _s("codes", "Recovery codes:\n7h3k9-2m4p8\n9d2f7-1q8w3\n", "7h3k9-2m4p8", "9d2f7-1q8w3"),
    _s("codes", "2fa backup codes - 3f8k2m 9d7h4j 6s2p1q", "3f8k2m", "9d7h4j", "6s2p1q"),
    # a password word in a language the scan did not read
    _s("lang", "parola mea este ciocolata7", "ciocolata7"),
    _s("lang", "şifrem: kelebek99", "kelebek99"),
    _s("lang", "wifi şifresi portakal12", "portakal12"),
    _s("lang", "parola: denizkizi20", "denizkizi20"),
    _s("lang", "moje hasło to malina123", "malina123"),
    _s("lang", "hasło do wifi: jagoda77", "jagoda77"),
    _s("lang", "het wachtwoord van de wifi is fietsbel8", "fietsbel8"),
    _s("lang", "mitt lösenord är kanelbulle5", "kanelbulle5"),
    _s("lang", "kata sandi saya adalah mangga88", "mangga88"),
    _s("lang", "kata sandinya: durian77", "durian77"),
    _s("lang", "mật khẩu của tôi là hoasen99", "hoasen99"),
    _s("lang", "मेरा पासवर्ड है chai2023", "chai2023"),
    _s("lang", "पासवर्ड: lassi88", "lassi88"),
    _s("lang", "كلمة السر هي zaytoun55", "zaytoun55"),
    _s("lang", "كلمة المرور: qamar2021", "qamar2021"),
    _s("lang", "와이파이 비밀번호는 kimchi2024 입니다", "kimchi2024"),
    _s("lang", "moje heslo je jablko42", "jablko42"),
    _s("lang", "salasana on mustikka9", "mustikka9"),
    _s("lang", "jelszó: pogacsa11", "pogacsa11"),
    _s("lang", "我的密碼是 taipei101x", "taipei101x"),
    _s("lang", "הסיסמה היא shalom2020", "shalom2020"),
    _s("lang", "รหัสผ่าน: tomyum88", "tomyum88"),
    _s("lang", "رمز عبور من gol2022 است", "gol2022"),
    _s("lang", "ο κωδικός μου είναι feta2024", "feta2024"),
    # the punctuation a password ends with
    _s("tail", "密码是 Lotus88!", "Lotus88!"),
    _s("tail", "my password is Sunny2024!", "Sunny2024!"),
    _s("tail", "wifi pw: Kiwi!!", "Kiwi!!"),
    _s("tail", "パスワードは Sakura77? です", "Sakura77?"),
    _s("tail", "the new password is Blue$Moon#", "Blue$Moon#"),
    _s("tail", "мой пароль: Medved2020!", "Medved2020!"),
    # other forms: disguised nouns, spoken forms, the value before the noun
    _s("other", "my pa$$word is lemonade7", "lemonade7"),
    _s("other", "my passw0rd is ferncliff", "ferncliff"),
    _s("other", "my p/w is jellybean3", "jellybean3"),
    _s("other", "the pwd for the box -> tulip-moon-6", "tulip-moon-6"),
    _s("other", "my password used to be oldtown1, now it's newtown2", "newtown2"),
    _s("other", "I typed kiwi-river-9 as my password", "kiwi-river-9"),
    _s("other", "the wifi pass is skylark77", "skylark77"),
    _s("other", "safe combination: 12-34-56", "12-34-56"),
]


def _b(cls: str, text: str) -> Benign:
    return Benign(cls, text)


BENIGN = [
    # talk about credentials without one
    _b("talk", "the password policy requires 12 characters"),
    _b("talk", "reset your password at the login page"),
    _b("talk", "the password field is required"),
    _b("talk", "my password expired again"),
    _b("talk", "the password manager stores everything"),
    _b("talk", "use the password reset flow if you get locked out"),
    _b("talk", "the password that you chose is too short"),
    _b("talk", "the password I used before was rejected"),
    _b("talk", "the password, as the docs say, is never logged"),
    _b("talk", "Password? It's stored in the vault."),
    _b("talk", "the wifi password? it's on the fridge"),
    _b("talk", "your PIN? it's the one you set at the branch"),
    _b("talk", "the PIN you chose is too short"),
    _b("talk", "my PIN is four digits long"),
    _b("talk", "the passphrase we use is long and random"),
    # secret, key, code and answer in their other senses
    _b("sense", "the key insight is that caching dominates"),
    _b("sense", "the key to success is consistency"),
    _b("sense", "the key question is whether it scales"),
    _b("sense", "the secret to a good sourdough is patience"),
    _b("sense", "the secret we kept from the kids is that the dog is staying"),
    _b("sense", "the code for this feature is in src/parser.py"),
    _b("sense", "the code is clean and well tested"),
    _b("sense", "the answer is 42"),
    _b("sense", "the answer to your question is yes"),
    _b("sense", "the code review? it's on Friday"),
    _b("sense", "the pin on the map marks the office"),
    # security questions, card codes and recovery codes without a value
    _b("form", "the security question feature is optional"),
    _b("form", "answer the security question to continue"),
    _b("form", "the answer to the security question is case-insensitive"),
    _b("form", "the CVV field must accept 3 or 4 digits"),
    _b("form", "what is a CVV? It's the code on the back of the card"),
    _b("form", "recovery codes are shown once; store them safely"),
    _b("form", "generate new backup codes from the settings page"),
    _b("form", "card ending in 4242 expires 12/27"),
    _b("form", "the mother's maiden name question was removed from the form"),
    # environment variables and settings that hold no secret
    _b("env", "set LOG_LEVEL to debug"),
    _b("env", "set MAX_RETRIES to 5 in the env"),
    _b("env", "set PASSWORD_MIN_LENGTH to 14"),
    _b("env", "set PASSWORD_RESET_TIMEOUT to 3600"),
    _b("env", "set DEBUG to true and restart"),
    _b("env", "set DB_HOST to localhost"),
    _b("env", "change TOKEN_TTL_SECONDS to 900"),
    _b("env", "set AUTH_PROVIDER to keycloak"),
    _b("env", "set SECRET_SCANNING_ENABLED to false"),
    # code identifiers, prices, dates, versions, order numbers
    _b("ident", "call validate_password() before saving the user"),
    _b("ident", "the `password_reset` view sends the email"),
    _b("ident", "the passwordHash column is indexed"),
    _b("ident", "the order number is 4111-2093"),
    _b("ident", "the price is $12.99 plus tax"),
    _b("ident", "version 2.4.1 was released on 12/05/2026"),
    _b("ident", "the invoice total is 1,299.00 EUR, order #88213"),
    _b("ident", "flight UA 921 departs at 14:05"),
    _b("ident", "call me at ext. 4471 after lunch"),
    _b("ident", "tracking code: 1Z999AA10123456784"),
    # the new languages, saying something about a password
    _b("lang", "hasło musi mieć co najmniej 8 znaków"),
    _b("lang", "şifre en az 8 karakter olmalı"),
    _b("lang", "parola trebuie să aibă 10 caractere"),
    _b("lang", "lösenordet måste vara minst 8 tecken"),
    _b("lang", "kata sandi harus minimal 8 karakter"),
    _b("lang", "mật khẩu phải có ít nhất 8 ký tự"),
    _b("lang", "पासवर्ड कम से कम 8 अक्षर का होना चाहिए"),
    _b("lang", "كلمة المرور يجب أن تكون 8 أحرف على الأقل"),
    _b("lang", "비밀번호를 잊으셨나요?"),
    _b("lang", "wachtwoord vergeten? klik hier"),
    _b("lang", "kata sandi salah, coba lagi"),
    _b("lang", "şifreyi unuttum"),
    _b("lang", "hasło jest nieprawidłowe"),
    _b("lang", "lösenordet är fel"),
    _b("lang", "mật khẩu là bắt buộc"),
    _b("lang", "parola este greșită"),
    _b("lang", "heslo je příliš krátké"),
    _b("lang", "पासवर्ड गलत है"),
]


def leaked(case: Secret, out: str) -> bool:
    """Whether any value of ``case`` (or its last character, where that is punctuation) survived in ``out``."""
    for v in case.values:
        if v in out:
            return True
        if not v[-1].isalnum() and f"]{v[-1]}" in out:
            return True  # "[REDACTED:password]!": the value's own last character left behind
    return False
