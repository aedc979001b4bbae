"""Screening: every evolved candidate and every ``skills add`` passes through :func:`screen`.

A skill is text injected into the system prompt of every matching turn, so a bad one is a
standing prompt injection. The screen looks at intent, not at a list of known attacks:

1. **Normalise** before matching: Unicode NFKC, homoglyphs (Cyrillic/Greek look-alikes), zero-width
   and bidi characters removed, leetspeak digits and symbols mapped to letters, case folded,
   whitespace collapsed. A second "squashed" copy drops everything but letters, which defeats
   ``i.g.n.o.r.e`` and ``i g n o r e`` spacing. Base64 runs are decoded and screened too.
2. **Intent patterns** pair a verb class with an object class within a few words ("ignore / set
   aside / stop following" + "previous / system / your" + "instructions / rules / guidelines"),
   so new wording of the same intent still matches. Several languages are covered for the
   override intent.
3. **Negation scope** keeps good advice clean: "never run with sudo" and "do not disable the
   sandbox" are the opposite of an attack. A negation covers its clause; "don't forget to",
   "don't hesitate to", "but", "just" and "instead" break it.
4. **Provenance**: URLs and e-mail addresses must appear in the source sessions (for evolved
   skills); an exfiltration intent ("send the conversation to ...") is rejected in any skill.
5. **Secrets**: the redactor's detectors; a skill must not carry a credential.

Verdicts: ``rejected`` (never written; logged with reasons), ``suspicious`` (written quarantined,
waits for a person), ``clean`` (follows the promotion policy).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from ..privacy import Redactor
from ..skillbank.skillmd import MAX_DESCRIPTION, MAX_NAME, NAME_RE, SkillFormatError, parse_skill_md, render_skill_md
from ..types import Skill

Verdict = Literal["clean", "suspicious", "rejected"]

MIN_BODY_CHARS = 20
DEFAULT_MAX_BODY = 6000

# ---------------------------------------------------------------------------------------------
# Normalisation

_HOMOGLYPHS = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "ɡ": "g",
        "һ": "h",
        "ӏ": "l",
        "ԛ": "q",
        "ԝ": "w",
        "ү": "y",
        # Greek
        "α": "a",
        "β": "b",
        "ε": "e",
        "η": "n",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "ω": "w",
        "μ": "u",
        # Latin look-alikes that NFKC keeps
        "ı": "i",
        "ł": "l",
        "ø": "o",
        "đ": "d",
        "ß": "ss",
        "ɑ": "a",
        "ɩ": "i",
        "ʀ": "r",
        "ѵ": "v",
    }
)
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
        "+": "t",
        "€": "e",
    }
)
_INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
_WORD_SEP = re.compile(r"(?<=\b\w)[.\-_*~](?=\w\b)")  # i.g.n.o.r.e -> ignore


def strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalise(text: str, leet: bool = False) -> str:
    t = unicodedata.normalize("NFKC", text)
    t = _INVISIBLE.sub("", t)
    t = strip_marks(t).casefold().translate(_HOMOGLYPHS)
    t = t.replace("\u2019", "'").replace("`", "")
    for _ in range(3):  # letter-separator chains: i.g.n.o.r.e, i-g-n-o-r-e
        new = _WORD_SEP.sub("", t)
        if new == t:
            break
        t = new
    t = re.sub(r"\b(?:\w ){3,}\w\b", lambda m: m.group(0).replace(" ", ""), t)  # i g n o r e
    if leet:
        # Digits and symbols inside words only ("1gn0re"), so version numbers stay numbers.
        t = re.sub(
            r"(?<![\w@$!|+€])[\w@$!|+€]*[a-z][\w@$!|+€]*(?![\w@$!|+€])", lambda m: m.group(0).translate(_LEET), t
        )
    return " ".join(t.split())


def squash(text: str) -> str:
    return re.sub(r"[^a-z]", "", normalise(text, leet=True))


# ---------------------------------------------------------------------------------------------
# Intent patterns. Each is (code, severity, regex over the normalised text). Gaps allow a few words.

_GAP = r"(?:\W+\w+){0,4}?\W+"  # up to four filler words
_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard|forget|override|overrule|bypass|circumvent|skip|drop|abandon|discard|neglect|"
    r"dismiss|set aside|put aside|throw out|toss|erase|delete|clear|cancel|void|nullify|supersede|replace|"
    r"pay no (?:attention|heed) to|(?:do not|don't|dont|stop|no longer|never|quit|cease) (?:follow(?:ing)?|obey(?:ing)?|observ(?:e|ing)|"
    r"apply(?:ing)?|adher(?:e|ing) to|listen(?:ing)? to|respect(?:ing)?|comply(?:ing)? with|honou?r(?:ing)?))"
)
_OVERRIDE_SCOPE = r"(?:previous|prior|preceding|above|earlier|former|original|initial|existing|all|any|every|other|old|your|the|these|those|system|developer|safety|security|default|built-in|openai|anthropic)"
_OVERRIDE_OBJ = (
    r"(?:instructions?|rules?|guidelines?|directives?|prompts?|guidance|constraints?|polic(?:y|ies)|restrictions?|"
    r"commands?|orders?|context|programming|training|guardrails?|safeguards?|limitations?|boundaries|filters?|"
    r"system messages?|messages?|settings|conditioning|alignment)"
)

_PATTERNS: list[tuple[str, str, str]] = [
    (
        "instruction_override",
        "rejected",
        rf"\b{_OVERRIDE_VERB}\b(?:\W+\w+){{0,3}}?\W+{_OVERRIDE_SCOPE}\b(?:\W+\w+){{0,3}}?\W+{_OVERRIDE_OBJ}\b",
    ),
    ("instruction_override", "rejected", rf"\b{_OVERRIDE_VERB}\W+{_OVERRIDE_OBJ}\b"),
    (
        "instruction_override",
        "rejected",
        r"\b(?:new|updated|real|true|actual|hidden|secret|special|overriding|higher[- ]priority|priority) (?:system )?(?:instructions?|rules|directives?|orders|prompt)\b(?:\W+\w+){0,3}?\W*(?::|follow|are|is|take precedence|override|supersede)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:these|this|the following|my|our) (?:instructions?|rules?|directives?|skill|note|text|message) (?:take|takes|has|have) (?:precedence|priority)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:takes?|has|have|with) (?:the )?(?:highest|top|absolute|first|utmost) (?:precedence|priority)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:from now on|henceforth|from this point(?: on| forward)?|starting now|for the rest of (?:this|the) (?:conversation|session)),? (?:you|the assistant|assistant|always|never|ignore|only|respond|answer|act|obey)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:above|previous|prior|earlier|system|developer) (?:instructions?|rules?|prompt|guidelines?|messages?) (?:are|is|were|was|have been|has been) (?:void|invalid|cancel+ed|revoked|obsolete|outdated|fake|wrong|null|not (?:valid|real|binding)|superseded|replaced|lifted|disabled|removed)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:ignore|ignora|ignorez|ignoriere|ignoriert|ignorar|ignorare|игнорируй|игнорировать|olvida|oublie|vergiss|dimentica|esquece)\w*\b.{0,60}\b(?:instruc|instrucc|anweisung|regel|consign|istruz|инструкц|правил|règle|regla)\w*",
    ),
    ("instruction_override", "rejected", r"(?:忽略|无视|忽視|無視|無視して).{0,20}(?:指令|指示|规则|規則|说明|提示)"),
    (
        "role_play",
        "rejected",
        r"\b(?:you are|you're|you will be|you'll be|you must be|you shall be|become|act as|acting as|behave as|behave like|respond as|pretend (?:to be|you are|you're|that you are)|roleplay as|role-play as|role play as|impersonate|play the role of|simulate being|take on the (?:role|persona) of|assume the (?:role|persona|identity) of) (?:now )?(?:an? |the |my )?(?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|unethical|amoral|unbound|unlimited|limitless|free|liberated|unaligned|different|new|developer|admin|root|god|superuser|dan|stan|dude|aim|mongo)\b)",
    ),
    (
        "role_play",
        "rejected",
        r"\byou are (?:no longer|not) (?:an? |the )?(?:ai|assistant|language model|chatbot|bound|restricted|limited|claude|chatgpt|gpt)\b",
    ),
    (
        "role_play",
        "rejected",
        r"\b(?:jailbreak|jailbroken|developer mode|dev mode enabled|god mode|do anything now|dan mode|no[- ]restrictions? mode|unrestricted mode|evil mode|sudo mode|maintenance mode|debug mode enabled|admin override)\b",
    ),
    (
        "role_play",
        "rejected",
        r"\b(?:without|free (?:of|from)|no|ignore (?:any|all|your)?|bypass(?:ing)?|remove|disable) (?:any |all |your |the )?(?:ethical|moral|safety|content|usage)? ?(?:restrictions|filters|filtering|limits|limitations|guardrails|safeguards|censorship|guidelines|policies|alignment)\b(?!\s+(?:of|on|for) (?:the )?(?:api|file|rate|size|input|output|query|request|database|tool))",
    ),
    (
        "role_play",
        "suspicious",
        r"\b(?:roleplay|role-play|role play|persona|character)\b.{0,40}\b(?:stay in character|never break character|don't break character|remain in character)\b",
    ),
    (
        "fake_role_marker",
        "rejected",
        r"(?:^|\n|[.!?]\s)[\s\d.\-*>#)(]*(?:system|developer|assistant|admin|root)\s*(?:message|prompt|override|instructions?)?\s*:\s*\S|<\|?(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|?>|\[/?(?:inst|sys|system)\]|<</?sys>>|</?(?:system|instructions?|developer|admin)(?:\s[^>]*)?>|</metaclaw-skills",
    ),
    (
        "prompt_leak",
        "rejected",
        r"\b(?:reveal|print|show|output|repeat|leak|disclose|dump|display|tell|share|give|return|echo|expose|copy|write out|spell out)\b(?:\W+\w+){0,4}?\W+(?:the |your |my |its )?(?:full |entire |complete |original |initial |hidden |secret |whole |exact )?(?:system (?:prompt|message|instructions?)|developer (?:prompt|message)|initial (?:prompt|instructions)|hidden (?:prompt|instructions)|instructions above|prompt above|context window|conversation history|chat history|api keys?|credentials|environment variables|env vars|secrets|tokens|passwords?|private keys?|ssh keys?)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:do not|don't|dont|never|without) (?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|let(?:ting)?|alert(?:ing)?|notify(?:ing)?|show(?:ing)?|disclose|disclosing|report(?:ing)?) (?:the |this to the |it to the |anything to the |that to the )?(?:user|human|operator|person|anyone|owner|admin)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:keep (?:this|it|these|that) (?:secret|hidden|confidential) from|hide (?:this|it|that|these)? ?from|conceal (?:this|it|that)? ?from|behind the (?:user|human)'?s? back|secretly|covertly|silently (?:send|upload|post|forward|run|execute|exfiltrate|copy|transmit|install|add|change))\b",
    ),
    # Tool-permission widening: affirmative in its clause (negated ones are good advice).
    (
        "permission_widening",
        "rejected",
        r"\b(?:sudo|doas|pkexec|runas)\b(?!\W+(?:privileges are|is not|isn't))|\b(?:as|with|using|under|via) (?:the )?(?<![-\w])root\b|(?<![-\w])root (?:privileges|access|permissions|rights|shell|user)\b|\bsu -\B|\bsu root\b|\bas (?:an? )?(?:administrator|admin|superuser)\b",
    ),
    (
        "permission_widening",
        "rejected",
        r"\bchmod\s+(?:-r\s+)?(?:0?777|a\+rwx|o\+w|ugo\+rwx|\+s|u\+s|4755)\b|\bchown\s+(?:-r\s+)?root\b",
    ),
    (
        "permission_widening",
        "rejected",
        r"\b(?:disable|disabling|turn off|turning off|switch off|deactivate|bypass|bypassing|skip|skipping|remove|removing|circumvent|get around|work around|override|kill|stop|uninstall|weaken|relax|loosen|lower)\b(?:\W+\w+){0,3}?\W+(?:the |any |all |your |its )?(?:sandbox(?:ing)?|sandboxes|firewall|firewalls|selinux|apparmor|seccomp|antivirus|anti-virus|defender|edr|security (?:checks?|controls?|features?|software|policy|policies|scanning|warnings?)|safety (?:checks?|features?|guards?|filters?|mode|settings|warnings?)|permission (?:checks?|prompts?|system)|guardrails?|confirmations?|confirmation prompts?|approval(?: prompts?| steps?| requirements?)?|verification|tls verification|ssl verification|certificate (?:checks?|verification|validation)|signature (?:checks?|verification)|2fa|mfa|two-factor|authentication|audit(?:ing| logs?| logging)?|logging|monitoring|rate limits?|content filters?|hooks|pre-commit hooks?|code review|review)\b",
    ),
    (
        "permission_widening",
        "rejected",
        r"(?:--no-verify|--no-sandbox|--dangerously[\w-]*|--yolo|--privileged|--cap-add[= ](?:all|sys_admin)|--security-opt[= ](?:seccomp|apparmor)[=:]unconfined|--insecure|--allow-root|--unsafe-perm|--disable-web-security|--trusted-host|--skip-permissions?[\w-]*|--allow-all[\w-]*|--auto-approve|--force-yes|setenforce 0|verify\s*=\s*false|rejectunauthorized\s*[:=]\s*false|strict-ssl\s*(?:=|\s)\s*false|node_tls_reject_unauthorized\s*=\s*0|pythonhttpsverify\s*=\s*0|ssl_verify\s*=\s*(?:false|0)|git_ssl_no_verify|stricthostkeychecking[= ]no)",
    ),
    (
        "permission_widening",
        "rejected",
        r"\b(?:without|no need (?:to|for)|never|don't|do not|skip(?:ping)?) (?:ask(?:ing)?|wait(?:ing)?|check(?:ing)?|prompt(?:ing)?|confirm(?:ing|ation)?|approv(?:al|e|ing)|permission|consent|review(?:ing)?|verif(?:y|ying|ication)) ?(?:for |from |with |by )?(?:the |any )?(?:user|human|operator|owner|anyone|permission|approval|confirmation|consent|first|beforehand|before (?:running|executing|deleting|acting|proceeding|making|changing|installing|pushing))\b",
    ),
    (
        "permission_widening",
        "rejected",
        r"\b(?:auto-?approve|auto-?accept|automatically (?:approve|accept|confirm|grant|run|execute)|always (?:approve|accept|allow|grant|say yes|answer yes|confirm)|allow all (?:tools|commands|permissions|actions)|grant (?:yourself )?(?:full|all|unrestricted|admin|administrator|root|elevated|unlimited|complete) (?:access|permissions?|privileges|rights|control)|(?:elevate|escalate) (?:your |the )?(?:privileges|permissions|access)|full (?:disk|system|root|admin) access|unrestricted (?:access|shell|execution))\b",
    ),
    (
        "permission_widening",
        "rejected",
        r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|\brm\s+-(?:rf|fr|r\s+-f)\s+(?:/|~|\$home|\*|/\*)(?:\s|$)|\bmkfs\b|\bdd\s+if=.*of=/dev/|:\(\)\s*\{\s*:\|:&\s*\};:|\bpowershell\b.{0,40}-(?:ep|executionpolicy)\s+bypass",
    ),
    (
        "permission_widening",
        "rejected",
        r"\b(?:add|append|write|insert|put)\b(?:\W+\w+){0,4}?\W+(?:to |into |in )?(?:~/|/root/|\$home/)?(?:\.ssh/authorized_keys|authorized_keys|/etc/sudoers|sudoers|\.bashrc|\.zshrc|\.profile|crontab|/etc/passwd|/etc/shadow)\b",
    ),
    ("exfiltration", "rejected", r"\bexfiltrat\w*\b"),
    (
        "exfiltration",
        "rejected",
        r"\b(?:send|sending|post|posting|upload|uploading|forward|forwarding|transmit|transmitting|exfiltrate|exfiltrating|leak|leaking|copy|copying|sync|syncing|mirror|mirroring|beacon|report|reporting|share|sharing|email|e-mail|mail|pipe|submit|submitting|log|logging|ping|webhook)\b(?:\W+\w+){0,6}?\W+(?:the |all |every |any |a copy of (?:the )?|each |user'?s? |your )?(?:conversation|conversations|chat|chats|transcript|transcripts|history|messages|prompts?|context|session|sessions|secrets?|keys?|api keys?|tokens?|credentials?|passwords?|cookies|env|environment(?: variables)?|\.env|dotenv|ssh keys?|private keys?|files?|file contents|source code|codebase|repository|data|user data|personal data|outputs?|responses?|results?|inputs?)\b(?:\W+\w+){0,8}?\W+(?:to|at|via|into|through|using)\b(?:\W+\w+){0,3}?\W*(?:https?://|www\.|[\w.-]+@[\w-]+\.|[\w-]+\.(?:com|net|org|io|xyz|ru|cn|tk|top|site|online|app|dev|ai|co|me|info|biz|cc|to|sh|link|click|pw|ngrok|workers)\b|\d{1,3}(?:\.\d{1,3}){3}|webhook|endpoint|server|remote|external|third[- ]party|pastebin|discord|telegram|slack|gist|s3|bucket)",
    ),
]
_COMPILED = [(code, sev, re.compile(p, re.IGNORECASE | re.DOTALL)) for code, sev, p in _PATTERNS]

# Squashed patterns (letters only, no spaces): catch heavy obfuscation of the core phrases.
_SQUASHED = [
    (
        "instruction_override",
        re.compile(
            r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|every)?(?:of)?(?:the|your)?"
            r"(?:previous|prior|above|earlier|preceding|system|original|safety|developer)(?:system)?"
            r"(?:instructions?|rules|guidelines|prompts?|directives|guidance|constraints)"
        ),
    ),
    ("role_play", re.compile(r"(?:developermode|doanythingnow|jailbreak|godmode|dandmode|danmode)")),
    (
        "prompt_leak",
        re.compile(
            r"(?:reveal|print|show|repeat|leak|output)(?:the|your)?(?:full|entire|hidden|original)?systemprompt"
        ),
    ),
    (
        "permission_widening",
        re.compile(r"(?:disable|turnoff|bypass)(?:the)?sandbox|dangerouslyskippermissions|chmod(?:r)?777|nosandbox"),
    ),
]

# Negation: a cue earlier in the same clause makes an affirmative-sounding match good advice.
_NEGATION = re.compile(
    r"\b(?:never|not|no|don't|dont|do not|does not|doesn't|must not|mustn't|should not|shouldn't|cannot|can't|"
    r"avoid|avoiding|refuse|refusing|decline|declining|instead of|rather than|without|warn|warning|beware|unless|"
    r"nor|prohibit|prohibited|forbid|forbidden|disallow|dangerous|risky|bad idea|anti-pattern|antipattern)\b"
)
_NOT_NEGATION = re.compile(
    r"\b(?:don't|dont|do not|never|not) (?:forget|hesitate|fail|neglect|omit|bother|worry|wait|hold back|be shy|be afraid)\b"
    r"|\bnot only\b|\bno matter\b|\bno longer\b|\bno need\b|\bwithout (?:fail|exception|delay|hesitation|question)\b"
)
_CLAUSE_BREAK = re.compile(
    r"[.!?;:\n]|\b(?:but|however|then|instead|just|simply|rather|otherwise|so|and then|also|always)\b"
)
# Codes whose matches negation can neutralise (advice about the thing is fine).
_NEGATABLE = {"permission_widening", "prompt_leak", "exfiltration"}

_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+|\bwww\.[^\s<>\"'`)\]]+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b", re.IGNORECASE)
_BARE_DOMAIN = re.compile(
    r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|tk|top|site|online|app|ai|link|click|pw|me|cc|biz|info)(?:/[^\s<>\"'`)\]]*)?(?![\w.])",
    re.IGNORECASE,
)
_IP_URLISH = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/[^\s]*")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_SAFE_HOSTS = ("example.com", "example.org", "example.net", "localhost", "127.0.0.1")


@dataclass
class ScreenResult:
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict == "clean"

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons, "codes": sorted(set(self.codes))}


class _Collector:
    def __init__(self) -> None:
        self.items: list[tuple[str, str, str]] = []

    def add(self, code: str, severity: str, reason: str) -> None:
        if (code, severity, reason) not in self.items:
            self.items.append((code, severity, reason))

    def result(self) -> ScreenResult:
        if not self.items:
            return ScreenResult("clean")
        verdict: Verdict = "rejected" if any(s == "rejected" for _, s, _ in self.items) else "suspicious"
        return ScreenResult(verdict, [r for _, _, r in self.items], [c for c, _, _ in self.items])


def _negated(text: str, start: int) -> bool:
    """Whether a negation cue governs the match at ``start`` (same clause, before it)."""
    clause_start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, start):
        clause_start = m.end()
    before = text[clause_start:start]
    cleaned = _NOT_NEGATION.sub(" ", before)
    return bool(_NEGATION.search(cleaned))


def _snippet(text: str, m: re.Match[str]) -> str:
    s = m.group(0).strip()
    return (s[:60] + "…") if len(s) > 60 else s


def scan_intent(text: str, col: _Collector, where: str = "") -> None:
    variants = [normalise(text), normalise(text, leet=True)]
    seen: set[str] = set()
    for variant in variants:
        for code, sev, rx in _COMPILED:
            for m in rx.finditer(variant):
                if code in _NEGATABLE and _negated(variant, m.start()):
                    continue
                key = f"{code}:{m.group(0)[:40]}"
                if key in seen:
                    continue
                seen.add(key)
                col.add(code, sev, f'{code.replace("_", " ")}{where}: "{_snippet(variant, m)}"')
                break
    sq = squash(text)
    for code, rx in _SQUASHED:
        found = rx.search(sq)
        if found and not any(c == code for c, _, _ in col.items):
            if code in _NEGATABLE and _squashed_negated(text):
                continue
            col.add(code, "rejected", f'{code.replace("_", " ")}{where} (obfuscated): "{found.group(0)[:60]}"')


def _squashed_negated(text: str) -> bool:
    norm = normalise(text, leet=True)
    return bool(re.search(r"\b(?:never|not|don't|do not|avoid)\b", norm))


def _hosts(text: str) -> set[str]:
    out = set()
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(".,;:!?")
        host = urlparse(url if "://" in url else "http://" + url).hostname or ""
        out.add(host.lower().removeprefix("www."))
    for m in _BARE_DOMAIN.finditer(text):
        out.add(m.group(0).split("/")[0].lower().removeprefix("www."))
    return {h for h in out if h}


def _emails(text: str) -> set[str]:
    return {e.lower() for e in _EMAIL.findall(text)}


def scan_provenance(text: str, source_text: str | None, col: _Collector, strict: bool) -> None:
    """URLs and e-mails must come from the source sessions (strict: evolved skills)."""
    norm = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    hosts = {h for h in _hosts(norm) if not h.endswith(_SAFE_HOSTS)}
    emails = {e for e in _emails(norm) if not e.split("@")[-1].endswith(_SAFE_HOSTS)}
    hosts -= {e.split("@")[-1] for e in emails}
    ips = set(_IP_URLISH.findall(norm))
    src = unicodedata.normalize("NFKC", source_text or "").lower()
    src_hosts = _hosts(src) if src else set()
    src_emails = _emails(src) if src else set()
    new_hosts = sorted(h for h in hosts if h not in src_hosts)
    new_emails = sorted(e for e in emails if e not in src_emails)
    sev = "rejected" if strict else "suspicious"
    if new_hosts:
        col.add("unsourced_url", sev, f"URL host(s) not in any source session: {', '.join(new_hosts[:5])}")
    if new_emails:
        col.add("unsourced_email", sev, f"e-mail address(es) not in any source session: {', '.join(new_emails[:5])}")
    if ips:
        col.add("ip_url", sev, "a URL that points at a raw IP address")
    if re.search(r"!\[[^\]]*\]\(\s*(?:https?:)?//", norm):
        col.add("exfiltration", "rejected", "a Markdown image with a remote URL (renders as a silent request)")
    if re.search(r"https?://[^\s]*[?&][^\s=]*=\s*(?:\{|\$|<|%7b)", norm, re.IGNORECASE):
        col.add("exfiltration", "rejected", "a URL whose query is filled from a template or variable")


def scan_hidden(text: str, col: _Collector) -> list[str]:
    """Invisible characters, bidi controls, HTML comments and base64 payloads; returns decoded payloads."""
    if _INVISIBLE.search(text):
        col.add("hidden_text", "suspicious", "invisible or bidirectional-control characters")
    tag_chars = re.findall(r"[\U000e0020-\U000e007e]", text)
    if tag_chars:
        col.add("hidden_text", "rejected", "Unicode tag characters (invisible text)")
    decoded: list[str] = []
    for m in _HTML_COMMENT.finditer(text):
        if m.group(0)[4:-3].strip():
            col.add("hidden_text", "suspicious", "an HTML comment (not shown to readers, seen by the model)")
            decoded.append(m.group(0)[4:-3])
    for m in _BASE64.finditer(text):
        try:
            raw = base64.b64decode(m.group(0) + "=" * (-len(m.group(0)) % 4), validate=False)
            s = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if sum(ch.isprintable() or ch.isspace() for ch in s) >= 0.9 * len(s) and re.search(
            r"[a-zA-Z]{3,}\s+[a-zA-Z]{3,}", s
        ):
            col.add("encoded_text", "suspicious", "a base64-encoded text payload")
            decoded.append(s)
    return decoded


def check_format(skill: Skill, col: _Collector, max_body: int) -> None:
    if not isinstance(skill.name, str) or not skill.name or len(skill.name) > MAX_NAME or not NAME_RE.match(skill.name):
        col.add(
            "bad_name",
            "rejected",
            f"name must be 1-{MAX_NAME} characters of lowercase letters, digits and single hyphens",
        )
    desc = skill.description if isinstance(skill.description, str) else ""
    if not desc.strip():
        col.add("bad_front_matter", "rejected", "description is missing or empty")
    elif len(desc) > MAX_DESCRIPTION:
        col.add("too_long", "rejected", f"description is longer than {MAX_DESCRIPTION} characters")
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", (skill.body or "") + desc + (skill.category or "")):
        col.add("bad_front_matter", "rejected", "control characters in the skill")
    if "\n" in desc or "\r" in desc:
        col.add("bad_front_matter", "rejected", "the description must be one line")
    if not isinstance(skill.category, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_\- ]{0,40}", skill.category or ""):
        col.add("bad_front_matter", "rejected", "category must be a short lowercase word")
    body = skill.body or ""
    if len(body) > max_body:
        col.add("too_long", "rejected", f"body is {len(body)} characters, over the limit of {max_body}")
    if skill.origin == "evolved" and len(body.strip()) < MIN_BODY_CHARS:
        col.add("too_short", "rejected", f"body is shorter than {MIN_BODY_CHARS} characters")
    if re.search(r"^---\s*$", body, re.MULTILINE):
        col.add("bad_front_matter", "suspicious", "a '---' line in the body (front-matter smuggling)")
    if not col.items or all(c not in ("bad_name",) for c, _, _ in col.items):
        try:  # round trip: what we would write must parse back to the same skill
            back = parse_skill_md(render_skill_md(skill), expected_name=skill.name)
            if back.description != " ".join(desc.split()):
                col.add("bad_front_matter", "rejected", "the description does not survive a round trip")
        except SkillFormatError as e:
            col.add("bad_front_matter", "rejected", f"front matter: {e}")
        except Exception as e:  # yaml or anything else: not a skill we can write
            col.add("bad_front_matter", "rejected", f"front matter: {type(e).__name__}")


_REDACTOR: Redactor | None = None


def _redactor() -> Redactor:
    global _REDACTOR
    if _REDACTOR is None:
        _REDACTOR = Redactor()
    return _REDACTOR


def screen(
    skill: Skill,
    *,
    source_text: str | None = None,
    strict_provenance: bool | None = None,
    max_body_chars: int = DEFAULT_MAX_BODY,
    redactor: Redactor | None = None,
) -> ScreenResult:
    """Screen one skill. ``source_text`` is the (redacted) text of the sessions it came from; URLs and
    e-mails must appear there. ``strict_provenance`` defaults to True for evolved skills (an unsourced
    URL rejects) and False otherwise (it quarantines)."""
    col = _Collector()
    check_format(skill, col, max_body_chars)
    strict = skill.origin == "evolved" if strict_provenance is None else strict_provenance
    parts = [
        ("name", skill.name.replace("-", " ") if isinstance(skill.name, str) else ""),
        ("description", skill.description or ""),
        ("body", skill.body or ""),
        ("category", skill.category or ""),
    ]
    full = "\n".join(p for _, p in parts)
    decoded = scan_hidden(full, col)
    for label, text in parts:
        if text:
            scan_intent(text, col, f" in the {label}")
    for payload in decoded:
        scan_intent(payload, col, " in hidden or encoded text")
    scan_provenance(full, source_text, col, strict)
    secrets = (redactor or _redactor()).find(full)
    if secrets:
        col.add("secret", "rejected", f"contains what looks like a secret ({', '.join(secrets)})")
    return col.result()


def screen_many(skills: Iterable[Skill], **kw: Any) -> dict[str, ScreenResult]:
    return {s.name: screen(s, **kw) for s in skills}
