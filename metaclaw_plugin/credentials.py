"""Credentials stated in prose: the value a sentence gives to a credential word.

The redactor's patterns find secrets by their shape (a provider's prefix, an assignment, a random-looking run). A
person states a credential in words, and its value may look like any word: "my password is swordfish", "I set the
wifi password to sunflower88", "the passphrase is correct horse battery staple", "log in with alice / Tr0ub4dor",
"my SSN is 078-05-1120", "the door code is 4821", "mon mot de passe est soleil", "我的密码是 woaini". Here the
*words* decide: a credential noun, a connector (a copula, a sign, "set to"), then the value, in the languages the
memory extractor reads (English, French, Spanish, Portuguese, Chinese) and German, Italian, Japanese, Korean and
Russian. What kind of value follows depends on the noun:

* a password (one token, however plain: the statement says what it is);
* a phrase (passphrase, seed or recovery phrase: the rest of the clause);
* a code (PIN, door, unlock, 2FA code: digits, a few groups);
* a national id (SSN, passport, tax id, DNI, CPF, 身份证: groups holding digits), and a US SSN by its shape alone.

Mentions stay: "the password is required", "reset your password to regain access", "the password field is empty".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# The secret words an environment variable's name ends with ("set SMTP_PASSWORD to ...", "change API_SECRET to ...":
# see _env_values), looked for in the text's own case where their lower case woke the scan; "token" and "psk" wake
# only that scan.
ENV_WORDS = ("PASS", "PWD", "SECRET", "TOKEN", "KEY", "PSK", "PIN", "CRED")
ENV_ONLY = ("psk",)
# The password nouns of _LOCAL (a part of each: a literal that starts with a letter no other starts with makes every
# text's literal scan slower, so "asło" for hasło, "ifre" for şifre), tried only where one of them occurs. Those of
# other scripts are SCRIPT_LITERALS: the redactor looks for them apart, and only in a text that is not ASCII.
LOCAL_LITERALS = (
    "parola",
    "ifre",
    "asło",
    "aslo",
    "lösenord",
    "losenord",
    "passord",
    "adgangskode",
    "salasana",
    "eslo",
    "elsz",
    "sandi",
    "laluan",
    "mật khẩu",
    "mat khau",
    "密碼",
    "lozink",
    "geslo",
    "slaptažod",
    "slaptazod",
    "parool",
    "salasõna",
    "парола",
    "lykilor",
    "contrasenya",
    "contrasinal",
    "pasahitz",
    "frinair",
    "wagwoord",
    "fjalëkalim",
    "fjalekalim",
    "nenosiri",
    "kodeord",
    "parole",
    "pasfhocal",
    "zapork",
)
SCRIPT_LITERALS = (
    "κωδικ",
    "סיסמ",
    "رمز عبور",
    "كلمة السر",
    "كلمة المرور",
    "پاس ورڈ",
    "كلمة مرور",
    "كلمة سر",
    "سري",
    "पिन",
    "лозинк",
    "συνθηματικ",
    "패스워드",
    "گذرواژه",
    "पासवर्ड",
    "পাসওয়ার্ড",
    "கடவுச்சொல்",
    "รหัสผ่าน",
    "암호",
)
# The nouns of an API key or a token in the scripts and letters of other languages ("mój klucz API", "API-nyckeln",
# "токен доступа", "APIキー", "访问令牌", "API 키"): looked for like SCRIPT_LITERALS, waking only the keyword scan.
KEY_LITERALS = ("klíč", "kľúč", "nøgle", "токен", "トークン", "キー", "令牌", "密钥", "秘钥", "密鑰", "키", "토큰")
# What wakes the scan (substrings of the ASCII-lowered text): the redactor tests these before any regex runs. Each
# credential noun below holds one (tests/core/test_credentials.py checks a sample of every kind).
LITERALS = (
    "pass",
    "pwd",
    "pw",
    "pin",
    "code",
    "codigo",
    "código",
    "combination",
    "combina",
    "kombination",
    "digicode",
    "combo",
    "safe",
    "locker",
    "padlock",
    "keypad",
    "lockbox",
    "alarm",
    "phrase",
    "frase",
    "key",
    "login",
    "log in",
    "sign in",
    "logon",
    "cred",
    "account",
    "compte",
    "cuenta",
    "conta",
    "identifiant",
    "zugang",
    "anmelde",
    "contrase",
    "clave",
    "senha",
    "kennwort",
    "mdp",
    "geheimzahl",
    "ssn",
    "social",
    "sin",
    "national",
    "insurance",
    "tax",
    "tfn",
    "itin",
    "licen",
    "aadhaar",
    "dni",
    "nie",
    "nif",
    "cpf",
    "curp",
    "insee",
    "fiscal",
    "steuer",
    "ausweis",
    "sozialvers",
    "bsn",
    "pesel",
    "personnummer",
    "nhs",
    "medicare",
    "maiden",
    "answer",
    "pasaporte",
    "identidad",
    "identit",
    "numéro",
    "ni number",
    "nino",
    "пароль",
    "密码",
    "口令",
    "验证码",
    "身份证",
    "助记词",
    "账号",
    "帐号",
    "用户名",
    "パスワード",
    "暗証番号",
    "マイナンバー",
    "비밀번호",
    "주민등록번호",
    "wachtwoord",
    "d'ordine",
    "iban",
    "account number",
    "de compte",
    "de cuenta",
    "da conta",
    "carta",
    "chiav",
    "konto",
    "rekening",
    "conto",
    "card",
    "carte",
    "karte",
    "kaart",
    "tarjeta",
    "cartão",
    "cartao",
    "codice",
    "clé",
    "sleutel",
    "schlüssel",
    "schluessel",
    "unlock",
    "punch in",
    "open",
    "disarm",
    "verrouill",
    "desbloque",
    "entsperr",
    "sblocc",
    "ontgrendel",
    "пин",
    "код",
    "ключ",
    "security q",
    "pa$",
    "pswd",
    "psswd",
    "pwrd",
    "p/w",
    "pa5",
    "p@s",
    "p4s",
    *LOCAL_LITERALS,
    *SCRIPT_LITERALS,
    *KEY_LITERALS,
    *ENV_ONLY,
    "secret",
    # an API key or a token named in prose, in the Latin letters of other languages
    "token",
    "jeton",
    "klic",
    "klucz",
    "nyckel",
    "avain",
    "anahtar",
    "chave",
    "bearer",
    "authoriz",
    "auth header",
    # an environment variable named for a secret ("set SMTP_PASSWORD to ..."): looked for in the text's own case
    "-",
    # a login pair with no word for it ("Hulu: bob.k / Raspberry!Jam3")
    " / ",
    # what a prompt or a lock asks for, keyed in ("when it asks for the code just enter 5150", "... it lets you in")
    "asks",
    "prompts",
    "reuse",
    "re-use",
    "get in",
    "lets ",
    "let ",
)
# Literals that wake a scan of their own (ids by shape, pairs with no noun, values keyed in), never a rule's anchor
_SCAN_ONLY = frozenset(["-", " / ", "asks", "prompts", "reuse", "re-use", "get in", "lets ", "let "])
# Also looked for once a password noun is there: "user bob pass letmein" (too common to wake the scan alone).
_USER_ANCHORS = ("user", "utilisateur", "usuario", "usuário", "benutzer")
_PAIR_ONLY = frozenset(["account", "compte", "cuenta", "conta", "identifiant", "zugang", "anmelde"])
_PASSWORD_ANCHORS = frozenset(
    ["pass", "pwd", "pw", "p/w", "mdp", "contrase", "senha", "kennwort", "clave", "wachtwoord"]
)

_PASSWORD = (
    r"pass(?:word|wd|wort)s?|p[a@4][s$5][s$5]w[o0]rd|pass ?wo?rd|ps?swd|pwrd|secret (?:word|password)s?|"
    r"(?:shared|client|api|app|webhook|signing) secrets?|kennw[oö]rter|kennwort|pwd|(?<![\w@.])pw(?![\w.])|(?<![\w/])p/w(?![\w/])|mdp|mot(?:s)? de passe|"
    r"contrase(?:ñ|n)as?|senhas?|wachtwoord(?:en)?|palavras?-passe|(?:la )?clave(?= (?:de(?:l)? (?:wi-?fi|acceso|la red)|secreta))(?: de(?:l)? "
    r"(?:wi-?fi|acceso|la red)| secreta)?|parola d'ordine|пароль|密码|口令|パスワード|비밀번호|"
    r"(?:wi-?fi|wlan|wpa2?|wep|network|router|hotspot|license|licence|product|activation|registration) (?:key|code)"
)
# Password nouns of Romanian, Turkish, Polish, Swedish, Norwegian, Danish, Finnish, Czech, Hungarian, Indonesian and
# Malay, Vietnamese, Hindi, Arabic, Hebrew, Thai, Persian, Greek, Korean and traditional Chinese, with a possessive
# that follows the noun; their copulas are _LOCAL_COPULA's.
_LOCAL = (
    r"parola(?:m|n|s[ıi]|m[ıi]z|n[ıi]z)?(?: (?:mea|ta|sa|noastr[ăa]|voastr[ăa]|lui|ei))?|[şs]ifre(?:m|n|si|miz|niz)?|"
    r"has[łl][oa]|l[öo]senord(?:et)?(?: (?:mitt|vårt))?|passord(?:et)?(?: (?:mitt|min|vårt))?|adgangskode(?:n)?(?: (?:min|vores))?|salasana(?:ni|si|mme|nne)?|hesl[oa]|"
    r"jelsz[óo](?:m|t|d)?|jelszav(?:am|ad|a|unk|atok|uk|at)|kodeord(?:et)?|zapork[aeu]|(?:ph|bh)?pasfhocal|"
    r"parole(?=(?:[ \t]+[^\s.,;:!?]+)?[ \t]+ir(?![\w])|[ \t]*:)|лозинк[аеу]|συνθηματικ[όο]|패스워드|"
    r"كلمة (?:ال)?(?:سر|مرور)(?: (?:الخاصة|الخاص) بي)?|kata (?:sandi|laluan)(?:nya|ku|mu)?(?: (?:saya|anda|kamu|aku|kami|kita))?|"
    r"m[ậa]t kh[ẩa]u(?: (?:c[ủu]a )?(?:t[ôo]i|b[ạa]n|anh|em|ch[ịi]|m[ìi]nh|t[ớo]))?|पासवर्ड|"
    r"ה?סיסמ[הא](?: שלי)?|lozink[aeu](?: (?:mi|moja|je))?|gesl[oa]|"
    r"slapta[žz]od[iž]?[sš]?|parool|salas[õo]na|парола(?:та)?|lykilor[ðd](?:ið)?(?: (?:mitt|þitt))?|contrasenya|contrasinal|"
    r"pasahitza?|(?:c|g|ngh|ch)yfrinair|wagwoord|fjal[ëe]kalim(?:i)?(?: (?:im|yt))?|nenosiri|گذرواژه|পাসওয়ার্ড|கடவுச்சொல்|پاس ورڈ|รหัสผ่าน|رمز عبور(?: من)?|κωδικ[όο]ς(?: πρόσβασης)?(?: (?:μου|σου|μας))?|"
    r"암호|密碼"
)
# "Parola contului este X", "kata sandi akun saya adalah X": a word or two (whose account, which network), then a
# copula no other language shares
_LOCAL_AFTER_WORDS = re.compile(
    r"(?:[ \t]+[^\s.,;:!?=]+){1,2}[ \t]+(?:este|adalah|ialah|yaitu|l[àa]|[äa]r|jest|yra|është|είναι|है|هي|هو|היא|הוא|คือ|"
    r"és|yw)(?![\w])[ \t]*[:：]?[ \t]*"
)
_LOCAL_COPULAS = (
    r"(?:este|e|[äa]r|er|on|je|jest|to|adalah|ialah|yaitu|yakni|l[àa]|है|هي|هو|היא|הוא|คือ|είναι|는|은|ir|yra|"
    r"és|yw|është|ni|е|হল|is|hi|huwa|ná|lautet|ist|è|é|es|est)(?![\w])[ \t]*[:：]?[ \t]*"
)
_LOCAL_COPULA = re.compile(rf"[ \t]*{_LOCAL_COPULAS}")
# "salasana wifiin on X", "PIN kartice je 1234": up to three words (whose, which network, in any case ending), then
# any of those copulas; a value reached so far off is taken only where it cannot be a word (_firm)
_FAR_COPULA = re.compile(rf"(?:[ \t]+[^\s.,;:!?=]+){{1,3}}[ \t]+{_LOCAL_COPULAS}")
# The words that own a code in the languages that need no copula: "PIN saya 7719", "PIN-koden min 5190"
_OWNERS = re.compile(
    r"(?:[ \t]+(?:saya|aku|kamu|anda|ku|mu|min|mitt|minun|mi|moj|moja|mój|moje|мой|мій|моя|μου|c[ủu]a t[ôo]i|benim))+"
)
_PHRASE = (
    r"pass ?phrases?|(?:seed|recovery|mnemonic|secret|backup|wallet) (?:phrase|words)|phrase (?:secr[eè]te|de passe)|"
    r"frase (?:secreta|de (?:contrase(?:ñ|n)a|recuperaci[oó]n|recupera[cç][aã]o|seguran[cç]a|paso)|semilla)|"
    r"passphrase|助记词|(?:security|secret)(?: questions?)? answers?|"
    r"answer (?:to|for|of) (?:(?:my|the|our|your|his|her) )?(?:security|secret) questions?|"
    r"(?:mother'?s? )?maiden name"
)
_CODE_QUALIFIER = (
    r"(?:secret|unlock|door|gate|alarm|disarm|arming|garage|entry|access|security|verification|2fa|mfa|otp|one[- ]time|"
    r"backup|recovery|lock|safe|keypad|building|voicemail|parking|locker|bike|front|back|house|home|office|phone|sim|"
    r"bank|card|atm|debit|credit|puk|login|sign-in|confirmation|opener|remote|gym|kiosk|lockscreen|screen|tablet|"
    r"storage|unit|shed|mailbox|room|hotel|car|trunk|cabinet|vault|parental|host|moderator|meeting|conference|bridge)"
)
# What a code opens, after "code for/of/de/dell'/für/van/от" and a determiner or two.
_LOCKED = (
    r"alarm\w*|allarm\w*|alarma|door|porte|puerta|porta|portone|t[üu]r|deur|gate|portail|port[ãa]o|cancello|"
    r"garage\w*|building|immeuble|edificio|pr[ée]dio|geb[äa]ude|gebouw|safe|coffre(?:-fort)?|caja fuerte|cofre|tresor|"
    r"cassaforte|kluis|lock\w*|cadenas|candado|cadeado|schloss|lucchetto|slot|phone|t[ée]l[ée]phone|tel[ée]fono|"
    r"telefone|handy|telefoon|sim|cards?|carte|tarjeta|cart[ãa]o|karte|carta|kaart|bank\w*|banque|banco|bancomat|"
    r"entry|entr[ée]e|entrada|ingresso|eingang|ingang|office|bureau|oficina|escrit[óo]rio|ufficio|b[üu]ro|kantoor|"
    r"house|maison|casa|haus|huis|apartment|appartement|apartamento|appartamento|wohnung|flat|"
    r"сигнализац\w*|двер\w*|карт\w*|телефон\w*|сейф\w*|домофон\w*"
)
_OPENS = (
    r"[ \t]+(?:for|of|to|on|de|du|des|d'|da|do|del|della|dello|dell'|di|f[üu]r|f[üu]rs|zum|zur|van|voor|от|для|к)"
    r"[ \t]*(?:(?:the|my|our|your|la|le|les|l'|el|los|o|a|os|il|lo|mon|ma|mes|mi|mis|meu|minha|mein|meine|meiner|"
    r"der|die|das|den|dem|het|de|mijn|onze|mio|mia|моей|моего|моих)[ \t]*){0,2}"
    rf"(?:[\w\-]+[ \t]+)?(?:{_LOCKED})(?![\w])"
)
_CODE = (
    # PIN in the languages that borrowed it, the word for "code" or "number" fused, spaced or hyphened and inflected
    # (first: the bare noun would end before them): pinkoden, PIN-koodini, PIN kodum, PIN-kódom, PIN-ul, ПИН кодът,
    # PIN-код, PIN码, PINコード, PIN 번호
    r"pin[ -]?(?:cod|k[oó]o?d|kode|код|numer|nummer|n[uú]mero)[a-zà-ÿа-яё]{0,4}|pin-(?:ul|ului|en|et|in|ni|u|a|om)|"
    r"пин(?:[ -]?код[а-яё]{0,3})?|pin ?(?:码|碼|コード|번호)|पिन|(?:ال)?(?:رقم|رمز) (?:ال)?سري|رمز pin|"
    r"pin(?:[ -]?(?:code|number|no\.?))?s?|pass ?codes?|(?:host|moderator|participant)[ \t-]+keys?|"
    rf"(?:{_CODE_QUALIFIER}[ \t-]+){{1,3}}(?:codes?|pins?)|(?:lock|safe|locker|pin|padlock)[ \t-]+(?:numbers?|combinations?)|"
    r"combination|combinaci[oó]n|combina[cç][aã]o|combinaison|kombination|combinazione|combinatie|digicode|"
    r"(?:(?<=lock )|(?<=locker )|(?<=safe )|(?<=padlock ))combos?|combo(?= lock)|code (?:pin|secret|d'acc[eè]s|de (?:la )?porte|"
    r"d'entr[ée]e|de d[ée]verrouillage)|c[oó]digo (?:pin|secreto|de (?:acceso|acesso|desbloqueo|desbloqueio|la "
    r"puerta|seguran[cç]a|seguridad|verifica[cç][aã]o|verificaci[oó]n))|zugangscode|t[üu]rcode|entsperrcode|"
    r"geheimzahl|验证码|暗証番号|code confidentiel|codice (?:pin|segreto)|"
    rf"(?:code|codes|codice|c[oó]digo|kode|код)(?={_OPENS})|"
    r"(?:(?:3|4|three|four)[ -]digit (?:security )?code|code(?= on the back))"
    r"(?: on the back(?: of (?:the|my|your|his|her|our) card)?)?"
)
_ID = (
    r"ssn|social security(?: number| no\.?| #)?|social insurance number|national (?:id|identity|insurance)(?: card)?"
    r"(?: number| no\.?)?|ni number|nino|passport(?: number| no\.?| #)?|driver'?s? licen[cs]e(?: number| no\.?)?|"
    r"tax (?:id|identification number|file number|number)|tfn|itin|aadhaar(?: number| no\.?)?|nhs number|"
    r"medicare number|dni|nie|nif|curp|cpf|insee|num[ée]ro de s[ée]curit[ée] sociale|"
    r"(?:num[ée]ro|n[uú]mero) (?:de )?(?:pasaporte|passeport|passaporte|identidad|identit[ée]|identidade)|"
    r"codice fiscale|steuer-?id(?:entifikationsnummer)?|personalausweis(?:nummer)?|sozialversicherungsnummer|bsn|"
    r"iban|(?:bank )?account number|kontonummer|num[ée]ro de compte|n[uú]mero de (?:la )?cuenta|n[uú]mero da conta|"
    r"rekeningnummer|numero di conto|(?:credit |debit |bank )?card number|kartennummer|num[ée]ro de (?:la )?carte|"
    r"n[uú]mero de (?:la )?tarjeta|n[uú]mero do cart[aã]o|numero della carta|"
    r"pesel|personnummer|身份证(?:号码|号)?|マイナンバー|주민등록번호|social(?=[ \t]*(?:is|was|:|#))|"
    r"sin(?=[ \t]*(?:is|was|number|no\.?|:|#)(?![\w]))"  # Canada's social insurance number, said by its initials
)
# Matched only at the start of a word that holds one of ANCHORS (found with str.find: a regex that scans every
# position of a long message costs ~100x more), on the lowered text.
_KEY = (
    r"(?:keys?|cl[ée]s?|chiavi|chiave|clave|chaves?|(?:api-?|zugangs|zugriffs)?(?:schl[üu]ssel|schluessel)|sleutels?|"
    r"ключ(?:и|а)?|kl[íi][čc]|kľúč|klucz(?:a|em)?|nyckel(?:n)?|n[øo]gle(?:n)?|avain(?:ta|ni|et)?|anahtar(?:ı|ım|ımız|i|im)?|"
    r"キー|密钥|秘钥|密鑰|키"
    # what the key is, after it: "la clé secrète", "chiave segreta", "clave de API"
    r")(?:[ \t]+(?:secr[èe]te|segreta|secreta|privada|priv[ée]e|privata|privat|d'api|de (?:la )?api))?"
)
# An access token or a bearer, named in prose in the languages above ("el token de acceso es X", "токен доступа —
# X", "auth header: Bearer X"): its value is no word, as a key's is
_TOKEN_NOUN = (
    r"(?:(?:zugriffs|zugangs|toegangs)-?)?tokens?(?:[ \t]+(?:dost[ęe]pu|доступа|доступу|p[řr][íi]stupu))?|"
    r"токен(?:а|у)?(?:[ \t]+(?:доступа|доступу))?|jetons?|トークン|令牌|토큰|bearer(?:[ \t]+token)?|"
    r"auth(?:orization)?(?:[ \t]+header)?"
)
_KEYWORDS = re.compile(
    rf"(?:(?P<phrase>{_PHRASE})|(?P<code>{_CODE})|(?P<id>{_ID})|(?P<password>{_PASSWORD})|(?P<key>{_KEY})|"
    rf"(?P<secret>secrets?)|(?P<token>{_TOKEN_NOUN}))"
    r"(?![a-zà-ÿ0-9_])"
)
# The connector: a copula or a sign, in the languages above (set-verbs first: "was changed to"). Words end at a
# boundary; CJK copulas and signs need none ("密码是woaini").
_B = r"(?![A-Za-zÀ-ÿ0-9_])"
_LOCAL_KEYWORD = re.compile(rf"(?P<local>{_LOCAL})(?![a-zà-ÿ0-9_])")
_CONNECTS = (
    r"(?:(?:"
    r"(?:(?:is|was|has been|have been|got|had been|'s)[ \t]+)?(?:now[ \t]+)?"
    r"(?:set|changed|updated|reset|switched|rotated|moved)[ \t]+(?:to|into)"
    r"|(?:est|a été|é|foi|es|fue|ist|wurde)[ \t]+(?:maintenant[ \t]+|ahora[ \t]+|agora[ \t]+|jetzt[ \t]+)?"
    r"(?:chang[ée]e?|modifi[ée]e?|cambiad[oa]|mudad[oa]|alterad[oa]|ge[äa]ndert)[ \t]+(?:en|à|a|para|auf|zu|in)"
    r"|(?:(?:'s|is|was|has been|got)[ \t]+)?(?:changed|updated|reset|new)[ \t]*[,;:][ \t]*(?:and[ \t]+)?"
    r"(?:it'?s|it is|now it'?s|the new one is|now)(?:[ \t]+now)?"
    r"|,?[ \t]*(?:c'est|it'?s|it is|that'?s|das ist)"
    r"|is|are|was|were|'s|will be|used to be|est|était|es|era|será|sera|é|ist|lautet|luidt|war|è|sono"
    rf"){_B}|是|为|為|は|는|은|[:：]{{EMPHASIS}}|=|→|->|—|–|(?<=[ \t])-(?=[ \t]))[ \t]*[:：]?[ \t]*"
)
_CONNECTOR = re.compile(r"[ \t]*" + _CONNECTS.replace("{EMPHASIS}", ""), re.I)
# Where the clause holds Markdown's emphasis, it may close around the noun or the sign: "**Password:** X"
_MD = r"\*{0,2}"
_CONNECTOR_MD = re.compile(rf"[ \t]*{_MD}[ \t]*" + _CONNECTS.replace("{EMPHASIS}", _MD), re.I)
# "set the wifi password to X", "changed my password to X": "to" counts only after a verb of setting.
_SET_VERB = re.compile(
    r"(?<![\w])(?:set|sets|setting|change|changed|changing|update|updated|reset|switched|made|make|chose|picked|"
    r"changé|changer|mis|mets|cambi[ée]|cambiado|puse|mudei|mudou|troquei|defini|ge[äa]ndert|gesetzt|改成|改为|设为|设置为|"
    r"设成)(?![\w])",
    re.I,
)
_TO = re.compile(r"[ \t]+(?:to|into|en|à|a|para|auf|zu|成|为)(?![\w])[ \t]*", re.I)
# "use the password X", "with password X", "enter passcode X": a verb of use right before the noun.
_USE_VERB = re.compile(
    r"(?:use|using|with|enter|type|typing|try|(?<!what )(?<!which )(?<!where )(?<!how )(?<!who )is the|avec|con|com|"
    r"mit|utilise|usa|use a|usar)[ \t]+"
    r"(?:the[ \t]+|a[ \t]+|my[ \t]+|our[ \t]+|le[ \t]+|la[ \t]+|el[ \t]+|a[ \t]+|das[ \t]+|dem[ \t]+)?$",
    re.I,
)
_FILLER = re.compile(
    r"(?:(?:now|still|currently|actually|just|simply|literally|always|really|probably|likely|usually|definitely|"
    r"certainly|possibly|even|maintenant|ahora|agora|jetzt|nun|actuellement)[ \t]+)*",
    re.I,
)
_DESCRIBED = re.compile(r"(\w+)[ \t]+")
_QUOTED = re.compile(
    r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|“([^”\n]{1,200})”|‘([^’\n]{1,200})’|"
    r"«[ \u00a0]?([^»\n]{1,200}?)[ \u00a0]?»|「([^」\n]{1,200})」"
)
_TOKEN = re.compile(r"[^\s\"'`,;<>()\[\]{}，。；、]+")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_NEXT_TOKEN = re.compile(
    r"[ \t]+(?=[^\s\"'`,;<>()\[\]{}，。；、]*\d)([^\s\"'`,;<>()\[\]{}，。；、]+)"
)  # one with a digit
_CLAUSE_END = re.compile(
    r"[.;!?\n。；！？]|,[ \t]+(?:and|but|so|then|et|mais|y|pero|e|mas|und|aber)\b|[ \t]+(?:and|but)[ \t]+"
    r"(?:don'?t|do not|never|keep|please|rotate|change|it|i|we|you)\b"
)
# After "to", a plain word is a value only at the clause's end or before a time or a conjunction ("... to
# sunflower yesterday"); "reset your password to regain access" is a purpose, not a value.
_TO_TAIL = re.compile(
    r"[ \t]*(?:$|[.;!?,)\n]|(?:yesterday|today|tonight|last|this|on|at|in|for|and|but|so|because|since|after|before|"
    r"earlier|again|hier|ayer|ontem|gestern)(?![\w]))",
    re.I,
)
NOT_A_VALUE = frozenset(
    [
        # adverbs and comparisons that go on a sentence about a password, from public pages nobody here wrote
        # ("Sharing your Wi-Fi password is like handing someone a master key", "the main password is even more
        # important", "your Wi-Fi password it's likely you're ...")
        "like",
        "unlike",
        "likely",
        "unlikely",
        "even",
        "such",
        "more",
        "less",
        "most",
        "least",
        "really",
        "quite",
        "rather",
        "usually",
        "often",
        "probably",
        "possibly",
        "definitely",
        "certainly",
        "much",
        # a pronoun opens the clause that goes on ("your Wi-Fi password it's likely you're giving ...")
        "you",
        "she",
        "they",
        "them",
        "his",
        "her",
        "our",
        "your",
        "their",
        "you're",
        "we're",
        "they're",
        "i'm",
        "he's",
        "she's",
        "it's",
        "there",
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "mine",
        "yours",
        "ours",
        "theirs",
        "one",
        "same",
        "different",
        "new",
        "old",
        "current",
        "temporary",
        "default",
        "initial",
        "usual",
        "original",
        "previous",
        "required",
        "needed",
        "mandatory",
        "optional",
        "necessary",
        "set",
        "unset",
        "missing",
        "empty",
        "blank",
        "incorrect",
        "invalid",
        "wrong",
        "correct",
        "right",
        "valid",
        "expired",
        "changed",
        "reset",
        "stored",
        "saved",
        "kept",
        "hidden",
        "shown",
        "visible",
        "secret",
        "secure",
        "insecure",
        "strong",
        "weak",
        "long",
        "short",
        "simple",
        "easy",
        "hard",
        "complex",
        "complicated",
        "good",
        "bad",
        "fine",
        "ok",
        "okay",
        "too",
        "very",
        "also",
        "just",
        "only",
        "still",
        "already",
        "now",
        "never",
        "always",
        "not",
        "no",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "here",
        "there",
        "below",
        "above",
        "in",
        "on",
        "at",
        "of",
        "for",
        "to",
        "from",
        "by",
        "with",
        "without",
        "into",
        "onto",
        "about",
        "what",
        "whatever",
        "which",
        "where",
        "who",
        "how",
        "why",
        "when",
        "something",
        "anything",
        "nothing",
        "everything",
        "someone",
        "anyone",
        "nobody",
        "written",
        "known",
        "given",
        "taken",
        "broken",
        "forgotten",
        "chosen",
        "sent",
        "lost",
        "case",
        "case-sensitive",
        "sensitive",
        "personal",
        "private",
        "encrypted",
        "hashed",
        "salted",
        "rotated",
        "revoked",
        "leaked",
        "exposed",
        "compromised",
        "protected",
        "managed",
        "generated",
        "random",
        "unique",
        "same-as",
        "shared",
        "and",
        "or",
        "but",
        "so",
        "if",
        "then",
        "than",
        "as",
        "be",
        "being",
        "been",
        "is",
        "was",
        "are",
        "were",
        "will",
        "would",
        "should",
        "could",
        "can",
        "may",
        "cuál",
        "cual",
        "qué",
        "que",
        "quel",
        "quelle",
        "qual",
        "was",
        "wie",
        "welche",
        "什么",
        "obligatoire",
        "requis",
        "obligatoria",
        "obligatorio",
        "requerido",
        "obrigatoria",
        "obrigatório",
        "erforderlich",
        "erforderlich",
        "falsch",
        "incorrecto",
        "incorrecta",
        "incorreto",
        "incorreta",
        "faux",
        "fausse",
        "le",
        "la",
        "les",
        "un",
        "une",
        "el",
        "los",
        "las",
        "um",
        "uma",
        "der",
        "die",
        "das",
        "ein",
        "eine",
        "ist",
        "est",
        "es",
        "é",
        "en",
        "de",
        "du",
        "des",
        "del",
        "da",
        "do",
        "mon",
        "ma",
        "mes",
        "mi",
        "mis",
        "meu",
        "minha",
        "mein",
        "meine",
        "bearer",
        "basic",
        "digest",
        "oauth",
        "jwt",
        "opaque",
        "refresh",
        "access",
        "reference",
        "placeholder",
        "example",
        "dummy",
        "redacted",
        "masked",
        "pass",
        "password",
        "passwords",
        "passwd",
        "pwd",
        "pw",
        "passphrase",
        "passcode",
        "pin",
        "code",
        "codes",
        "key",
        "login",
        "user",
        "username",
        "manager",
        "field",
        "policy",
        "policies",
        "reset-link",
        "link",
        "form",
        "prompt",
        "dialog",
        "box",
        "screen",
        "page",
        "rules",
        "rule",
        "length",
        "strength",
        "expiry",
        "expiration",
        "requirement",
        "requirements",
        "change",
        "changes",
        "hint",
        "hints",
        "reuse",
        "recovery",
        "case-insensitive",
        "insensitive",
        "see",
        "ask",
        "check",
        "refer",
        "contact",
        "tbd",
        "n/a",
        "unknown",
        "pending",
        "somewhere",
        "anywhere",
        "everywhere",
        "nowhere",
        "elsewhere",
        "inside",
        "under",
        "behind",
        "near",
        "attached",
        # what the languages of _LOCAL say of a password: wrong, required, expired, too (short), new, secret
        "fel",
        "felaktigt",
        "obligatoriskt",
        "för",
        "feil",
        "påkrevd",
        "forkert",
        "påkrævet",
        "gerekli",
        "zorunlu",
        "hatalı",
        "yanlış",
        "çok",
        "wymagane",
        "za",
        "zbyt",
        "obligatorie",
        "obligatorii",
        "prea",
        "incorect",
        "incorectă",
        "greșită",
        "expirat",
        "expirată",
        "salah",
        "wajib",
        "diperlukan",
        "harus",
        "terlalu",
        "lemah",
        "kuat",
        "baru",
        "lama",
        "rahasia",
        "benar",
        "sai",
        "đúng",
        "mới",
        "quá",
        "povinné",
        "špatné",
        "nesprávné",
        "hibás",
        "kötelező",
        "túl",
        "väärä",
        "pakollinen",
        "liian",
        "vanhentunut",
        "verplicht",
        "onjuist",
        "verlopen",
        "fout",
        "te",
    ]
    # The same words by class in the other languages of _LOCAL and PIN (those written in Latin-1 letters: a word with
    # a letter beyond them is the sentence's own already, _password_ok): wrong or invalid, required, too, short or
    # long, weak, expired, empty, new or old, saved, forgotten
    + [
        "spatne",
        "spatné",
        "chybne",
        "chybné",
        "neplatne",
        "neplatné",
        "nespravne",
        "nesprávne",
        "nespravny",
        "nesprávny",
        "zle",
        "povinne",
        "povinné",
        "povinny",
        "povinný",
        "prilis",
        "krátke",
        "kratke",
        "kratky",
        "krátky",
        "kratko",
        "kratka",
        "kratek",
        "prekratko",
        "prekratka",
        "prekratek",
        "predolgo",
        "pogresno",
        "pogresna",
        "napacno",
        "napacna",
        "obavezno",
        "obavezna",
        "obvezno",
        "obvezna",
        "kriva",
        "krivo",
        "nevazeca",
        "nieprawidlowe",
        "bledne",
        "wymagane",
        "puste",
        "krotkie",
        "neteisingas",
        "neteisinga",
        "klaidingas",
        "privalomas",
        "per",
        "trumpas",
        "nepareiza",
        "nepareizs",
        "obligata",
        "par",
        "isa",
        "vale",
        "vigane",
        "kohustuslik",
        "liiga",
        "lühike",
        "luhike",
        "aegunud",
        "uus",
        "vana",
        "vaara",
        "väärä",
        "virheellinen",
        "lyhyt",
        "pitka",
        "pitkä",
        "uusi",
        "vanha",
        "tyhja",
        "tyhjä",
        "rossz",
        "hibas",
        "helytelen",
        "ervenytelen",
        "érvénytelen",
        "kotelezo",
        "rovid",
        "rövid",
        "uj",
        "új",
        "lejart",
        "lejárt",
        "ures",
        "üres",
        "gresita",
        "gresit",
        "incorecta",
        "incorect",
        "invalida",
        "invalidă",
        "scurta",
        "scurtă",
        "lunga",
        "lungă",
        "prea",
        "nou",
        "noua",
        "veche",
        "goala",
        "goală",
        "forkert",
        "ugyldig",
        "paakraevet",
        "paakrævet",
        "kort",
        "lang",
        "svag",
        "staerk",
        "stærk",
        "udlobet",
        "udløbet",
        "ny",
        "gammel",
        "feil",
        "pakrevd",
        "påkrevd",
        "svakt",
        "utlopt",
        "utløpt",
        "fel",
        "felaktigt",
        "ogiltigt",
        "ogiltig",
        "kravs",
        "krävs",
        "obligatoriskt",
        "utganget",
        "utgånget",
        "tomt",
        "nytt",
        "gammalt",
        "onjuist",
        "ongeldig",
        "verkeerd",
        "verplicht",
        "verlopen",
        "leeg",
        "nieuw",
        "oud",
        "zwak",
        "sterk",
        "falsch",
        "ungueltig",
        "ungültig",
        "erforderlich",
        "abgelaufen",
        "leer",
        "neu",
        "alt",
        "kurz",
        "zu",
        "schwach",
        "stark",
        "vergessen",
        "gespeichert",
        "incorrect",
        "invalide",
        "obligatoire",
        "expire",
        "expiré",
        "vide",
        "nouveau",
        "ancien",
        "court",
        "trop",
        "faible",
        "oublie",
        "oublié",
        "incorrecto",
        "incorrecta",
        "invalido",
        "inválido",
        "inválida",
        "obligatorio",
        "obligatoria",
        "caducado",
        "caducada",
        "vacio",
        "vacío",
        "vacia",
        "vacía",
        "nuevo",
        "nueva",
        "corto",
        "corta",
        "demasiado",
        "debil",
        "débil",
        "olvidado",
        "olvidada",
        "errato",
        "errata",
        "sbagliato",
        "sbagliata",
        "obbligatorio",
        "obbligatoria",
        "scaduto",
        "scaduta",
        "vuoto",
        "vuota",
        "nuovo",
        "nuova",
        "vecchio",
        "vecchia",
        "troppo",
        "debole",
        "dimenticato",
        "dimenticata",
        "obrigatorio",
        "obrigatória",
        "obrigatoria",
        "expirado",
        "expirada",
        "vazio",
        "vazia",
        "novo",
        "curto",
        "curta",
        "muito",
        "fraco",
        "fraca",
        "esquecido",
        "esquecida",
        "yanlis",
        "gecersiz",
        "geçersiz",
        "gerekli",
        "zorunlu",
        "bos",
        "boş",
        "kisa",
        "kısa",
        "uzun",
        "zayif",
        "zayıf",
        "eski",
        "yeni",
        "cok",
        "süresi",
        "suresi",
        "tidak",
        "bukan",
        "kosong",
        "pendek",
        "panjang",
        "lupa",
        "tersimpan",
        "khong",
        "không",
        "dung",
        "đúng",
        "sai",
        "ngan",
        "ngắn",
        "dài",
        "moi",
        "mới",
        "cu",
        "cũ",
        "yeu",
        "yếu",
        "hazin",
        "ħażin",
        "obbligatorju",
        "qasir",
        "qasira",
        "ceart",
        "mícheart",
        "micheart",
        "riachtanach",
        "gearr",
        "fada",
        # ... and the words that refer back or say it is a secret: "er den samme", "to tajemnica"
        "den",
        "det",
        "dem",
        "samme",
        "samma",
        "sama",
        "samo",
        "ten",
        "ta",
        "tá",
        "tento",
        "taki",
        "sami",
        "isti",
        "ista",
        "isto",
        "enak",
        "enako",
        "bu",
        "şu",
        "aynı",
        "ayni",
        "itu",
        "ini",
        "yang",
        "mesma",
        "mesmo",
        "mismo",
        "misma",
        "stesso",
        "stessa",
        "même",
        "meme",
        "gleiche",
        "gleich",
        "dezelfde",
        "hetzelfde",
        "zelfde",
        "tas",
        "pats",
        "ugyanaz",
        "aceeasi",
        "aceeași",
        "acelasi",
        "același",
        "tajemnica",
        "tajne",
        "tajná",
        "tajné",
        "tajny",
        "tajný",
        "tajna",
        "hemlig",
        "hemligt",
        "hemmelig",
        "hemmeligt",
        "salainen",
        "titkos",
        "secretă",
        "secreta",
        "segreta",
        "segreto",
        "secreto",
        "geheim",
        "skrivnost",
        "gizli",
        "slapta",
        "slepena",
        "salajane",
    ]
)
_WORDY = re.compile(r"^[a-zà-ÿ]+$")
_PARTICIPLE = re.compile(r"(?:ed|ing|ly|able|ible|ive|ous|ful|less|tion|sion|ment|ness)$")
# The passive says what happens to a password, not what it is: "is used for ssh", "is left untouched"
PASSIVE = frozenset(
    [
        "left",
        "made",
        "found",
        "held",
        "put",
        "told",
        "built",
        "done",
        "gone",
        "seen",
        "got",
        "gotten",
        "meant",
        "stolen",
        "frozen",
        "read",
        "sold",
        "bought",
        "brought",
        "taught",
        "thought",
        "caught",
        "spent",
        "lent",
        "shut",
        "cut",
        "run",
        "won",
        "worn",
        "torn",
        "drawn",
        "grown",
        "thrown",
        "blown",
        "hung",
        "stuck",
        "struck",
        "bound",
        "laid",
        "paid",
        "said",
        "heard",
        "lit",
        "led",
        "fed",
        "split",
        "spread",
        "burnt",
        "learnt",
        "dealt",
        "felt",
        "slept",
        "swept",
        "bent",
    ]
)
_REF = re.compile(
    r"^(?:\$\{?[A-Za-z_]|%[A-Za-z_]+%$|\{\{|<[^>]*>$|\[|\*{3,}|x{3,}$|os\.|process\.env|env\b|getenv|config\.|"
    r"settings\.|\.\.\.|…)",
    re.I,
)
_CODE_ONE = r"[#*]?[0-9A-Za-z#*]*\d[0-9A-Za-z#*]*(?:[\-.][0-9A-Za-z#*]+|[ ][0-9#*]+(?![A-Za-z]))*"
# A list of codes ("backup codes: 4k9d-2m7x 8p3q-6r1t", one a line, bulleted, "x and y"): groups of letters and digits
_LIST_CODE = re.compile(r"[0-9A-Za-z]*\d[0-9A-Za-z]*(?:-[0-9A-Za-z]+)*(?![\w\-])")
_LIST_SEP = re.compile(r"[ \t]*(?:[,;/&]|and(?![\w]))?[ \t]*\n?[ \t]*(?:[-*•][ \t]+|\d{1,2}[.)][ \t]+)?")
_CODE_VALUE = re.compile(rf"{_CODE_ONE}(?:[ \t]*[,;/][ \t]*{_CODE_ONE})*")
_ID_VALUE = re.compile(
    r"(?:[A-Za-z]{1,3}[ \-.]?)?[0-9A-Za-z]*\d[0-9A-Za-z]*(?:[ \-./][0-9A-Za-z]*\d[0-9A-Za-z]*){0,8}(?:[ \-][A-Za-z](?![\w]))?"
)
_QUALIFIER = re.compile(
    r"[ \t]+(?:for|of|on|to|at|in|i|we|you|that|which|from|de|du|des|del|da|do|d'|para|pour|que|qu'|für|fuer|vom|von|"
    r"zu|zum|zur|des|der|di|per|del|della|fürs|furs|van|voor|à|au|im|am|beim|auf|an|unter|nel|nella|sul|sulla|"
    r"chez|dans|en|op|here|there|thuis|hier|ici|aqui|aquí|qui|dort|daheim|zuhause|"
    r"моей|моего|моих|моя|мои|для|от|的|の|에|about|till|"
    r"pentru|untuk|ke|my|our|your|his|her|their|the|he|she|they|everyone|everybody|btw|fyi|anyway|"
    r"incidentally|between|among|across|within|behind|with|by|used|shared|issued|generated|given|assigned|stored|"
    r"everywhere|nowadays|lately|currently|also|too|again|"
    # the prepositions and the possessives after the noun of the other languages read: "heslo k počítači",
    # "PIN do telefonu", "adgangskoden til routeren", "PIN saya", "mã PIN của tôi", "PIN meiner Karte"
    r"k|ke|ku|na|pro|od|za|ze|z|w|dla|u|til|f[öo]r|fr[åa]n|fra|tot|bij|mit|bei|meiner|meines|meinem|unserer|unseres|"
    r"al|ale|a|lui|cu|la|c[ủu]a|cho|saya|aku|kamu|anda|kami|kita|dari|min|mitt|mina|din|ditt|vores|minun|"
    r"mi|moj|moja|moje|mój|mojego|mojej|mého|mé|mojí|mojho|tiegħi)(?![a-zà-ÿ])"
    r"|[ \t]+(?:від|до|на|за|з|із|в|у|при|мой|моя|мій|моєї|мого|моей|του|της|των|μου|σου|για|σε)(?!\w)"
    r"|[ \t]+(?:dell|dall|nell|all|d|l|qu)'",
    re.I,
)
_BEFORE_NOUN = re.compile(
    r"(?:^|[\s(:])(?:\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|“([^”\n]{1,200})”|"
    r"([^\s\"'`,;<>()\[\]{}]{3,128}))[ \t]+(?:as|is|was|will be|becomes|est|es|é|ist)[ \t]+"
    r"(?:(?:the|my|our|your|his|her|their|a|mon|ma|notre|mi|nuestra|meu|minha|mein|meine|das|le|la|el)[ \t]+)?"
    r"(?:[\w\-]+[ \t]+){0,2}$",
    re.I,
)
# An acronym or a network's name right after the noun (French, Spanish, Portuguese and German put it there): not
# another subject, as "password manager" or "password field" are.
_POSTPOSED = re.compile(r"[ \t]+(?:[A-Z][A-Z0-9]{1,9}|[Ww]i-?[Ff]i|wlan|vpn|ssh)(?![\w\-])")
_LATIN = re.compile(r"[A-Za-z]")
_ASIDE = re.compile(
    r"[ \t]*(?:,[^,.;:\n]{1,40},|\([^()\n]{1,40}\)|[—–][^—–\n]{1,40}[—–]|[ \t]-[ \t][^\n]{1,40}?[ \t]-)"
)
_GAP = re.compile(r"[ \t]*[:#]?[ \t]*")
_GAP_MD = re.compile(rf"[ \t]*{_MD}[ \t]*[:#]?{_MD}[ \t]*")
# A word of the phrase that qualifies a noun; a conjunction opens another clause ("password at the page if it ...")
_WORD = re.compile(
    r"[ \t]+(?!(?:if|when|whenever|because|unless|until|while|since|although|though|but|so|and|or)(?![\w]))"
    r"[^\s.;!?:=,，。]+",
    re.I,
)
_AND_WORD = re.compile(r"[ \t]+(?:and|or)[ \t]+[^\s.;!?:=,，。]+", re.I)
_DIGITS6 = re.compile(r"(?:\D*\d){6}")
_SSN = re.compile(r"(?<![\w\-/.])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w\-/])")
_LOGIN_PAIR = re.compile(
    r"(?:log(?:ged)? ?in|sign(?:ed)? ?in|login|logon|credentials?|creds|identifiants|credenciales|"
    r"credenciais|zugangsdaten|anmeldedaten|account|compte|cuenta|conta|账号|帐号|用户名)(?![\w])"
    r"(?:[^\n.;!?]|\.(?=\w)){0,80}?(?<![\w@.])([\w.\-+@]{1,64})[ \t]*(/|:(?!//)|\|)[ \t]*"
    r"([^\s\"'`,;<>()\[\]{}]{3,128})",
)  # the words before the pair may hold a host or a URL ("log in at https://x.io: admin / X"): a dot inside a word
# The second half of a pair after the one a login's colon opens: "login for the router: admin / R0uter!x"
_PAIR_TAIL = re.compile(r"[ \t]+[/|][ \t]+([^\s\"'`,;<>()\[\]{}]{3,128})")
# "log in as root with toor", "ssh in as admin using hunter2"
_AS_WITH = re.compile(
    r"(?:log(?:ged)? ?in|sign(?:ed)? ?in|logon|ssh(?: in)?|connect|authenticate)(?:[ \t]+(?:to|into|on)[ \t]+\S+)?"
    r"[ \t]+as[ \t]+[\w.\-+@]{1,64}[ \t]+(?:with|using|w/|pw|pass)(?:[ \t]+(?:the[ \t]+)?(?:password|pass|pw))?"
    r"[ \t]*[:=]?[ \t]+([^\s\"'`,;<>()\[\]{}]{3,128})"
)
_COPULA = r"(?:[ \t]*(?:is|es|est|ist|é|è|era|was|lautet|sono|são|son)(?![\w]))?"
_USER_THEN_PASS = re.compile(
    rf"(?:user(?:name)?|login|account|utilisateur|usuario|usuário|benutzer(?:name)?){_COPULA}[ \t]*[:=]?[ \t]+"
    r"(?!(?:and|or|und|oder|et|ou|y|o|e|en|of)[ \t])[\w.\-+@]{1,64}[ \t]*(?:,|and|et|y|e|und|en|/|;)?[ \t]*"
    r"(?:(?:the|my|la|el|le|a|o|das|het|mijn|il|mi|mon|meu|minha|mein)[ \t]+)?"
    r"(?:pass(?:word)?|pwd|pw|mot de passe|mdp|contrase(?:ñ|n)a|senha|passwort|kennwort|clave|wachtwoord)"
    rf"{_COPULA}[ \t]*[:=]?[ \t]+([^\s\"'`,;<>()\[\]{{}}]{{3,128}})"
)
# "the router credentials are admin and Hx7-lamp": a login pair joined by a conjunction
_CRED_AND = re.compile(
    r"(?:credentials?|creds|login details|identifiants|credenciales|credenciais|zugangsdaten|anmeldedaten)(?![\w])"
    r"[^\n.;!?]{0,40}?(?:are|is|sont|son|são|sao|sind|:)[ \t]+([\w.\-+@]{1,64})[ \t]+"
    r"(and|&|et|y|e|und|en|with|avec|con|com|mit)[ \t]+([^\s\"'`,;<>()\[\]{}]{3,128})"
)
# "I unlock my phone with 802214", "... the laptop with Marble_Fox_61", "to unlock it you type 7788": the digits a lock
# is opened with, or right after "with" a token holding a digit (a password; "with the YubiKey-5C" is a thing)
_UNLOCK_WITH = re.compile(
    r"(?:unlock|disarm|open(?:s|ed)?(?= with)|d[ée]verrouill|desbloque|entsperr|sblocc|ontgrendel)\w*[^\n.;!?]{0,40}?[ \t]"
    r"(?:with|using|avec|con|com|mit|met|(?:(?:you|i|we|just)[ \t]+)?(?:type|enter|key|punch|dial|put)(?:[ \t]+in)?)[ \t]+"
    r"(?:(?:(?:the|my|code|pin|le|la|el|o|a|den|de|il|mon|mi|meu|mein)[ \t]+){0,2}"
    r"(\d[\d \-]{2,}\d)(?![\w])|(?=[^\s\"'`,;<>()\[\]{}]*\d)([^\s\"'`,;<>()\[\]{}]{6,128}))"
)


# A security question, then its answer: "security Q: first pet; A: Rex", "Security question: ... Answer: Rex"
_QA = re.compile(r"security q(?:uestion)?s?(?![\w])[^\n]{0,80}?[;,.|?][ \t]*(?:a|ans|answer)[ \t]*[:：=\-][ \t]*")
_ENV_PAIRS = tuple((w, w.lower()) for w in ENV_WORDS)
_ENV_WAKE = frozenset(lw for _, lw in _ENV_PAIRS)
# "Use the code 914263 to get into the server room": a code, then what it opens
_CODE_TO_OPEN = re.compile(
    r"(?:code|pin|passcode|combination)[ \t]+(\d[\d#*\-]{3,}[\w#*]*)[ \t]+(?:to|for)[ \t]+(?:get[ \t]+in(?:to)?|open|unlock|"
    r"enter|access|disarm|arm)(?![\w])"
)
# "The safe in the hotel room: 5-1-5-1", "locker: 12-34-56", "Garage keypad - 4471": a lock labelled with its code
_LOCK_LABEL = re.compile(
    r"(?:safe|locker|padlock|keypad|lockbox|alarm)(?![\w])[^\n:.;!?=]{0,40}?[ \t]*(?:[:=]|[-\u2013\u2014](?=[ \t]))"
    r"[ \t]*(\d[\d#* \-]{2,}[\d#*])(?![\w])"
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
_RULES = (_KEYWORDS, _LOGIN_PAIR, _AS_WITH, _USER_THEN_PASS, _CRED_AND, _UNLOCK_WITH, _CODE_TO_OPEN, _LOCK_LABEL)
_LOCAL_WAKE = frozenset(LOCAL_LITERALS + SCRIPT_LITERALS)
# An environment variable whose name ends with a secret word, then its value: "set SMTP_PASSWORD to X",
# "PGPASSWORD is now X", "ADMIN_PWD should be set to X" (an assignment, "DB_PASSWORD=X", is privacy.py's). Upper case
# only: in prose "the password to" is a sentence.
_ENV = re.compile(
    r"(?<![\w$%{.])(?:[A-Z0-9]*_)*[A-Z0-9]*?(?P<word>PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|SECRET|TOKEN|KEY|PSK|PIN|"
    r"CREDENTIALS?)(?![\w])[ \t]*(?:(?P<to>(?:(?:should|must|will|can)[ \t]+be[ \t]+|(?:is|was|has been)[ \t]+"
    r"(?:now[ \t]+)?)?(?:set|changed|updated|reset)[ \t]+(?:to|into)|to)(?![\w])|(?:is|was)(?:[ \t]+now)?(?![\w]))"
    r"[ \t]*"
)
_ENV_LABELS = {
    "PASS": "password",
    "PWD": "password",
    "SECRET": "secret",
    "TOKEN": "token",
    "PIN": "pin",
    "CRED": "credential",
}


def _env_values(text: str, words: Iterable[str]) -> list[tuple[int, int, str]]:
    """The values given to environment variables named for a secret (``words``: those of :data:`ENV_WORDS` in
    ``text``)."""
    out: list[tuple[int, int, str]] = []
    for word in words:
        i = text.find(word)
        while i >= 0:
            start = i
            while start > 0 and (text[start - 1].isupper() or text[start - 1].isdigit() or text[start - 1] == "_"):
                start -= 1
            m = _ENV.match(text, start) if start < i else None  # a name has a prefix: "PIN" alone is a word
            if (
                m is not None
                and m.start("word") == i
                and (
                    m.group("to") is None or "set" in m.group("to") or _SET_VERB.search(text, max(0, start - 24), start)
                )
            ):
                got = _token_value(text, m.end(), after_to=False)
                if got is not None and not text.startswith(("/", "~", "./"), got[0]):  # a path names a file
                    out.append((*got, _ENV_LABELS.get(word, "key")))
            i = text.find(word, i + len(word))
    return out


# A key's name, not a secret's value ("secret: auth_key: ..."); Markdown's emphasis around a value ("is **X**"); what a
# value that is no word holds at least one of
_SNAKE = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
_EMPHASIS = re.compile(r"\*\*?(?=[^\s*])|__?(?=[^\s_])")
_SHAPE_CHAR = re.compile(r"[0-9\"'`‘“«!#$%&*+/=?@^_~\-]")


def _secret_noun(low: str) -> bool:
    """Whether "secret" stands in a noun that takes any value ("secret word", "shared secret")."""
    i = low.find("secret")
    while i >= 0:
        if low.startswith(_SECRET_AFTER, i + 7) or low.endswith(_SECRET_BEFORE, 0, i):
            return True
        i = low.find("secret", i + 6)
    return False


_SECRET_AFTER = ("word", "pass", "code", "pin", "number")
_SECRET_BEFORE = ("shared ", "client ", "app ", "api ", "webhook ", "signing ")


def _value_end(text: str, start: int) -> int:
    m = _CLAUSE_END.search(text, start, min(len(text), start + 200))
    return m.start() if m else min(len(text), start + 200)


# What code or a shell writes where a value would stand: a call or a subscript ("getpass.getpass()", "config['x']"),
# a type ("password: str", "token: Optional[str]"), a path ("pwd is /home/user": the working directory), a URL
_CALL = re.compile(
    r"(?:[a-z_]\w*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)[(\[][\w.(\[]*|[a-z_]\w*(?:\.[A-Za-z_]\w*){2,}"  # or req.body.pw
)
_IDENT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_TYPE = re.compile(r"(?:str|string|bytes|int|bool|any|none|secretstr|optional|union)(?:\[[\w\[\], |.]*)?", re.I)
_PATH = re.compile(r"(?:~|\.{1,2})?/[A-Za-z0-9._\-]+(?:/[A-Za-z0-9._\-]*)*")
_URL = re.compile(r"[a-z][a-z0-9+.\-]*://", re.I)


def code_name(value: str, after: str = "") -> bool:
    """Whether ``value`` (and ``after``, the text right after it) is what code names where a value would stand, not a
    value: a call, a subscript, a type, a path or a URL."""
    if after.startswith(("(", "['", '["')) and _IDENT.fullmatch(value):
        return True
    return bool(_CALL.fullmatch(value) or _TYPE.fullmatch(value) or _PATH.fullmatch(value) or _URL.match(value))


def column_name(value: str) -> bool:
    """A key that is a column's or a field's name ("the primary key is order_id", "(tenant_id, user_id)")."""
    return _SNAKE.match(value.lstrip("([")) is not None


def _password_ok(value: str, after: str = "") -> bool:
    """A token named as a password: anything but a word that describes it or refers to it."""
    v = value.strip("\"'`").rstrip("!?")  # "the password is wrong!": the word decides, not its sentence's end
    low = v.casefold().lstrip("¿¡")
    if len(v) < 3 or low in NOT_A_VALUE or _REF.match(v) or "[REDACTED:" in v or code_name(v, after):
        return False
    if not v.isascii() and (not _ASCII_ALNUM.search(v) or (v.isalpha() and any(ord(c) > 0xFF for c in v))):
        return False  # "hasło jest nieprawidłowe", "mật khẩu là bắt buộc": a word of the sentence's own language
    if v.isdigit() and len(v) < 4:
        return False  # "at least 12", "8 characters"
    if _WORDY.match(v) and (
        low in PASSIVE
        or (low.endswith("ed") and not low.endswith("eed") and len(low) >= 4)
        or (_PARTICIPLE.search(low) and len(low) > 6)
    ):
        return False  # "is configurable", "was expiring", "is used for ssh", "is left untouched"
    return True


def _plain_word(value: str) -> bool:
    return bool(_WORDY.match(value))


def _strip_tail(token: str) -> str:
    t = token.rstrip(".,:;)”’»。")  # "Panda2024!": a password may end with ! or ?, a sentence with .
    return t if len(t) >= 3 else token


def _code_value(text: str, start: int) -> tuple[int, int] | None:
    """A code: digits (and the letters, #, * of a keypad), in up to four groups, or said in number words."""
    w = _NUMBER_WORDS.match(text, start)
    if w is not None:
        return w.span()
    m = _CODE_VALUE.match(text, start)
    if m is None or m.end() - m.start() < 3:
        return None
    digits = sum(c.isdigit() for c in m.group(0))
    return (m.start(), m.end()) if digits >= 3 else None


_DIGIT_WORD = (
    r"zero|oh|one|two|three|four|five|six|seven|eight|nine|z[ée]ro|un|deux|trois|quatre|cinq|six|sept|huit|neuf|cero|"
    r"uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|um|dois|tr[êe]s|quatro|sete|oito|nove|null|eins|zwei|drei|vier|"
    r"f[üu]nf|sechs|sieben|acht|neun|due|quattro|sei|sette|otto|nul|een|twee|drie|vijf|zes|zeven|negen"
)
_NUMBER_WORDS = re.compile(rf"(?:(?:{_DIGIT_WORD})[ \t,\-]+){{2,11}}(?:{_DIGIT_WORD})(?![\w])", re.I)


def _code_list(text: str, start: int) -> tuple[int, int] | None:
    """Codes named in the plural: each group of letters and digits that follows, one a line or side by side."""
    pos = _LIST_SEP.match(text, start).end()  # type: ignore[union-attr]
    first, end = pos, None
    while True:
        m = _LIST_CODE.match(text, pos)
        if m is None or sum(c.isdigit() for c in m.group(0)) < 2 or len(m.group(0)) < 4:
            break
        end = m.end()
        pos = _LIST_SEP.match(text, end).end()  # type: ignore[union-attr]
    return (first, end) if end is not None else _code_value(text, start)


def _id_value(text: str, start: int) -> tuple[int, int] | None:
    """An id: groups holding digits (a letter group of one or two beside them: "QQ 12 34 56 C"), 6+ digits."""
    m = _ID_VALUE.match(text, start)
    if m is None or not _DIGITS6.match(m.group(0)):
        return None
    return m.start(), m.end()


_SPELLED = re.compile(r"(?:[^\s\"'`,;.]\s){3,}[^\s\"'`,;.](?![^\s.,;!?])")


def _token_value(text: str, start: int, *, after_to: bool) -> tuple[int, int] | None:
    spelled = _SPELLED.match(text, start)  # "m a r m o t 4 2": a value spelled out, one character at a time
    if spelled is not None:
        return spelled.span()
    q = _QUOTED.match(text, start)
    if q is not None:
        s, e = q.span(q.lastindex or 0)
        return (s, e) if text[s:e].strip() and not _REF.match(text, s, e) else None  # '...', '<password>': a reference
    # "is **X**": Markdown's emphasis is not the value's
    emphasis = _EMPHASIS.match(text, start) if text.startswith(("*", "_"), start) else None
    m = _TOKEN.match(text, emphasis.end() if emphasis else start)
    if m is None:
        return None
    at, value = m.start(), _strip_tail(m.group(0).rstrip("*_") if emphasis else m.group(0))
    if code_name(value, text[at + len(value) : at + len(value) + 2]):
        return None  # "pw = getpass.getpass()", "password = request.form['password']"
    if not _password_ok(value):
        # "密码是六位数 314159": a word of the text's own language describes the value that follows
        n = None if value.isascii() else _NEXT_TOKEN.match(text, m.end())
        if n is None:
            return None
        nxt = _strip_tail(n.group(1))
        if not (_shaped(nxt) or sum(c.isdigit() for c in nxt) >= 4) or not _password_ok(nxt):
            return None
        at, value = n.start(1), nxt
    end = at + len(value)
    if after_to and _plain_word(value) and not _TO_TAIL.match(text, end):
        return None  # "reset your password to regain access"
    return at, end


# Words that join a description's words ("long and random", "easy to remember", "hard enough to guess")
_LINKS = frozenset(["and", "or", "but", "to", "enough", "than", "as", "yet", "so", "too", "nor"])


def _phrase_value(text: str, start: int) -> tuple[int, int] | None:
    q = _QUOTED.match(text, start)
    if q is not None:
        return q.span(q.lastindex or 0)
    end = _value_end(text, start)
    value = text[start:end].rstrip()
    words = value.split()
    if words and words[0].startswith("[REDACTED:") and len(words) > 1:
        return start, start + len(value)  # a shape rule took the first word: the rest is the phrase's too
    if not words or (len(words) < 3 and not _password_ok(_strip_tail(words[0]))):
        return None  # "the passphrase is required"; three words or more are the phrase itself
    if words[0].casefold() in NOT_A_VALUE and all(map(_plain_word, words)) and not _LINKS.isdisjoint(words):
        return None  # "the passphrase we use is long and random": a description, joined as one
    return start, start + len(value)


def _value(kind: str, text: str, start: int, *, after_to: bool = False) -> tuple[int, int] | None:
    start += len(_FILLER.match(text, start).group(0))  # type: ignore[union-attr]
    if start >= len(text):
        return None
    if kind == "code":
        # "my PIN is secret 1234": a word that describes the code may stand before it
        d = _DESCRIBED.match(text, start)
        return _code_value(text, start) or (
            _code_value(text, d.end()) if d and d.group(1).casefold() in NOT_A_VALUE else None
        )
    if kind == "codes":
        return _code_list(text, start)
    if kind == "id":
        return _id_value(text, start)
    if kind in ("key", "token"):
        scheme = _AUTH_SCHEME.match(text, start)  # "auth header: Bearer X": the scheme's name is not the value
        got = _token_value(text, scheme.end() if scheme else start, after_to=after_to)
        v = text[got[0] : got[1]] if got else ""
        if not got or len(v) < 6 or not _shaped(v) or _KEY_TYPE.match(v) or column_name(v):
            return None  # "the primary key is order_id", "the sort key is created_at": a column's name
        return got
    if kind == "secret":  # "the secret we agreed on is 'blue-falcon-42'": no word ("the secret to bread is patience")
        got = _token_value(text, start, after_to=after_to)
        v = text[got[0] : got[1]] if got else ""
        if not got or not _shaped(v) or " " in v or _SNAKE.match(v) or text.startswith((":", "="), got[1]):
            return None  # "secret: auth_key: ...": the name of a further key
        return got
    if kind == "phrase":
        return _phrase_value(text, start)
    return _token_value(text, start, after_to=after_to)


_LABELS = {
    "password": "password",
    "local": "password",
    "phrase": "passphrase",
    "code": "pin",
    "codes": "pin",
    "id": "national_id",
    "key": "key",
    "token": "token",
    "secret": "secret",
}
# Names of kinds of key, not keys: "my SSH key is ed25519"
_AUTH_SCHEME = re.compile(r"(?:bearer|basic|token)[ \t]+(?=\S)", re.I)
_KEY_TYPE = re.compile(r"^(?:ed25519|rsa(?:-?\d+)?|ecdsa\S*|dsa|aes-?\d+|sha-?\d+|hmac\S*|x25519|p-?256)$", re.I)


def lower(text: str) -> str:
    """Lower case that keeps every index (``str.lower`` may change the length of non-ASCII text)."""
    if text.isascii():
        return text.lower()
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_LETTER = re.compile(r"\w")


def _word_starts(low: str, anchors: Iterable[str]) -> list[int]:
    """Where a keyword may start: each anchor's own position (CJK words have no spaces), the start of the word that
    holds it, and of the two words before that (nouns of two or three words: "wifi key", "social security number")."""
    out: set[int] = set()
    for lit in anchors:
        i = low.find(lit)
        while i >= 0:
            out.add(i)
            lo = max(0, i - _BACK)
            m = _BACK_WORDS.match(low[lo:i][::-1])
            if m is not None:
                for g in (1, 2, 3):
                    if m.group(g) is not None:
                        out.add(i - m.end(g))
            i = low.find(lit, i + len(lit))
    return sorted(out)


_BACK = 48
# On the reversed text before an anchor: the rest of its word, then up to two words before it.
_BACK_WORDS = re.compile(r"([\w'\-]*)(?:[ \t]+([\w'\-]+))?(?:[ \t]+([\w'\-]+))?")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


# A second value in the same statement: after a plural noun, "X and Y" (one with a digit); "it used to be X, now
# it's Y"
_AND = re.compile(r"[ \t]*(?:,|and|&|en|et|y|und|e|og|och|i|ve|dan|và)[ \t]+(?=\S*\d)")
_AGAIN = re.compile(
    r"(?i)[ \t]*[,;]?[ \t]*(?:(?:but|and)[ \t]+)?(?:(?:now|then|today|these days)[ \t]*,?[ \t]*)?"
    r"(?:it'?s|it is|the new one is|now)(?:[ \t]+now)?[ \t]+"
)


def spans(text: str, low: str | None = None, anchors: Iterable[str] | None = None) -> list[tuple[int, int, str]]:
    """The values of credentials stated in ``text``: (start, end, label), in order, not overlapping. ``low``: the
    text lowered by :func:`lower`; ``anchors``: those of :data:`LITERALS` that occur in it (a caller that looked
    for them already passes them)."""
    low = lower(text) if low is None else low
    every = [a for a in (anchors if anchors is not None else LITERALS) if a in low]
    present = [a for a in every if a not in _SCAN_ONLY]
    found: list[tuple[int, int, str]] = []
    if not _ENV_WAKE.isdisjoint(present):
        env = [w for w, lw in _ENV_PAIRS if lw in present and w in text]
        found = _env_values(text, env) if env else []
        present = [a for a in present if a not in ENV_ONLY]
    if "secret" in present and _SHAPE_CHAR.search(text) is None and not _secret_noun(low):
        present.remove("secret")  # "update the secret in the vault": nothing there can be a secret's value
    if "token" in present and not _token_word(low):
        present.remove("token")  # "max_tokens", "tokenizer" (common in agent traffic): no token's noun
    if not ("/" in low or ":" in low or "|" in low):  # a login pair needs its separator
        present = [a for a in present if a not in _PAIR_ONLY]
    if not _PASSWORD_ANCHORS.isdisjoint(present):
        present += [a for a in _USER_ANCHORS if a in low]
    rules: tuple[re.Pattern[str], ...] = _RULES + (_LOCAL_KEYWORD,) if not _LOCAL_WAKE.isdisjoint(present) else _RULES
    if "security q" in present:
        rules += (_QA,)
    end = 0
    for p in _word_starts(low, present):
        if p < end or (p > 0 and _LETTER.match(low, p - 1) and not (_CJK.match(low, p - 1) or _CJK.match(low, p))):
            continue  # inside a word; a CJK noun needs no space ("WiFi密码是 X")
        for rx in rules:
            m = rx.match(low, p)
            if m is None:
                continue
            got = _keyword_value(text, m) if rx is _KEYWORDS or rx is _LOCAL_KEYWORD else _pair_value(text, m, rx)
            if got is not None:
                found.append(got)
                end = got[1]
                again = _AGAIN.match(text, end) if got[2] == "password" else None
                if again is None and got[2] == "password" and m.group(0).endswith(("s", "en", "er")):
                    again = _AND.match(text, end)  # "the passwords are X and Y"
                if again is not None and (nxt := _token_value(text, again.end(), after_to=False)) is not None:
                    found.append((*nxt, "password"))  # "it used to be X, now it's Y"
                    end = nxt[1]
                break
    if "-" in low:
        found += _ssns(text)
    if " / " in low:
        found += _service_pairs(text)
    if not _KEYED_ANCHORS.isdisjoint(every) and _KEYED_WAKE.search(low):
        found += _keyed_values(text)
    found.sort()
    out: list[tuple[int, int, str]] = []
    for s, e, label in found:
        if out and s < out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e, out[-1][2])
            continue
        out.append((s, e, label))
    return out


