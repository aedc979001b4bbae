"""Words of a memory and of a request, for the in-memory index: cheap, multilingual, no model.

Latin-script words are case-folded, stripped of accents and cut to a short stem (a plural or a suffix then
matches: deploy/deploys/deployment); Chinese, Japanese and Korean runs become character bigrams. Function
words of the supported languages (en, fr, es, pt, zh) and the verbs of the statement patterns ("prefer",
"remember", "use") are left out: they say how something was said, not what it is about.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TypeVar

from ..text import strip_marks

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
im ive id ill youre dont cant wont isnt doesnt didnt thats whats theres lets ve ll re
few many much during
der die das den dem des ein eine einen einem einer und oder aber ich du er es wir ihr mein meine meinen meinem
meiner dein deine unser unsere unseren ist sind bin bist waren wird werden wie was wer wo wann warum mit von zu
zur zum fur auf aus bei nach uber unter vor nicht kein keine noch schon auch nur sehr bitte jeden jede jedes immer
jetzt heute
one two three four five six seven eight nine ten un deux trois quatre cinq uno dos tres cuatro cinco um dois duas tres
quatro cinco
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
    return strip_marks(text.casefold())


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


# English irregular past forms to their verb ("When did I buy my car?" and "I bought a Kia"): a suffix stemmer
# leaves them apart.
_IRREGULAR_TEXT = """
bought:buy flew:fly went:go gone:go ran:run ate:eat eaten:eat took:take taken:take gave:give given:give got:get
gotten:get made:make saw:see seen:see met:meet sold:sell paid:pay built:build began:begin begun:begin
drove:drive driven:drive wrote:write written:write spoke:speak spoken:speak taught:teach thought:think
brought:bring caught:catch kept:keep lost:lose won:win sent:send spent:spend felt:feel held:hold
told:tell said:say heard:hear chose:choose chosen:choose grew:grow grown:grow knew:know known:know swam:swim
sang:sing sung:sing rode:ride ridden:ride broke:break broken:break fallen:fall forgot:forget
forgotten:forget hid:hide hidden:hide stole:steal stolen:steal threw:throw thrown:throw wore:wear worn:wear
slept:sleep woke:wake woken:wake drank:drink drunk:drink fought:fight sought:seek stood:stand
understood:understand lent:lend bent:bend dug:dig fed:feed led:lead fled:flee struck:strike
"""
IRREGULAR = dict(pair.split(":") for pair in _IRREGULAR_TEXT.split())


_NOT_PLURAL = ("ss", "us", "is", "news")  # four-letter words that are no plural: "boss", "plus", "this", "news"


CACHED_WORD_CHARS = 40  # words up to this long are read once and cached (a user's words repeat); longer ones each time
T = TypeVar("T")


def _short_words_cached(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn`` of one word, each word of up to :data:`CACHED_WORD_CHARS` characters read once (a huge "word" in a
    message is never kept)."""
    cached = functools.lru_cache(maxsize=1 << 16)(fn)
    return lambda word: cached(word) if len(word) <= CACHED_WORD_CHARS else fn(word)


def _stem(word: str) -> str:
    word = ALIASES.get(word, word)
    word = IRREGULAR.get(word, word)
    w = word.replace("'", "").replace("-", "")
    if w.endswith("s") and ((len(w) > 4 and not w.endswith("ss")) or (len(w) == 4 and not w.endswith(_NOT_PLURAL))):
        w = w[:-1]  # "mugs" is "mug", "cats" is "cat"; not "plus", "this", "boss"
    if w.isascii() and ((len(w) > 5 and w.endswith("ing")) or (len(w) > 4 and w.endswith("ed"))):
        w = w[: -3 if w.endswith("ing") else -2]  # shipping/shipped -> ship, hiking/hiked -> hik
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
    if len(w) > 3 and w.endswith("e") and w.isascii():  # hike -> hik, like its inflections
        w = w[:-1]
    return w[:STEM]


stem = _short_words_cached(_stem)


