"""Credentials stated in prose at the edges the lead's probe found leaking (issue 41): by class, each form with values
drawn from a seeded RNG, so no test depends on one spelling; and the corpus of tests/support/prose_leak_corpus.py,
its tuning half held to no leak and no false redaction, its held-out half to the figures it was measured at."""

from __future__ import annotations

import random
import string

import pytest
from prose_leak_corpus import BENIGN, SECRETS, leaked

from metaclaw_plugin.lookalikes import fold_mixed
from metaclaw_plugin.privacy import Redactor

RNG = random.Random(4141)
WORDS = ["sunflower", "bluebird", "marigold", "pinecone", "lighthouse", "tangerine", "nebula", "otter", "juniper"]
R = Redactor()


def word() -> str:
    return RNG.choice(WORDS)


def shaped() -> str:
    return RNG.choice(WORDS) + "".join(RNG.choice(string.digits) for _ in range(2))


def digits(n: int) -> str:
    return "".join(RNG.choice(string.digits) for _ in range(n))


def group() -> str:
    """A recovery code group: letters and digits, two of them at least digits."""
    chars = [RNG.choice(string.ascii_lowercase + string.digits) for _ in range(2)] + [RNG.choice(string.digits)] * 2
    RNG.shuffle(chars)
    return "".join(chars)


def _gone(template: str, *values: str) -> None:
    text = template.format(*values)
    out = R.redact(text)
    for v in values:
        assert v not in out, (text, out)
    assert "[REDACTED:" in out, (text, out)


@pytest.mark.parametrize(
    "form",
    [
        "the password we chose together is {}",
        "The VPN password that the helpdesk sent me was {}",
        "the router password (the one on the label) is {}",
        "my email password, as you know, is {}",
        "the password — the one for the shared drive — is {}",
        "the alarm PIN that the installer set is 4{}",
        "la contraseña que usamos en casa es {}",
        "le mot de passe qu'il m'a donné est {}",
        "the Spotify password my brother uses is {}",
    ],
)
@pytest.mark.parametrize("value", ["word", "shaped"])
def test_a_clause_or_an_aside_between_the_noun_and_its_copula(form: str, value: str) -> None:
    _gone(form, digits(4) if "PIN" in form else word() if value == "word" else shaped())


@pytest.mark.parametrize(
    "form",
    [
        "her password? it's {}",
        "What's the guest wifi password? It is {}",
        "The passphrase? Oh, that's '{}'",
        "the code for the front door? it's {}",
        "Need the admin password? Here it is: {}",
        "dad's password?? I think it's {}",
    ],
)
def test_the_value_after_a_question_and_a_pronoun(form: str) -> None:
    _gone(form, digits(4) if "code" in form else shaped() if "Passphrase" in form else word())


@pytest.mark.parametrize(
    "form",
    [
        "set SMTP_PASSWORD to {} before you start",
        "change JWT_SECRET to {} in the .env file",
        "I set POSTGRES_PASSWORD to {} in compose",
        "PGPASSWORD is now {}",
        "update WIFI_PSK to {}",
        "then set SLACK_BOT_TOKEN to {} and restart",
        "ADMIN_PWD should be set to {} on staging",
    ],
)
@pytest.mark.parametrize("value", ["word", "shaped"])
def test_an_environment_variable_named_for_a_secret_given_a_value(form: str, value: str) -> None:
    _gone(form, word() if value == "word" else shaped())


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
    _gone(form, *(f"{group()}-{group()}" for _ in range(3)))


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
    ],
)
def test_a_password_noun_in_more_languages(form: str) -> None:
    _gone(form, shaped())


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


def test_both_values_of_a_password_that_changed() -> None:
    _gone("my password used to be {}, now it's {}", shaped(), shaped())


@pytest.mark.parametrize(
    "text",
    [
        "the secret to a good sourdough is patience",
        "the answer to the security question is case-insensitive",
        "set PASSWORD_MIN_LENGTH to 14",
        "change TOKEN_TTL_SECONDS to 900",
        "set SECRET_SCANNING_ENABLED to false",
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


def test_the_corpus_is_large_enough_and_split() -> None:
    assert len(SECRETS) >= 60 and len(BENIGN) >= 60
    for cases in (SECRETS, BENIGN):
        halves = {c.split for c in cases}
        assert halves == {"tuning", "heldout"}


def test_the_tuning_half_neither_leaks_nor_redacts_a_look_alike() -> None:
    leaks = [c.text for c in SECRETS if c.split == "tuning" and leaked(c, R.redact(c.text))]
    false = [b.text for b in BENIGN if b.split == "tuning" and R.redact(b.text) != b.text]
    assert not leaks and not false, (leaks, false)


def test_the_held_out_half_stays_at_its_measured_figures() -> None:
    """Measured once after the fixes, never tuned on (docs/boundaries.md has the figures): no worse from here."""
    leaks = sum(leaked(c, R.redact(c.text)) for c in SECRETS if c.split == "heldout")
    false = sum(R.redact(b.text) != b.text for b in BENIGN if b.split == "heldout")
    assert leaks <= 3 and false <= 1, (leaks, false)