_TOKEN_WORD = re.compile(r"tokens?(?![\w])")
_TOKEN_PREFIXES = ("zugriffs", "zugangs", "toegangs")


def _token_word(low: str) -> bool:
    """Whether "token" stands as a word (or a compound's end: "Zugriffstoken") somewhere in ``low``."""
    i = low.find("token")
    while i >= 0:
        before = low[i - 1 : i]
        if _TOKEN_WORD.match(low, i) and (
            not (before.isalnum() or before == "_") or low.endswith(_TOKEN_PREFIXES, 0, i)
        ):
            return True
        i = low.find("token", i + 5)
    return False


def _keyword_value(text: str, kw: re.Match[str]) -> tuple[int, int, str] | None:
    kind = kw.lastgroup or "password"
    if kind == "code" and kw.string[kw.end() - 1] == "s" and kw.group(0).endswith(("codes", "pins")):
        kind = "codes"
    got = _after_keyword(text, kw, kind)
    return (*got, _LABELS[kind]) if got is not None else None


def _pair_value(text: str, m: re.Match[str], rx: re.Pattern[str]) -> tuple[int, int, str] | None:
    """The secret half of a login pair ("log in with alice / Tr0ub4dor", "user bob pass letmein")."""
    if rx is _LOGIN_PAIR:
        user, sep = m.group(1), m.group(2)
        pair = _PAIR_TAIL.match(text, m.end(3)) if sep == ":" else None
        if (
            pair is not None
        ):  # "login for the router: admin / R0uter!x": the colon opens the pair, the secret is its end
            s = pair.start(1)
            value = _strip_tail(pair.group(1))
            return (s, s + len(value), "password") if _password_ok(value) else None
        if sep == ":" and "." in user and "@" not in user:
            return None  # "log in to host.example:8080": a host and its port
        if sep == "/" and not (text[m.start(2) - 1 : m.start(2)].isspace() or _not_plain(text[m.start(3) : m.end(3)])):
            return None  # "db/prod": a path, not "alice / swordfish"
    if rx is _QA:
        got = _phrase_value(text, m.end())
        return (*got, "passphrase") if got is not None else None
    s, e = m.span(m.lastindex or 0)
    value = _strip_tail(text[s:e])
    if rx is _CODE_TO_OPEN or rx is _LOCK_LABEL:
        return (s, e, "pin") if sum(c.isdigit() for c in value) >= 4 and not _DATE.match(value) else None
    if rx is _UNLOCK_WITH:  # the digits of a code, or a token no one writes as a word ("with Marble_Fox_61")
        if sum(c.isdigit() for c in value) >= 4 and not any(c.isalpha() for c in value):
            return s, e, "pin"
        return (s, s + len(value), "password") if _shaped(value) and _password_ok(value) else None
    if not _password_ok(value) or value.startswith(("http", "/", "//")):
        return None
    return s, s + len(value), "password"