# Who said it, where the text is a transcript line ("Caroline: I went to a support group yesterday"): one or two
# capitalised words, a colon, a space.
_SPEAKER = re.compile(r"^([A-Z][\w'’-]{1,30}(?: [A-Z][\w'’-]{1,30})?):\s+(?=\S)")
# The labels a user's own rules are written under ("Rule: always answer in French", "Style: keep it short"), singular:
# not a speaker's name, and a lead-in the rule extractor drops
_RULE_LABELS_TEXT = (
    "rule preference style format formatting tone language output instruction directive policy guideline default "
    "convention requirement constraint setting hint"
)
RULE_LABELS = _RULE_LABELS_TEXT.split()
_NOT_SPEAKERS = frozenset(
    ["note", "notes", "update", "reminder", "todo", "ps", "question", "answer", "edit", "fyi", "summary", "context"]
    + ["error", "warning", "info", "task", "step", "tip", "example", "important", "btw", "nb", "re", "subject"]
    + RULE_LABELS
    + [f"{label}s" for label in RULE_LABELS]
    + ["remember", "always", "never", "please", "also", "and", "but", "so", "ok", "okay", "yes", "no"]
)


def speaker_of(text: str) -> tuple[str | None, str]:
    """The stem of the name labelling a transcript line, and the label as written ("" when none)."""
    m = _SPEAKER.match(text)
    if m is None or fold(m.group(1)) in _NOT_SPEAKERS:
        return None, ""
    first = fold(m.group(1).split()[0])
    return stem(first), m.group(0)


# Words people use for one thing in either of two ways: the user says "my daughter", the request asks about "my kid";
# a memory of "our biggest customer" answers "who is our largest client?". A word of a group adds the group's term
# ("=kid") to the index terms beside its own, so the same word still counts most. Groups hold words that name the same
# thing in everyday talk (family, work, money, home), never a word with a common other sense ("flat", "home", "auto").
# The first lines are people: a request names the user's own ("my kid", "Hollis's mother") or it is about people in
# general ("explain gravity to a child"), and only the first is about what the user said.
_SAME_PEOPLE_TEXT = """
kid kids child children son sons daughter daughters twins boy boys girl girls enfant enfants fils fille filles hijo
  hija hijos hijas
  filho filha filhos filhas
wife husband spouse partner femme mari epouse epoux esposa esposo marido
mom mum mother mama mommy mummy maman madre mae
dad father daddy papa padre pai
parents parent
brother sister sibling siblings frere soeur hermano hermana irmao irma
grandma grandmother granny grandpa grandfather grandparents grandparent abuela abuelo avo grand-mere grand-pere
"""
# Products named by their brand, per thing: a phone's brand is a phone in recall (the groups below), and "I switched
# to an iPhone" replaces "my phone is a Pixel" (learning.memory.rules)
BRANDS = {
    "phone": "iphone pixel galaxy oneplus xiaomi huawei nokia motorola fairphone",
    "laptop": "macbook thinkpad xps chromebook zenbook",
    "car": "tesla toyota honda civic corolla prius nissan hyundai kia subaru mazda volvo volkswagen vw bmw audi mercedes "
    "peugeot renault citroen skoda chevrolet chevy lexus porsche rivian polestar",
    "browser": "firefox chrome safari brave edge vivaldi arc",
    "editor": "vim neovim nvim emacs helix vscode intellij pycharm webstorm goland rider sublime zed nano",
}
_SAME_THINGS_TEXT = f"""
boss manager supervisor jefe jefa chefe
customer customers client clients
job occupation profession career emploi metier trabajo empleo profissao emprego
car vehicle voiture coche carro
phone phones smartphone cellphone telephone telefono telefone {BRANDS["phone"]}
laptop laptops notebook {BRANDS["laptop"]}
apartment apartments appartement apartamento piso
doctor physician gp medecin medico
biggest largest
author authors writer writers novelist novelists
salary wage wages income salaire sueldo salario
freelancer freelancers contractor contractors
vacation holiday holidays vacances vacaciones ferias
"""
_OWNER_TEXT = """
my our his her their mon ma mes notre nos son sa ses leur leurs mi mis nuestro nuestra nuestros nuestras su sus meu
minha meus minhas nosso nossa nossos nossas seu sua seus suas
"""
_OWNER = frozenset(_OWNER_TEXT.split())


def _same_groups(text: str) -> dict[str, str]:
    """One group per line; an indented line goes on the group above."""
    out: dict[str, str] = {}
    for line in text.strip().replace("\n  ", " ").split("\n"):
        words = line.split()
        group = "=" + stem(words[0])
        for w in words:  # the words as written (folded), not their stems: "care" is not "car"
            out[w] = group
    return out


