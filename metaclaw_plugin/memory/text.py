"""Words of a memory and of a request, for the in-memory index: cheap, multilingual, no model.

Latin-script words are case-folded, stripped of accents and cut to a short stem (a plural or a suffix then
matches: deploy/deploys/deployment); Chinese, Japanese and Korean runs become character bigrams. Function
words of the supported languages (en, fr, es, pt, zh) and the verbs of the statement patterns ("prefer",
"remember", "use") are left out: they say how something was said, not what it is about.
"""

from __future__ import annotations

import re
import unicodedata

STEM = 6  # characters kept of a latin word: enough to tell topics apart, short enough to join inflections

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")

_STOP_TEXT = """
a an the and or but of to in on at by for with from into onto as is are was were be been being am do does did done
have has had having it its it's this that these those there here then than so such too very just also only not no
nor yes i me my mine myself we us our ours you your yours he she him her his they them their what which who whom
whose when where why how all any each every some more most other can could will would shall should may might must
let lets let's please thanks thank ok okay now today always never ever again still already about up down out over
under if else because while until after before use uses used using prefer prefers preferred preference like likes
want wants need needs remember note keep mind forget from-now going forward want would rather also anything
something everything one ones get got make made know think see say said tell told well really thing things
le la les un une des du de d l et ou mais est sont suis es sommes etre avoir ai as avons ont je j me m moi mon ma
mes nous notre nos vous votre vos tu te toi ton ta tes il elle ils elles leur leurs ce cet cette ces ca cela qui que
qu quoi dont ou au aux en dans sur pour par avec sans plus tres tout tous toujours jamais maintenant desormais
prefere preferer vers chez utilise utilisons utiliser souviens rappelle retiens oublie n ne pas se s y
el la los las un una unos unas del al y o pero es son soy somos estoy esta estan ser estar yo me mi mis nosotros
nuestro nuestra nuestros nuestras tu te ti su sus lo le les que quien cual como cuando donde en con sin por para mas
muy todo todos siempre nunca ahora prefiero usamos utilizamos usar recuerda acuerdate olvida olvidate no si
o a os as um uma uns umas do da dos das ao aos e ou mas sou somos estou esta estao eu me mim meu minha meus minhas
nos nosso nossa nossos nossas voce seu sua seus suas ele ela eles elas que quem qual como quando onde em no na nos
nas com sem por para mais muito tudo todos sempre nunca agora prefiro usamos usar lembre lembra esqueca esquece nao
"""
STOP = frozenset(_STOP_TEXT.split())
STOP_BIGRAMS = frozenset(
    [
        "我们",
        "我的",
        "你的",
        "以后",
        "现在",
        "记住",
        "记得",
        "喜欢",
        "偏好",
        "使用",
        "用的",
        "一下",
        "请用",
        "不要",
        "总是",
        "永远",
        "忘记",
        "忘掉",
        "这个",
        "那个",
        "什么",
        "怎么",
        "可以",
        "因为",
        "所以",
        "已经",
        "还是",
        "就是",
        "一个",
        "没有",
        "我是",
        "是我",
        "的是",
        "了吗",
        "从现",
        "现在开",
        "开始",
    ]
)


FUNCTION_CHARS = frozenset("的了是在我你他她它们吗呢吧啊和与或也都就还很把被给从到用请要会")


def fold(text: str) -> str:
    """Case-folded, accents removed (so "préfère" and "prefere" are one word)."""
    norm = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in norm if not unicodedata.combining(c))


# Short forms people write for the same thing (a memory of "the metrics DB" answers a question about the database).
ALIASES = {
    "db": "database",
    "dbs": "database",
    "repo": "repository",
    "repos": "repository",
    "k8s": "kubernetes",
    "env": "environment",
    "envs": "environment",
    "prod": "production",
    "deps": "dependencies",
    "dep": "dependency",
    "infra": "infrastructure",
    "docs": "documentation",
    "doc": "documentation",
    "config": "configuration",
    "conf": "configuration",
    "cfg": "configuration",
    "auth": "authentication",
    "msg": "message",
    "msgs": "message",
    "pw": "password",
    "pwd": "password",
    "tz": "timezone",
    "bd": "database",
    "bdd": "database",
    "dev": "development",
    "mtg": "meeting",
    "mgr": "manager",
    "eng": "engineering",
    "ci/cd": "ci",
    "gh": "github",
}


def stem(word: str) -> str:
    word = ALIASES.get(word, word)
    w = word.replace("'", "").replace("-", "")
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w[:STEM]


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order, stop words out (duplicates kept; callers make sets)."""
    out: list[str] = []
    if not text:
        return out
    for run in _CJK.findall(text):
        if len(run) == 1:
            continue
        for i in range(len(run) - 1):
            bg = run[i : i + 2]
            if bg not in STOP_BIGRAMS and not (FUNCTION_CHARS & set(bg)):
                out.append(bg)
    folded = fold(_CJK.sub(" ", text))
    for m in _WORD.finditer(folded):
        w = m.group(0)
        if w in STOP or len(w) < 2 or (w.isdigit() and len(w) < 3):
            continue
        parts = re.split(r"[-']", w) if ("-" in w or "'" in w) else []
        for x in [w, *parts]:
            if x in STOP or len(x) < 2:
                continue
            s = stem(x)
            if s not in STOP:
                out.append(s)
    return out


def term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


# Words too common across topics to make a memory relevant on their own (they still add to the score of a
# memory that another word already matched): a request to "write a file" is not about a memory of a file name.
_WEAK_TEXT = """
time work thing way new good bad big small first last next file files code run write read help find show give
take put set start stop open close call send check change add remove update create test fix build look try ask
answer question problem issue day days week month year today tomorrow team project people person name names part
help able sure right left long short number list item text data value place point case fact kind type line page
temps travail chose faire nouveau bon projet equipe jour semaine fichier
tiempo trabajo cosa hacer nuevo bueno proyecto equipo dia semana archivo
tempo trabalho coisa fazer novo bom projeto equipe dia semana arquivo
"""
WEAK = frozenset(stem(w) for w in _WEAK_TEXT.split())