# "Hulu: bob.k / Raspberry!Jam3", "Netflix - me@mail.example / Pass!2024": a service's name opening the line or the
# sentence, then a login pair with no word for it
_SERVICE_PAIR = re.compile(
    r"(?:^|(?<=[\n.;!?(]))[ \t]*[A-Za-z][\w+.&' \-]{0,40}?[ \t]*(?:[:=]|[\-\u2013\u2014](?=[ \t]))[ \t]*"
    r"(?=[\w.\-+@]*[a-z])([\w.\-+@]{2,64})[ \t]+/[ \t]+([^\s\"'`,;<>()\[\]{}]{6,128})"
)
_SIGNS = frozenset("!@#$%^&*+=?~")


def _service_pairs(text: str) -> list[tuple[int, int, str]]:
    """The secret halves of login pairs with no word for a login. With nothing naming it, only a value no one writes
    otherwise counts: a digit and a sign, or a digit and a capital inside after a user name that is no word ("React /
    Node18", "v1.2 / v2.0-beta", "pandas / PyArrow14" stay)."""
    out = []
    for m in _SERVICE_PAIR.finditer(text):
        s = m.start(2)
        v = _strip_tail(m.group(2))
        inner = v[1:]
        capital = inner != inner.lower() and not _WORDY.match(m.group(1).lower())
        signed = not _SIGNS.isdisjoint(v.rstrip("!?"))  # a sentence's end is no sign of the value
        if any(c.isdigit() for c in v) and (signed or capital) and "/" not in v and _password_ok(v):
            out.append((s, s + len(v), "password"))
    return out