_SAME_PEOPLE = _same_groups(_SAME_PEOPLE_TEXT)
_SAME_THINGS = _same_groups(_SAME_THINGS_TEXT)


def same_terms(text: str, *, owned: bool) -> list[str]:
    """The group terms of ``text``'s words (:data:`_SAME_PEOPLE_TEXT`); with ``owned``, a word for people only after a
    possessive ("my", "our", "Hollis's"), as a request names the user's own people."""
    words = _WORD.findall(fold(text))
    if _GROUP_WORDS.isdisjoint(_forms(words)):
        return []  # most lines name no one of a group: one set test, not a lookup per word
    out: list[str] = []
    prev = ""
    for word in words:
        w = word[:-2] if word.endswith("'s") else word
        one = w[:-1] if w.endswith("s") else w  # "clients", "cars"
        group = _SAME_THINGS.get(w) or _SAME_THINGS.get(one)
        if group is None and (not owned or prev in _OWNER or prev.endswith("'s")):
            group = _SAME_PEOPLE.get(w) or _SAME_PEOPLE.get(one)  # "son" too, a stop word (Spanish "they are")
        if group is not None:
            out.append(group)
        prev = word
    return out


_GROUP_WORDS = frozenset(_SAME_THINGS) | frozenset(_SAME_PEOPLE)


def _forms(words: list[str]) -> set[str]:
    """Each word as :func:`same_terms` looks it up: as written, without a possessive, without a plural's s."""
    out = set(words)
    for w in words:
        if w.endswith("s"):
            w = w[:-2] if w.endswith("'s") else w
            out.add(w)
            if w.endswith("s"):
                out.add(w[:-1])
    return out


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
        out += _word_terms(m.group(0))
    return out


def _read_word(w: str) -> tuple[str, ...]:
    """The index terms of one folded word (a word's, then its hyphen or apostrophe parts'); none for a stop word."""
    if w in STOP or len(w) < 2 or (w.isdigit() and len(w) < 3):
        return ()
    if w.endswith("'s"):  # a possessive is its word ("Hollis's dog": hollis, as "Hollis: ..." labels her lines)
        w = w[:-2]
    parts = re.split(r"[-']", w) if ("-" in w or "'" in w) else []
    if parts and all(x in STOP or len(x) < 2 for x in parts):
        return ()  # "est-ce", "qu'est-ce", "c'est": stop words joined, never a topic
    out = []
    for x in [w, *parts]:
        if x in STOP or len(x) < 2:
            continue
        s = stem(x)
        if s not in STOP:
            out.append(s)
    return tuple(out)


_word_terms = _short_words_cached(_read_word)


def term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


# Words too common across topics to make a memory relevant on their own (they still add to the score of a
# memory that another word already matched): a request to "write a file" is not about a memory of a file name; nor
# is "What did Ana finally decide to study?" about "I finally cleaned out my inbox" (discourse adverbs, light verbs).
_WEAK_TEXT = """
time work thing way new good bad big small first last next file files code run write read help find show give off
up out
take put set start stop open close call send check change add remove update create test fix build look try ask
answer question problem issue day days week month year today tomorrow team project people person name names part
help able sure right left long short number list item text data value place point case fact kind type line page
finally lately recently currently actually honestly usually often soon ago later earlier go goes going went love
loves loved decide decided
temps travail chose faire nouveau bon projet equipe jour semaine fichier
tiempo trabajo cosa hacer nuevo bueno proyecto equipo dia semana archivo
tempo trabalho coisa fazer novo bom projeto equipe dia semana arquivo
"""
WEAK = frozenset(stem(w) for w in _WEAK_TEXT.split())
# Of them, the nouns: a request whose only words they are is about them ("Where do I work?", "What's my project
# called?"); a discourse adverb or a light verb never is ("What has she gotten into lately?").
_WEAK_NOUNS_TEXT = """
time work thing way file files code day days week month year team project people person name names part list item
text data value place point case fact kind type line page answer question problem issue temps travail chose projet
equipe jour semaine fichier tiempo trabajo cosa proyecto equipo dia semana archivo tempo trabalho coisa projeto arquivo
"""
WEAK_NOUNS = frozenset(stem(w) for w in _WEAK_NOUNS_TEXT.split())