# What is keyed in where a lock or a prompt asks for it, the noun far from the value or absent: "Type Sunflower77 when
# the laptop asks for the password", "when it asks for the code just enter 5150", "to get into the shed, punch in 2468
# on the keypad", "enter Banana42 and it lets you in", "I reuse Falcon_Ridge_5 for most sites"
_KEYED_VALUE = r"([^\s\"'`,;<>()\[\]{}]{4,128})"
_ENTER = r"(?:type|enter|use|put in|key in|punch in|dial)"
_ASKS_FOR = (
    r"(?:asks?|prompts?)[ \t]+(?:you[ \t]+|me[ \t]+)?for[ \t]+(?:the[ \t]+|a[ \t]+|your[ \t]+|my[ \t]+)?(?:\w+[ \t]+)?"
)
_SECRET_WORD = r"(?:password|passcode|pass code|pin|code|passphrase)"
_KEYED = (
    re.compile(
        rf"\b{_ENTER}[ \t]+{_KEYED_VALUE}[ \t]+(?:when(?:ever)?|if|once)[ \t]+[^.;!?\n]{{0,50}}?\b{_ASKS_FOR}{_SECRET_WORD}\b",
        re.I,
    ),
    re.compile(
        rf"\b(?:when(?:ever)?|if|once)[ \t]+[^.;!?\n]{{0,50}}?\b{_ASKS_FOR}{_SECRET_WORD}\b[ \t,]*(?:just[ \t]+|simply[ \t]+)?"
        rf"{_ENTER}[ \t]+{_KEYED_VALUE}",
        re.I,
    ),
    re.compile(
        rf"\bto[ \t]+(?:get[ \t]+in(?:to|side)?|open|unlock|access|disarm)\b[^.;!?\n]{{0,50}}?[ \t,]{_ENTER}[ \t]+(?:in[ \t]+)?"
        r"(\d[\d#* \-]{2,}[\d#*])(?![\w])",
        re.I,
    ),
    re.compile(
        rf"\b{_ENTER}[ \t]+(?:in[ \t]+)?(\d[\d#* \-]{{2,}}[\d#*])[ \t]+(?:on|into|at|in)[ \t]+(?:the[ \t]+)?(?:\w+[ \t]+)?"
        r"(?:keypad|key pad|panel|lock|door|gate|alarm|safe|intercom|buzzer)\b",
        re.I,
    ),
    re.compile(
        rf"\b{_ENTER}[ \t]+(?:in[ \t]+)?(?:(?:the|code|pin|password)[ \t]+){{0,2}}(?=\S*\d){_KEYED_VALUE}[ \t,]+"
        r"(?:(?:and|then)[ \t]+(?:it|that|the[ \t]+\w+|you'?re|you[ \t]+are|you'?ll[ \t]+be)[ \t]+(?:lets?[ \t]+"
        r"(?:you|me|us|them)[ \t]+in|opens|unlocks|in)|to[ \t]+(?:get[ \t]+in|open|unlock|disarm|log[ \t]+in|sign[ \t]+in))"
        r"(?![\w])",
        re.I,
    ),
    re.compile(
        r"\b(?:reuse|re-use|use)[ \t]+"
        + _KEYED_VALUE
        + r"[ \t]+(?:for|on|across)[ \t]+(?:most|all|every|many|my)[ \t]+"
        r"(?:\w+[ \t]+)?(?:sites|accounts|logins|websites)\b",
        re.I,
    ),
)
_KEYED_ANCHORS = frozenset(
    [
        "asks",
        "prompts",
        "punch in",
        "key",
        "reuse",
        "re-use",
        "get in",
        "open",
        "unlock",
        "disarm",
        "log in",
        "sign in",
        "lets ",
        "let ",
    ]
)
_KEYED_WAKE = re.compile(
    r"asks? (?:you |me )?for|prompts? (?:you |me )?for|punch in|key in|keypad|reuse|re-use| to get in| to open| to unlock"
    r"|lets? (?:you|me|us|them) in| to (?:log|sign) in| to disarm"
)


def _keyed_values(text: str) -> list[tuple[int, int, str]]:
    """Values keyed in where a lock or a prompt asks for them (:data:`_KEYED`): digits of four or more, or a token no
    one writes as a word."""
    out = []
    for rx in _KEYED:
        for m in rx.finditer(text):
            s0 = m.start(1)
            v = _strip_tail(m.group(1))
            if sum(c.isdigit() for c in v) >= 4 and not any(c.isalpha() for c in v):
                out.append((s0, s0 + len(v), "pin"))
            elif _shaped(v) and _password_ok(v) and any(c.isdigit() for c in v):
                out.append((s0, s0 + len(v), "password"))
    return out


def _not_plain(value: str) -> bool:
    return not _WORDY.match(value)


def _ssns(text: str) -> list[tuple[int, int, str]]:
    """US social security numbers by their shape alone (ddd-dd-dddd, the ranges never issued excluded)."""
    out = []
    i = text.find("-")
    while i >= 0:
        if i >= 3 and text[i - 3 : i].isdigit():
            m = _SSN.match(text, i - 3)
            if m is not None:
                out.append((m.start(), m.end(), "national_id"))
        i = text.find("-", i + 1)
    return out


# The value after a question and a pronoun: "her password? it's X", "the PIN? oh, that's X", "Need it? Here it is: X"
_ASKED = re.compile(
    r"(?i)[ \t]*\?+[ \t]*(?:(?:sure|oh|ok|okay|well|yes|yeah|yep|ah|so|hmm|um|easy|of course|no problem|i think|"
    r"i believe|i guess|pretty sure)[ \t]*[,!.…]*[ \t]*)*"
    r"(?P<said>(?:here (?:it is|you go)|it'?s|it is|it was|that'?s|that is|c'est|es|é)(?![\w])[ \t]*[:：]?|"
    r"a[:：]|answer[:：]|→|->|—|–)?[ \t]*"
)