# Words of the work that a statement about anything else uses too ("an alert from my bank", "the wiki's title
# page", "a call with mum"): a request about the work carries its concept through them, a memory does not (only its
# tools and the work's own nouns do), so a note that mentions one in passing is not brought to every request of the
# kind.
_INCIDENTAL_TEXT = """
alert alerts metrics logs logging debug debugging exception exceptions latency uptime trace traces tracing
dashboard dashboards screen screens page pages form forms theme layout copy style tone image images sync call
calls hour hours focus invite calendar schedule scheduling meeting meetings environment library libraries
install installing upgrade storage upload uploads blob blobs charge charged pricing tax interface channel
channels notify notification announce announcement announcements design designs designer designers font fonts
color colors colour colours icon icons laptop laptops bash merge merging ship shipping launch publish prod
production topic topics queue queues replay offset offsets partition partitions consumer consumers producer
producers matrix coverage fixture fixtures flaky budget budgets annual forecast revenue quarter quarters
instance instances bucket buckets hosting mobile button buttons toggle modal widget component components query
queries table tables column columns schema schemas analytics database db sql workflow workflows pipeline
pipelines ticket tickets backlog sprint epic triage approval approvals flag flags endpoint endpoints api apis
gateway container containers image pod pods namespace namespaces website landing marketing blog newsletter tests
testing receipt receipts payment payments subscription subscriptions refund refunds rpc ui ux frontend navbar
sidebar spacing typography palette incident incidents outage outages availability
"""
_INCIDENTAL = frozenset(_INCIDENTAL_TEXT.split())