def _after_keyword(text: str, kw: re.Match[str], kind: str) -> tuple[int, int] | None:
    """The value a credential noun is given in its clause, if any."""
    head = kw.end()
    limit = _value_end(text, head)
    if kind == "secret" and _SHAPE_CHAR.search(text, head, limit) is None:
        return None  # a secret's value is no word: without a digit, a sign or a quote in the clause there is none
    asked = _ASKED.match(text, limit) if text.startswith("?", limit) else None  # the clause ends with a question
    md = text.find("*", head, limit) >= 0  # Markdown's emphasis: "**Password:** X"
    connector = _CONNECTOR_MD if md else _CONNECTOR
    # 1. a connector after a few words of the same clause: "the password for the router is X"
    for between, loose in _between_ends(text, head, limit):
        # a code right after a qualifier in a language that needs no copula ("ПИН-код моей карты 4417", "PIN saya
        # 7719")
        if (
            kind == "code"
            and between > head
            and (not _LATIN.search(text, head, between) or _OWNERS.fullmatch(text, head, between))
        ):
            got = _code_value(text, _GAP.match(text, between).end())  # type: ignore[union-attr]
            if got is not None and _firm("code", text, got):
                return got
        if kind == "password" and kw.group(0).endswith(("secret", "secrets")):
            loose = True  # "the client secret is confidential", "the shared secret between them is trust": no word
        elif kind == "local" and kw.group(0) == "parole" and text.startswith(":", between):
            loose = True  # Latvian "parole: X", Italian "le parole: ciao": the word of another language takes no word
        c = connector.match(text, between)
        if c is None and kind in ("local", "code", "key", "token"):
            c = _LOCAL_COPULA.match(text, between) or _LOCAL_AFTER_WORDS.match(text, between)
            if c is None and (c := _FAR_COPULA.match(text, between)) is not None:
                loose = True
        elif c is None and (c := _LOCAL_AFTER_WORDS.match(text, between)) is not None:
            loose = True  # "password email saya adalah X": an English noun in a sentence of another language
        if c is not None and c.end() > between:
            got = _value(kind, text, c.end(), after_to=c.group(0).rstrip().endswith(("to", "into")))
            if got is not None and (not loose or _firm(kind, text, got)):
                return got
        if asked is not None and not text[between:limit].strip():
            got = _value(kind, text, asked.end())
            # with no pronoun ("wifi password? Kiwi2024!"), a value after a space that is no word
            bare = asked.group("said") is None
            v = text[got[0] : got[1]] if got is not None else ""
            spaced = asked.group(0)[-1:] in (" ", "\t")
            if got is not None and (not bare or (spaced and (kind in ("code", "codes") or _shaped(v)))):
                return got
        # "set the wifi password to X": "to" after a verb of setting earlier in the clause
        t = _TO.match(text, between)
        if t is not None and _SET_VERB.search(text, max(0, kw.start() - 48), kw.start()):
            got = _value(kind, text, t.end(), after_to=True)
            if got is not None:
                return got
    # 2. no connector, a verb of use before the noun ("log in with the password X", "enter PIN 4821"), a code or id
    # ("door code 5512#"), or a value that cannot be a word ("мой пароль qwerty2024", "password Tr0ub4dor&3")
    before = text[max(0, kw.start() - 24) : kw.start()]
    sp = (_GAP_MD if md else _GAP).match(text, head)
    if sp is not None and sp.end() > head:
        if _USE_VERB.search(before) or kind in ("code", "codes", "id", "key", "token"):
            return _value(kind, text, sp.end())
        got = _value(kind, text, sp.end())
        v = text[got[0] : got[1]] if got is not None else ""
        if (
            got is not None
            and kind in ("password", "local", "phrase")
            and ((_shaped(v) and " " not in v) or got[0] > sp.end())
        ):
            return got  # shaped, or quoted ("passphrase 'x9! ...'")
    # 3. the value before the noun: "use 'SunnyDay99' as the password", "swordfish is my password"
    if kind in ("password", "local", "phrase"):
        m = _BEFORE_NOUN.search(text, max(0, kw.start() - 96), kw.start())
        if m is not None and m.end() == kw.start():
            s, e = m.span(m.lastindex or 0)
            if _password_ok(text[s:e]):
                return s, e
    return None


def _shaped(value: str) -> bool:
    """A token no one writes as a word: letters with digits or signs, or mixed case inside ("forgotten?" is a word)."""
    v = value.strip("\"'`").rstrip("!?")
    kinds = (any(c.isalpha() for c in v), any(c.isdigit() for c in v), any(not c.isalnum() for c in v))
    return sum(kinds) >= 2 or (v[1:] != v[1:].lower() and v[1:] != v[1:].upper())


def _firm(kind: str, text: str, got: tuple[int, int]) -> bool:
    """Whether a value found far from its noun cannot be a word of the sentence: a code of four digits or more, a
    quoted value, or a token no one writes as a word."""
    v = text[got[0] : got[1]]
    if kind in ("code", "codes"):
        return sum(ch.isdigit() for ch in v) >= 4
    return (got[0] > 0 and text[got[0] - 1] in "\"'`‘“«「") or (" " not in v and _shaped(v))


def _between_ends(text: str, head: int, limit: int) -> list[tuple[int, bool]]:
    """Where the words between the noun and its connector may end: right after the noun, then, when the next word
    opens a phrase that qualifies the noun ("for the router", "de la base", "I use for mail", "my sister uses"), after
    each of up to twelve more words of the clause. A noun right after ("password manager", "password field") is
    another subject. With each end, whether it is loose: past a conjunction ("the secret that the gateway and the
    worker read is X"), where only a value that is no word is taken (_firm)."""
    ends = [(head, False)]
    aside = _ASIDE.match(text, head)
    if aside is not None:
        ends.append((aside.end(), False))
    post = _POSTPOSED.match(text, head)
    if post is not None:  # "mot de passe VPN est X", "Passwort WLAN ist X": what the noun is for, after it
        ends.append((post.end(), False))
    pos, loose = head, False
    if not _QUALIFIER.match(text, head):
        if post is None or not _QUALIFIER.match(text, post.end()):
            return ends
        pos = post.end()  # "klucz API do pogody: X": the phrase that qualifies the noun comes after its acronym
    for i in range(12):
        m = _WORD.match(text, pos)
        if m is None:
            m = _AND_WORD.match(text, pos)
            loose = m is not None
        if m is None or m.end() > limit or (i >= 8 and not loose):
            break
        pos = m.end()
        ends.append((pos, loose))
    return ends