def _work(words: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Work concepts: a request carries one through the tools and every word of the work; a memory through the tools
    and the work's own nouns, not its :data:`_INCIDENTAL` words."""
    incidental = {stem(x) for x in _INCIDENTAL}  # by stem: "alerting" is "alert"
    return {tag: (" ".join(x for x in w.split() if stem(x) not in incidental), w) for tag, w in words.items()}


# Concepts: a trait stated once (a diet, a family, a standing schedule, where one lives) bears on requests that never
# name it ("plan a dinner menu" and "I'm vegetarian"). A memory carries the concept of its trait words; a request
# carries the concept of its situation words (or of the trait words themselves). The tag is one more index term.
_CONCEPTS = {
    "#diet": (
        "vegetarian vegan allergic allergy allergies gluten lactose halal kosher celiac coeliac peanut peanuts "
        "alcohol teetotal teetotaler teetotaller sober dairy-free keto diabetes diabetic spicy reflux heartburn gerd "
        "fodmap ibs shellfish "
        "pescatarian vegetarien vegetarienne vegetaliens allergique vegetariano vegetariana alergico alergica "
        "celiaco celiaca 素食 吃素 过敏 清真",
        "dinner lunch breakfast brunch menu recipe recipes restaurant restaurants food meal meals cook cooking eat "
        "snack snacks catering dish dishes dessert desserts cake cakes bake baking pastry sweets cookie cookies pasta "
        "pizza sandwich wine beer cocktail cocktails drinks bakery bread treat treats diner seafood fish sushi takeout "
        "takeaway steakhouse potluck dejeuner recette repas "
        "cena almuerzo receta comida desayuno jantar "
        "almoco receita refeicao cafe 晚餐 午餐 早餐 菜单 食谱 餐厅 吃饭 做饭 聚餐",
    ),
    "#family": (
        "kid kids son daughter wife husband partner children child baby toddler twins boy boys girl girls teen "
        "teenager stepson stepdaughter enfant enfants fils fille "
        "femme mari "
        "hijo hija hijos esposa esposo ninos filho filha filhos esposa marido criancas 孩子 儿子 女儿 老婆 老公 妻子 丈夫",
        "family weekend vacation holiday holidays gift gifts present presents christmas xmas toy toys birthday school "
        "famille vacances cadeau anniversaire ecole "
        "familia vacaciones regalo cumpleanos escuela ferias presente aniversario escola 家庭 周末 假期 礼物 生日 学校",
    ),
    "#schedule": (
        "monday tuesday wednesday thursday friday weekdays weekday mornings afternoons evenings pickup appointment "
        "standup stand-up lundi mardi mercredi jeudi vendredi lunes martes miercoles jueves viernes segunda terca "
        "quarta quinta sexta 周一 周二 周三 周四 周五 工作日 每天",
        "meeting meetings schedule calendar book booking call calls appointment slot slots availability available "
        "reunion rendez-vous agenda creneau reunion cita horario reuniao agenda horario 会议 日程 安排 预约 开会",
    ),
    "#vehicle": (
        "drive drives car cars bike motorbike motorcycle scooter ev voiture velo moto coche carro bicicleta "
        "开车 汽车 自行车 " + BRANDS["car"],  # the car named by its make
        "car cars vehicle vehicles bike motorbike motorcycle scooter ev voiture coche carro 汽车 "  # "what car do I have"
        "tire tires tyre tyres oil mechanic charge charging garage pneu pneus gasolina pneumatico weather wear "
        "rain umbrella jacket coat meteo pluie lluvia chuva 轮胎 加油 停车 充电 天气 下雨",
    ),
    "#pets": (
        "dog dogs puppy cat cats kitten kittens pet pets parrot rabbit hamster retriever labrador poodle terrier "
        "spaniel beagle bulldog shepherd husky dachshund corgi chihuahua collie chien chat perro gato cachorro 狗 猫 宠物",
        "apartment flat house home plants plant garden furniture sofa rug vacation trip hotel rent moving groomer "
        "grooming vet leash kennel boarding appartement "
        "maison plantes vacances piso casa plantas vacaciones apartamento 公寓 房子 植物 度假",
    ),
    "#travel": (
        "flight flights fly flying flew trip trips travel traveling travelling itinerary layover hotel hotels airbnb "
        "airport visa passport vol voyage hotel vuelo viaje viagem voo 航班 旅行 酒店 机场",
        "flight flights fly flying trip trips travel traveling travelling itinerary layover hotel hotels airbnb "
        "airport visa passport staying vacation holiday abroad vol voyage vuelo viaje viagem voo 航班 旅行 酒店 机场",
    ),
    "#health": (
        "allergic allergy allergies intolerant intolerance asthma asthmatic diabetic diabetes epilepsy epileptic "
        "pregnant pregnancy migraine migraines penicillin medication medications surgery post-op injury injured "
        "recovering rehab physio physiotherapy sprain fracture alzheimer's alzheimers dementia dyslexic dyslexia adhd "
        "autistic autism colorblind colourblind deuteranopia allergique alergico alergica 过敏",
        "medicine medicines medication medications drug drugs pill pills dose dosage prescription antibiotic "
        "antibiotics painkiller painkillers tablet tablets pharmacy symptom symptoms vaccine treatment medicament "
        "doctor doctors gp sick illness fever cough sore throat flu headache hospital clinic infection surgery "
        "exercises stretches recovery pain "
        "medicamento 药 药物",
    ),
    "#fitness": (
        "marathon marathons half-marathon ultramarathon triathlon triathlons runner cyclist swimmer crossfit "
        "powerlifting gym",
        "jog jogging workout workouts exercise exercises fitness gym cardio marathon race races 5k 10k stretching "
        "mileage",
    ),
    "#language": (
        "korean japanese spanish french german italian mandarin chinese cantonese portuguese arabic russian dutch "
        "swedish norwegian danish polish turkish greek hindi vietnamese thai hebrew duolingo jlpt topik hsk dele delf "
        "goethe ielts toefl",
        "vocabulary grammar listening speaking pronunciation podcast podcasts flashcards anki conversation immersion "
        "textbook fluency fluent language languages",
    ),
    "#business": (
        "bakery cafe coffeeshop restaurant bistro shop store boutique studio agency salon practice startup etsy "
        "brewery bar customers clientele",
        "caption captions instagram post posts marketing promo promotion flyer flyers customers customer shop store "
        "brand branding newsletter product products sale sales menu outreach pitch cold-email campaign feature "
        "launch pricing",
    ),
    "#sleep": (
        "night-shift nightshift shifts insomnia newborn",
        "sleep sleeping asleep nap naps insomnia tired fatigue rest melatonin",
    ),
    "#academia": (
        "phd doctorate doctoral masters msc postdoc undergrad undergraduate university professor lecturer researcher "
        "thesis dissertation",
        "thesis dissertation paper papers research literature abstract introduction citation citations journal "
        "conference supervisor advisor lab",
    ),
    "#finance": (
        "saving savings deposit mortgage debt loan loans pension 401k isa investing investor",
        "fund funds index etf stocks shares invest investing investment bonus savings interest mortgage retirement "
        "budget",
    ),
    "#music": (
        "bass guitar piano violin cello viola drums ukulele saxophone trumpet flute clarinet choir band trio quartet "
        "orchestra jazz",
        "practice practise scales chords song songs gig gigs rehearsal music instrument",
    ),
    "#games": (
        "chess lichess poker bridge scrabble sudoku crossword",
        "openings opening endgame endgames tactics puzzles rating elo",
    ),
    "#secrets": (
        "vault 1password keychain keepass bitwarden secrets credentials sops kms",
        "key keys token tokens password passwords credential credentials secret secrets apikey cle clave chave 密钥 密码",
    ),
    "#profession": (
        "engineer developer designer manager student teacher scientist researcher nurse doctor lawyer analyst "
        "architect consultant translator interpreter freelancer freelance ingenieur developpeur etudiant ingeniero "
        "desarrollador estudiante engenheiro "
        "desenvolvedor estudante 工程师 开发 学生 老师 设计师 经理",
        "career learn learning course courses resume cv linkedin headline job jobs interview interviews skills lesson "
        "lessons class "
        "classes student students pupils teach teaching lecture lectures homework grading exam exams curriculum "
        "syllabus patient patients shift shifts ward clinic client clients burnout stress workload overtime goals "
        "okr okrs performance promotion price pricing rate rates quote carriere apprendre "
        "carrera aprender carreira 职业 学习 面试 简历 课程",
    ),
    "#code": (
        "python golang rust java typescript javascript kotlin swift ruby php scala elixir haskell csharp cpp "
        "clojure perl lua dart",
        "framework frameworks library libraries snippet code script function class package sdk module bibliotheque "
        "biblioteca libreria fonction funcion funcao codigo programme programa 框架 库 代码 脚本 函数",
    ),
    # The team's tools and practices, stated once ("we package with poetry", "bugs go in Linear"), bear on the work
    # that touches them ("set up the dev environment", "write this up as a ticket"), which never names the tool.
    **_work(
        {
            "#packages": "npm pnpm yarn bun pip pipenv poetry uv conda mamba cargo maven gradle composer bundler nuget "
            "install installing dependency dependencies deps lockfile requirements venv virtualenv environment library "
            "libraries",
            "#release": "freeze deploy deploys deployed deployment deployments release releases rollout hotfix "
            "hotfixes merge merging ship shipping production prod launch publish go-live approval approvals launchdarkly "
            "unleash flagsmith flag flags",
            "#cloud": "aws gcp azure region regions us-east-1 us-east-2 us-west-1 us-west-2 eu-west-1 eu-central-1 "
            "cloudflare hetzner digitalocean vercel netlify heroku gdpr residency terraform bucket buckets s3 ec2 "
            "instance instances vm vms provision provisioning infrastructure infra lambda cdn dns hosting pulumi "
            "cloudformation r2 storage upload uploads blob blobs",
            "#timezone": "schedule scheduling meeting meetings call calls sync hour hours calendar invite standup "
            "focus 1:1 one-on-one reunion horario 会议",
            "#billing": "billing invoice invoices invoicing stripe paddle chargebee braintree paypal vat receipt "
            "receipts tax charge charged refund refunds payment payments subscription subscriptions pricing factura "
            "facture recibo",
            "#testing": "pytest nox tox jest vitest mocha rspec junit cypress playwright selenium tests testing matrix "
            "coverage e2e fixture fixtures flaky k6 locust jmeter gatling load-test",
            "#fiscal": "fiscal financial fy quarter quarters quarterly q1 q2 q3 q4 budget budgets year-end annual "
            "forecast revenue",
            "#frontend": "react vue svelte sveltekit angular nextjs nuxt remix solidjs tailwind bootstrap storybook "
            "ui ux frontend page pages component components button buttons toggle modal form forms css layout theme "
            "widget navbar sidebar screen screens website site sites webflow wordpress squarespace cms hugo jekyll "
            "gatsby ghost astro eleventy docusaurus mkdocs sphinx",
            "#design": "figma sketch zeplin invision penpal mockup mockups wireframe wireframes spacing typography "
            "colorblind colourblind deuteranopia slides presentation "
            "font fonts colour colours color colors palette icon icons design designs designer designers",
            "#mobile": "ios android iphone ipad ipados watchos swiftui uikit jetpack compose xcode testflight mobile "
            "expo flutter native app apps screen screens toggle dark-mode push notifications",
            "#tracker": "jira linear asana trello youtrack clickup ticket tickets backlog sprint epic triage",
            "#streaming": "kafka kinesis pubsub rabbitmq nats sqs pulsar redpanda celery sidekiq resque dramatiq rq "
            "worker workers background job jobs consumer consumers producer "
            "producers topic topics replay offset offsets partition partitions queue queues",
            "#data": "snowflake bigquery redshift databricks dbt warehouse clickhouse postgres postgresql mysql "
            "mariadb mongodb sqlite duckdb alembic flyway liquibase prisma sqlalchemy query queries sql schema schemas "
            "migration migrations column columns table tables analytics database db etl",
            "#api": "api apis gateway endpoint endpoints grpc graphql openapi swagger protobuf trpc websocket "
            "websockets rpc versioning",
            "#ci": "buildkite jenkins circleci travis teamcity argocd spinnaker pipeline pipelines ci cd workflow "
            "workflows lint linter linting",
            "#observability": "datadog grafana prometheus sentry newrelic honeycomb kibana loki splunk opentelemetry "
            "logs logging metrics alert alerts alerting monitoring dashboard dashboards trace traces tracing latency "
            "uptime exception exceptions stacktrace debug debugging pagerduty opsgenie on-call oncall incident incidents "
            "outage outages availability sla slo",
            "#chat": "slack teams discord mattermost zulip announce announcement announcements channel channels "
            "notify notification",
            "#containers": "kubernetes k8s docker helm nomad ecs eks gke aks openshift pod pods kubectl container "
            "containers image images namespace namespaces",
            "#writing": "spelling british american tone style copy blog newsletter changelog landing marketing "
            "documentation docs translator translation translations localization localisation copywriter",
            "#os": "windows macos linux ubuntu debian fedora wsl powershell bash zsh laptop laptops macbook "
            "thinkpad machine computer pc screenshot screenshots shortcut shortcuts",
            "#editor": BRANDS["editor"] + " jetbrains lazyvim spacemacs editor editors ide ides keybinding "
            "keybindings keymap dotfiles",
        }
    ),
    "#place": (
        "",  # see _PLACE: where the user lives is a statement about the user, not any "lives in"
        "live lives living reside home neighbourhood neighborhood city town "  # "where do I live?"
        "forecast weather trip travel flight flights nearby commute call calls schedule scheduling meeting meetings "
        "timezone local meteo voyage vol viaje vuelo viagem voo wetter "
        "arbeitsweg reise 天气预报 旅行 航班 "
        "附近 通勤",
    ),
}


_PLACE = re.compile(
    r"\b(?:i live|i'm based|i am based|i'm located|we live|i now live|we now live|i work (?:remotely )?(?:from|out of)|"
    r"i'm working (?:remotely )?from|we're based|we are based|our (?:office|hq|headquarters|team) is (?:in|based in)|"
    r"(?:i|we) (?:have |'ve |just |recently |finally )*(?:moved|relocated) (?:(?:away )?(?:from|out of) [^,;.]{1,40}? )?"
    r"(?:back )?(?:to|into|over to)|j'habite|je vis [aà]|vivo en|"
    r"moro em|eu moro|vivo em|ich wohne in|ich lebe in|wir wohnen in|abito a|vivo a|ik woon in)\b|我住在|我住",
    re.I,
)


# A time zone said in capitals ("CET", "UTC+2"); spelt out in any case ("time zone", "fuseau horaire").
_TIMEZONE = re.compile(
    r"\b(?:UTC|GMT|CET|CEST|PST|PDT|EST|EDT|BST|JST|AEST|IST)(?:[+-]\d{1,2})?\b"
    r"|(?i:\btime ?zones?\b|\bfuseau horaire\b|\bzona horaria\b|\bfuso hor[aá]rio\b)|时区"
)


def _concept_sets(side: int) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
    """Per concept: its words (stemmed) and, apart, its CJK words, which are found in the text itself (CJK text
    has no word boundaries); sorted out once here rather than on every request."""
    out = []
    for tag, sides in _CONCEPTS.items():
        # a request that names the concept is about it ("What's my diet?", "What pets do I have?")
        words = sides[side].split() + ([tag[1:]] if side == 1 else [])
        out.append(
            (
                tag,
                frozenset(w if _CJK.fullmatch(w) else stem(w) for w in words),
                tuple(w for w in words if _CJK.fullmatch(w)),
            )
        )
    return out


_MEMORY_SIDE = _concept_sets(0)
_REQUEST_SIDE = _concept_sets(1)


def _tags(text: str, base: frozenset[str], table: list[tuple[str, frozenset[str], tuple[str, ...]]]) -> frozenset[str]:
    cjk = _CJK.search(text) is not None
    tags = {tag for tag, words, cjk_words in table if base & words or (cjk and any(w in text for w in cjk_words))}
    return base | tags if tags else base


def memory_terms(text: str) -> frozenset[str]:
    """A memory's index terms: its words, plus the concepts its trait words carry."""
    return _tags(text, term_set(text), _MEMORY_SIDE) | _said_tags(text) | frozenset(same_terms(text, owned=False))


# A job said by its work, whatever the job's name: "I work as a physiotherapist", "I do bookkeeping for a living".
_JOB = re.compile(
    r"\b(?:work(?:ed|ing)? as|employed as|for a living|promoted (?:to|as)|travaill\w* comme|trabaj\w* como|"
    r"trabalh\w* como)\b"
    r"|\bi (?:manage|lead|run|head) (?:the|a|our) (?:\w+ ){0,2}(?:team|department|group|unit)\b",
    re.I,
)


# The user's business ("I run a small bakery", "we own a dental practice", "our customers are clinics") and a night
# schedule ("I'm on the night shift", "I work nights")
_OWN_BUSINESS = re.compile(
    r"\b(?:(?:i|we) (?:run|own|co-own|manage|started|founded|opened) (?:a|an|my|our|the)\b|our (?:customers|clients) "
    r"are|(?:i|we) (?:sell|make and sell|handcraft)\b)",
    re.I,
)
_NIGHTS = re.compile(r"\b(?:night shifts?|nights? shift|work(?:ing)? nights|graveyard shift)\b", re.I)


def _said_tags(text: str) -> frozenset[str]:
    """Concepts read from the text itself rather than its words: where the user lives, a time zone, a job."""
    return frozenset(
        tag
        for tag, said in (
            ("#place", _PLACE.search(text)),
            ("#timezone", _TIMEZONE.search(text)),
            ("#profession", _JOB.search(text)),
            ("#business", _OWN_BUSINESS.search(text)),
            ("#sleep", _NIGHTS.search(text)),
        )
        if said
    )


def memory_terms_list(text: str) -> list[str]:
    """:func:`memory_terms` with repeats, in order (the index counts how often a word occurs)."""
    words = terms(text)
    tags = (_tags(text, frozenset(words), _MEMORY_SIDE) | _said_tags(text)) - frozenset(words)
    return words + same_terms(text, owned=False) + sorted(tags)


# Running read from the text rather than a word's stem: "run" is a weak word of the work ("run the tests"), while "a
# running plan" or "go for a run" is about the user's running.
_RUNNING = re.compile(
    r"\b(?:running|go(?:ing)? for a run|run a (?:race|marathon|half|5k|10k)|(?:long|easy|tempo|recovery|my) runs?|"
    r"runs? (?:a|per) week)\b",
    re.I,
)


# A request about where the user is, in so many words ("is it going to snow where I am?", "a coworking space near me")
_WHERE_I_AM = re.compile(
    r"\b(?:where i (?:am|live|'m based)|near me|nearby|around here|in my (?:area|city|town|neighbou?rhood)|local to me)\b",
    re.I,
)


def request_terms(text: str) -> frozenset[str]:
    """A request's search terms: its words, their groups' terms, and the concepts its situation words carry."""
    base = term_set(text)
    said = frozenset(
        tag for tag, rx in (("#fitness", _RUNNING), ("#place", _WHERE_I_AM)) if rx.search(text) is not None
    )
    return _tags(text, base, _REQUEST_SIDE) | frozenset(same_terms(text, owned=True)) | said
