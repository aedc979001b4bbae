"""The rule extractor: explicit statements a user makes about themselves, their preferences and their work, in
English, French, Spanish, Portuguese and Chinese, without a model.

It reads classes of statement, not phrases: a directive to remember ("remember that", "note que", "recuerda que",
"lembre que", "记住"), a first-person preference ("I prefer", "je préfère", "prefiero", "prefiro", "我喜欢"), a standing
instruction about the future ("from now on", "désormais", "a partir de ahora", "a partir de agora", "从现在开始"),
what the team uses ("we use", "on utilise", "usamos", "我们用"), a possessive fact ("my X is Y", "notre X est Y",
"mi X es Y", "meu X é Y", "我的X是Y"), a change ("X moved to Y", "we switched from A to B", "X is now Y", "X 迁移到 Y"),
a dated event, and a request to forget ("forget that I...", "oublie que", "olvida que", "esquece que", "忘掉").
Questions, conditionals and requests to do something are not statements and are left alone. What an explicit
statement leaves implicit ("the runners have no GPU, that's why it timed out") needs the model extractor.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property

from ...memory.model import Candidate
from ...memory.text import BRANDS, RULE_LABELS, fold, speaker_of, stem, term_set
from ...tasktext import unquote

F = re.I | re.U
_N = iter(range(1000))


def _end() -> str:
    return f"(?P<x{next(_N)}>.+)"


def _first(m: re.Match[str], prefix: str) -> str:
    return next(v for k, v in m.groupdict().items() if v and k.startswith(prefix))


# Directive to remember: the content is what follows.
REMEMBER = re.compile(
    r"^(?:(?:please|pls|ok|okay|also|and|btw|by the way|fyi)[,\s]+)*(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
    r"(?:remember|note|keep in mind|bear in mind|make a note|take note|for (?:future )?reference|don'?t forget|"
    r"do not forget|for the record|just so you know|fyi)(?:\s+(?:that|this|of this|:))?[,:\s]+"
    + _end()
    + r"|^(?:(?:s'il te pla[iî]t|stp|svp|au fait)[,\s]+)?(?:souviens[- ]toi|rappelle[- ]toi|retiens|note|notez|"
    r"n'oublie pas|n'oubliez pas|garde (?:bien )?en t[eê]te|pour info|pour m[eé]moire|sache que)"
    r"(?:\s+(?:que|qu'|bien que|ceci|de [cç]a))?[,:\s]*"
    + _end()
    + r"|^(?:(?:por favor)[,\s]+)?(?:recuerda|recuerde|acu[eé]rdate de|ten en cuenta|tenga en cuenta|no olvides|"
    r"no olvide|toma nota|anota|para que lo sepas|ten presente)(?:\s+(?:que|de que))?[,:\s]+"
    + _end()
    + r"|^(?:(?:por favor)[,\s]+)?(?:lembre(?:-se)?|lembra(?:-te)?|se lembre|n[aã]o (?:se )?esque[cç]a|"
    r"n[aã]o esquece|tenha em mente|anote|guarde (?:isso|isto)|s[oó] pra (?:voc[eê] )?saber|fica a dica)"
    r"(?:\s+(?:de que|que|disso|disto))?[,:\s]+"
    + _end()
    + r"|^(?:请)?(?:记住|记得|别忘了|不要忘记|请注意|备注|注意)[，,:：\s]*"
    + _end(),
    F,
)

FORGET = re.compile(
    r"^(?:(?:please|ok|okay|actually)[,\s]+)*(?:(?:can|could) you\s+|you (?:can|may|should) |feel free to )?"
    r"(?:please\s+)?(?:forget|disregard|"
    r"(?:delete|erase|remove|drop) (?:from (?:your )?memory|what you (?:know|remember) about)|stop remembering)"
    r"(?:\s+(?:about|that|what i (?:said|told you)(?: about)?|the fact that))*[,:\s]+"
    + _end()
    + r"|^(?:(?:s'il te pla[iî]t)[,\s]+)?(?:oublie|oubliez)(?:\s+(?:que|qu'|ce que je t'ai dit sur|ce que j'ai dit sur|"
    r"le fait que))?[,:\s]*"
    + _end()
    + r"|^(?:(?:por favor)[,\s]+)?(?:olvida|olv[ií]date de|olvide)(?:\s+(?:que|lo que te dije (?:sobre|de)))?[,:\s]+"
    + _end()
    + r"|^(?:(?:por favor)[,\s]+)?(?:esque[cç]a|esquece|esque[cç]a-se de)(?:\s+(?:que|o que eu disse sobre))?[,:\s]+"
    + _end()
    + r"|^(?:请)?(?:忘记|忘掉|忘了|删除关于)[，,:：\s]*"
    + _end(),
    F,
)

FROM_NOW = re.compile(
    r"\b(?:from now on|going forward|from here on(?: out)?|starting (?:now|today|this week)|henceforth|"
    r"in (?:the )?future|from today)\b|(?:[àa] partir de (?:maintenant|aujourd'hui)|d[ée]sormais|dor[ée]navant|"
    r"[àa] l'avenir)|(?:a partir de (?:ahora|hoy|agora|hoje)|de ahora en adelante|en adelante|de agora em diante|"
    r"daqui (?:em|pra|para) (?:diante|frente)|doravante)|从现在开始|从今以后|今后|以后",
    F,
)

PREFER = re.compile(
    r"\b(?:i(?:'d| would)? (?:really |much |strongly )?(?:prefer|rather)|i (?:really )?(?:like|love|want|need) "
    r"(?:my|the|your|it|answers|responses|replies|code|things|everything)|i (?:always |usually )?like "
    r"(?:to|it)|i (?:always|usually|never) want (?:to|it)|i (?:don'?t|do not|never) (?:like|want)|i (?:hate|can'?t stand|dislike)|i (?:always|usually|"
    r"normally|tend to) (?:use|work|write|go|pick|choose)|i (?:always |usually |normally |mostly |mainly |generally |"
    r"often )?(?:use|am using|'m using|work with|code in|write in|write|program in) "
    r"(?!(?:it|this|that|them|the following)\b)|my preference is|please (?:always|never)|"
    r"(?:always|never) (?:use|give|answer|reply|respond|write|add|include|show|put|call|format|send|suggest)|"
    r"(?:answer|reply|respond|write|talk|speak) (?:to me )?in|keep (?:your|the|all) (?:answers|replies|responses|"
    r"explanations)|i (?:like|love|want|prefer|need) (?:\w+ ){0,2}(?:answers|replies|responses|explanations|"
    r"examples|summaries))\b"
    r"|\b(?:j'utilise|je (?:code|bosse|d[ée]veloppe|programme|travaille)(?: surtout| principalement| souvent| toujours)? "
    r"(?:en|avec|sous|sur))\b|\b(?:uso|utilizo|eu uso|eu utilizo|programo em|programo en|trabajo (?:sobre todo |"
    r"principalmente )?con|trabalho (?:mais |principalmente )?com)\b"
    r"|我(?:一般|平时|通常)?(?:用|使用)"
    r"|\b(?:je pr[ée]f[eè]re|j'aime (?:mieux|bien|que)|je n'aime pas|je d[ée]teste|j'utilise toujours|"
    r"(?:r[ée]ponds|r[ée]pondez|[ée]cris|[ée]crivez|parle|parlez)(?:[- ]moi)? en|toujours|jamais)\b"
    r"|\b(?:prefiero|me gusta(?:n)? (?:m[aá]s|que)|no me gusta|odio|siempre|nunca|(?:resp[oó]ndeme|responde|"
    r"esc[rí]beme|h[aá]blame) en)\b"
    r"|\b(?:prefiro|eu gosto (?:mais|de)|n[aã]o gosto|odeio|sempre|nunca|(?:responda|responde|escreva|fale)(?:-me)? "
    r"em)\b"
    r"|我(?:更)?(?:喜欢|偏好|倾向于?|习惯|讨厌|不喜欢)|请(?:总是|始终|一直|用|使用)|(?:总是|始终|永远不要|不要)(?:用|使用|给)|"
    r"用(?:中文|英文|英语|法语|西班牙语|葡萄牙语)(?:回答|回复)",
    F,
)

WE_USE = re.compile(
    r"\b(?:we|our team|the team|our (?:company|org|stack|project|repo|codebase)) (?:always |usually |now |mostly |all )?"
    r"(?:use|uses|are using|deploy (?:with|to|on|via|using)|host (?:on|with)|build (?:with|on)|run (?:on|in)|work (?:with|in)|"
    r"are on|rely on|standardi[sz]ed on|write (?:everything )?in|ship (?:with|on|to))\b"
    r"|\b(?:we|our team|the team) (?:have |'ve |just |recently )*(?:moved|switched|migrated|changed|upgraded|"
    r"downgraded|standardi[sz]ed|settled|went) (?:over |back )?(?:to|on|from)\b"
    r"|\b(?:on utilise|nous utilisons|on d[ée]ploie (?:avec|sur)|nous d[ée]ployons|on travaille (?:avec|en|sur)|"
    r"l'[ée]quipe utilise|on est sur)\b"
    r"|\b(?:usamos|utilizamos|desplegamos (?:con|en)|trabajamos (?:con|en)|el equipo usa)\b"
    r"|\b(?:usamos|utilizamos|a gente (?:\w+ )?usa|fazemos (?:o )?deploy (?:com|no|na)|trabalhamos (?:com|em)|a equipe usa)\b"
    r"|我们(?:都|一直|现在)?(?:用|使用|采用|部署在|部署到|基于)|我们团队(?:用|使用)"
    # any present-tense practice of the team ("we deploy X with Y", "we review every PR", "on livre le lundi")
    r"|^(?:so |and |also |here )?(?:we|our team|the team)\s+(?:always |usually |now |mostly |only |never |all )?"
    r"(?!(?:should|could|would|can|need|might|must|will|shall|want|have|had|did|were|was|may|are|got|get|just|still|"
    r"also|think|thought|talked|discussed|tried|went|saw|said|know|knew|hope|wish|like|love)\b)[a-z]+(?<!ed)\s+"
    r"(?!(?:is|are|was|were)\b)\w+"  # "the team lead is Omar": a noun, not the team's practice
    r"|^(?:nous|on)\s+(?!(?:devrait|pourrait|doit|va|voudrait|a|avait)\b)\w+(?:ons|e)\s+\w+"
    r"|^(?:nosotros\s+|n[oó]s\s+)?\w+(?:amos|emos|imos)\s+(?:con|en|el|la|los|las|o|a|os|as|com|no|na|em)\s+\w+",
    F,
)

# "my/our/the X is Y" (and the languages' equivalents): group s is the subject X.
# A replacement said with its old value: "We replaced Jenkins with GitHub Actions", "I upgraded my phone to an iPhone
# 15", "We swapped out Redis for Valkey". What it is about: the thing named after the verb when it is a possession
# ("my phone"), else the new value; the old value is what it replaces.
REPLACED = re.compile(
    r"^(?:and |so |also )?(?:we|i|our team|the team) (?:have |'ve |just |recently |finally |now )*"
    r"(?:replaced|swapped(?: out)?|ditched|dropped|retired|upgraded|downgraded|changed|switched|traded(?: in)?) "
    r"(?P<a>[^,;]{1,60}?) (?:with|for|to|by|in favou?r of) (?P<b>[^,;]{1,80})"
    # someone else replaced what is the user's: "IT replaced my work laptop with a MacBook Pro"
    r"|^(?:and |so |also )?(?:\w+ ){1,3}?(?:has |have |just |recently |finally )*(?:replaced|swapped(?: out)?|upgraded) "
    r"(?P<a2>(?:my|our) [^,;]{1,60}?) (?:with|for|to|by) (?P<b2>[^,;]{1,80})",
    F,
)
# The first act, giving the old one up ("I sold the Civic", "we dropped Jira"): also alone, in :func:`_traded`
_GIVE_UP = (
    r"^(?:and |so |also )?(?:we|i) (?:have |'ve |just |recently |finally |eventually )*"
    r"(?:sold|gave away|gave up(?: on)?|got rid of|traded in|scrapped|returned|dropped|ditched|cancell?ed|quit|"
    r"stopped using|stopped|no longer use) "
)
# A replacement said as two acts: "I sold the Civic and bought a Tesla", "we got rid of Jira and moved to Linear". What
# it is about is the new value; the old one is what it replaces.
TRADED = re.compile(
    _GIVE_UP + r"(?P<a>[^,;]{1,60}?)(?:,? and|;|,) (?:then |now |have |'ve |just )*"
    r"(?:(?:i|we) (?:now |then )?(?:drive|have|use|own|ride|run|went with|got|bought|track \w+ (?:in|with))|bought|got|leased|purchased|"
    r"picked up|ordered|adopted|moved to|started|took up|began|"
    r"switched to|signed up (?:for|with)|joined|moved (?:my |our |the )?[\w-]+ (?:over )?to) (?P<b>[^,;]{1,80})",
    F,
)
USE_AS = re.compile(
    r"^(?:i|we) (?:use|run|have|keep) (?P<x>[^,;]{1,60}?) as (?:my|our) (?P<y>[^,;]{1,40})$"
    # "I'm using Hugo for my personal blog, hosted on Netlify": the tool of something of the user's
    r"|^(?:i'?m|we'?re|i am|we are) (?:now |currently |still )?using (?P<x2>[^,;]{1,60}?) (?:for|as|to run|to host) "
    r"(?:my|our) (?P<y2>[^,;.]{1,40})",
    F,
)
POSSESSIVE = re.compile(
    r"^(?:and |also |so |but )?(?P<s>(?:my|our|the team'?s?|our team'?s?)\s+[^,;]{1,60}?)\s+"
    r"(?:is|are|was changed to|is now|are now|has (?:moved|changed) to|moved to|lives (?:at|on|in)|runs (?:on|at)|"
    r"sits (?:on|at)|will be|=)\s+"
    + _end()
    + r"|^(?P<s2>(?:mon|ma|mes|notre|nos)\s+[^,;]{1,60}?)\s+(?:est|sont|s'appelle|se trouve|tourne sur|est maintenant|"
    r"a (?:migr[ée]|d[ée]m[ée]nag[ée]|chang[ée]) (?:vers|[àa]|pour))\s+"
    + _end()
    + r"|^(?P<s3>(?:mi|mis|nuestro|nuestra|nuestros|nuestras)\s+[^,;]{1,60}?)\s+(?:es|son|est[aá]|se llama|"
    r"ahora es|se (?:movi[oó]|mud[oó]|pas[oó]) a|migr[oó] a|cambi[oó] a)\s+"
    + _end()
    + r"|^(?P<s4>(?:o |a |os |as )?(?:meu|minha|meus|minhas|nosso|nossa|nossos|nossas)\s+[^,;]{1,60}?)\s+"
    r"(?:é|e|s[aã]o|est[aá]|se chama|agora [ée]|mudou para|migrou para|passou para|foi para)\s+"
    + _end()
    + r"|^(?P<s5>(?:我的|我们(?:组|团队|公司|项目|部门)?的)[^，,。]{1,20}?)(?:是|在|叫|改成了?|迁移到了?|换成了?|搬到了?)"
    + _end(),
    F,
)

# About the speaker: where they are, what they are, where they work.
SELF = re.compile(
    r"^(?:and |also |btw,? )?(?:i'?m|i am) (?:based |located |currently )?(?:in|at|from) (?P<x>.+)"
    r"|^(?:and |also )?(?:i'?m|i am) (?:a|an|the) (?P<r>.+)"
    # a job said by its work: "I work as a nurse", "I've been a paralegal for six years", "je travaille comme..."
    r"|^(?:and |also )?(?:i (?:now |currently |still )?work(?: (?:night|day|late|early|evening|weekend) shifts?| nights|"
    r" weekends| part[- ]time| full[- ]time| freelance)?|i'?m (?:now |currently )?working|i'?ve (?:been )?worked|"
    r"i have (?:been )?worked|i'?ve been working|i have been working|i'?m employed|i am employed|i'?ve been|"
    r"i have been|je travaille|trabajo|trabalho) (?:as|comme|como) (?!(?:a |an )?(?:team|group|pair|unit|one)\b)"
    r"(?:a |an |un |une |una |um |uma )?(?P<jb>.+)"
    r"|^(?:i'?ve been|i have been) (?:a|an) (?P<jb2>.+?\b(?:for|since)\b.+)"
    r"|^i (?:do|make) (?P<lv>.+?) for a living"
    # what the speaker is working towards: "I'm training for the Chicago marathon", "I'm learning Japanese"
    r"|^(?:and |also )?(?:i'?m|i am) (?:now |currently |still )?(?:training|preparing|studying) for (?P<tr>.+)"
    r"|^(?:and |also )?(?:i'?m|i am) (?:now |currently |still )?learning (?!(?:how|that|about|to)\b)(?P<lr>.+)"
    r"|^(?:i'?m|i am|i'?ve been|i have been|i became|i'?ve become|i'?ve gone|i went|je suis|soy|sou|eu sou|estoy|"
    r"estou) (?:now |also |a |an |strictly |fully |mostly )?"
    r"(?P<c>(?:allergic|allergique|al[eé]rgic[oa]|vegetarian|vegan|pescatarian|"
    r"v[eé]g[eé]tarien(?:ne)?|vegetarian[oa]|vegan[oa]?|left-handed|gaucher|zurd[oa]|canhot[oa]|colou?r-?blind|"
    r"dalt[oó]nic[oa]|daltonien(?:ne)?|diabetic|diab[eé]tique|diab[eé]tic[oa]|lactose|celiac|coeliac|c[eé]liaque|"
    r"cel[ií]ac[oa]|gluten[- ]free|dairy[- ]free|nut[- ]free|sugar[- ]free|halal|kosher|keto|paleo|teetotal|sober|"
    r"intolerant|asthmatic|epileptic|pregnant|deaf|hard of hearing|sans gluten|sin gluten|sem gl[uú]ten|"
    r"intol[eé]rant[e]?|embarazada|enceinte|gr[aá]vida).*)"
    r"|^i (?:don'?t|do not|can'?t|cannot|never|no longer|won'?t) (?:eat|drink|touch) (?P<d>.+)"
    # a condition said plainly: "I have type 2 diabetes", "I was diagnosed with asthma"
    r"|^(?:i have|i've got|i was diagnosed with|i've been diagnosed with|i suffer from|i live with) "
    r"(?P<hc>(?:type [12] |mild |severe |chronic )?(?:diabetes|asthma|epilepsy|celiac disease|coeliac disease|"
    r"crohn'?s(?: disease)?|ibs|migraines?|arthritis|adhd|hypertension|high blood pressure|a heart condition|"
    r"(?:a |an )?(?:nut|peanut|shellfish|gluten|egg|dairy|penicillin) allergy)\b.*)"
    r"|^(?:i have|i've got|j'ai|tengo|tenho|eu tenho) (?:a|an|two|three|one|un|une|deux|trois|uno|una|dos|tres|um|uma|"
    r"dois|duas|tr[eê]s) (?P<h>.+)"
    r"|^我(?:对)?(?P<zc>.{1,10}过敏|吃素|是素食者)"
    r"|^(?:and |also |so )?i (?:now |currently |still )?(?:live|work|am based|work remotely) (?:in|at|for|from|on) "
    r"(?P<w>.+)"
    r"|^(?:and |also |so )?(?:i|we) (?:have |'ve |just |recently |finally )*(?:moved|relocated) "
    r"(?:(?:away )?(?:from|out of) [^,;]{1,40}? )?(?:back )?(?:to|into|over to) "
    r"(?P<mv>.+)"
    r"|^(?:je suis|j'habite|je vis|je travaille) (?:[àa]|en|au|aux|chez|pour|dans|un|une) (?P<f>.+)"
    r"|^(?:soy|vivo|trabajo|estoy) (?:en|de|para|un|una) (?P<e>.+)"
    r"|^(?:eu )?(?:sou|moro|trabalho|estou) (?:em|no|na|de|do|da|para|um|uma) (?P<p>.+)"
    r"|^我(?:是|住在|在|来自)(?P<z>.+)",
    F,
)

CALL_ME = re.compile(
    r"\b(?:call me|my name is|je m'appelle|appelle[- ]moi|me llamo|ll[aá]mame|meu nome [ée]|me chame de|"
    r"pode me chamar de)\s+(?P<x>\S.{0,40})|我叫(?P<z>.{1,10})|叫我(?P<z2>.{1,10})",
    F,
)

# A change of value: "X moved to Y", "X is now Y", "we switched from A to B" (A is the old value).
CHANGE = re.compile(
    r"^(?P<s>[^,;]{2,60}?)\s+(?:has |have |just )?(?:moved|migrated|switched|changed|was renamed|been renamed|"
    r"was moved|got moved|is moving|is now|are now|is being moved) (?:over )?(?:to|from|at|on)?\s*"
    + _end()
    + r"|^(?P<s2>[^,;]{2,60}?)\s+(?:is|are) (?P<y2>.+?) now$"
    + r"|^(?P<s3>[^,;]{2,60}?)\s+(?:a (?:d[ée]m[ée]nag[ée]|migr[ée]|chang[ée]|[ée]t[ée] d[ée]plac[ée])|est pass[ée]e?|"
    r"est maintenant|sont maintenant)\s+(?:vers|[àa]|sur|en|dans)?\s*"
    + _end()
    + r"|^(?P<s4>[^,;]{2,60}?)\s+(?:se (?:movi[oó]|mud[oó]|pas[oó])|migr[oó]|cambi[oó]|ahora es|ahora est[aá]|"
    r"ahora son)\s+(?:a|al|en|de)?\s*"
    + _end()
    + r"|^(?P<s5>[^,;]{2,60}?)\s+(?:mudou|migrou|passou|foi movid[oa]|agora [ée]|agora est[aá]|agora s[aã]o)\s+"
    r"(?:para|pro|pra|a|de)?\s*"
    + _end()
    + r"|^(?P<s6>[^，,。]{1,20}?)(?:已经|现在)?(?:迁移到了?|搬到了?|改成了?|换成了?|改为|现在是|已改为)"
    + _end(),
    F,
)
FROM_TO = re.compile(
    r"\bfrom (?P<a>[\w.+#/-]+(?: [\w.+#/-]+)?) to (?P<b>[\w.+#/-]+)|\bno longer (?:use |using |on )?(?P<n>[\w.+#/-]+)"
    r"|\bprefer\w* [\w.+#/-]+(?: [\w.+#/-]+)? (?:over|to) (?P<o>[\w.+#/-]+)"
    r"|\b(?:instead of|rather than|au lieu de|plut[oô]t que|en lugar de|en vez de|em vez d[oea]s?|ao inv[eé]s d[oea]s?) "
    r"(?P<i>[\w.+#/-]+)|\bde (?P<a2>[\w.+#/-]+) (?:[àa]|a|para|pra|vers) (?P<b2>[\w.+#/-]+)"
    r"|\bplus (?:de |d')?(?P<n2>[\w.+#/-]+)|\bya no (?:usamos )?(?P<n3>[\w.+#/-]+)|\bn[aã]o usamos mais (?P<n4>[\w.+#/-]+)"
    r"|从(?P<a3>[\w.+#/-]+)(?:换成|改成|迁移到|切换到|转到)",
    F,
)

# A dated statement about something named: "the audit is on 2031-05-14", "la entrega es el 30 de septiembre".
DATED = re.compile(
    r"^(?:the|our|my|this|next|la|le|les|el|los|las|a|o|os|as|nuestra|nuestro|notre|nossa|nosso|mi|mon|ma|meu|minha)\s+"
    r"(?P<s>[^,;]{2,60}?)\s+(?:is|are|will be|falls|happens|takes place|is due|is scheduled|est|sera|aura lieu|es|ser[aá]|"
    r"tiene lugar|[eé]|s[aã]o|ser[aá]|vence|acontece)\b"
    r"|^(?P<s2>[^，,。]{2,20}?)(?:是|在|定在|安排在)",
    F,
)

# "My colleague Karim handles the database", "our sprint ends every second Friday", "nosso time faz deploy às terças":
# something of mine or ours, and what it does (a stable relation, not a failure of the moment).
OWN_VERB = re.compile(
    r"^(?P<s>(?:my|our|mon|ma|mes|notre|nos|mi|mis|nuestro|nuestra|nuestros|nuestras|meu|minha|meus|minhas|nosso|nossa|"
    r"nossos|nossas|o meu|a minha|o nosso|a nossa)\s+[^\s,;]+(?:\s+[^\s,;]+)?)\s+"
    r"(?!(?:fails?|crash\w*|breaks?|broke|hangs?|errors?|throws?|doesn'?t|does not|keeps?|isn'?t|won'?t|can'?t|"
    r"stopped|failed|plante|marche pas|falla|fall[oó]|n[aã]o|no|when|where|and|or|the|that|which|who|if|because|but|"
    r"then|has|have|had|will|would|can|could|should|must|to|in|on|at|for|with|quand|que|qui|et|ou|cuando|donde|y|"
    r"quando|onde|e|ou)\b)"
    r"(?P<v>[^\s,;]+(?:s|e|a|ons|amos|emos|imos|ent|am|em)|s'occupe|se encarga|cuida|faz|fait|hace|g[eè]re|dirige)\b\s+\S+"
    r"|^(?P<z>(?:我的|我们(?:组|团队|公司|项目|部门)?的)[^，,。]{1,12}?)(?:负责|管理|每|在|用)",
    F,
)
# A standing fact about the team's or the user's things, said plainly, with no "we" or "my" in it: "The frontend is
# built with SvelteKit", "All our servers run in us-west-2", "Tests are run with nox", "Production secrets live in
# Vault", "The company's financial year ends on 30 June", "The data warehouse is Snowflake". Its subject names a thing
# (not "it" or "this": the code at hand; not a verb: a request), its verb is a habitual present of how things are, and
# nothing in it is a failure or an event of the moment (:data:`TRANSIENT`).
_STATE_VERB = (
    r"(?:always\s+|usually\s+|only\s+|all\s+)?(?:runs?|lives?|keeps?|starts?|ends?|supports?|uses?|happens?|goes|go|"
    r"sits?|stays?|holds?|belongs?|expires?|rotates?|resets?|closes?|opens?|listens?|points?|defaults?|requires?|"
    r"depends?|stores?|ships?|deploys?|retains?|targets?|lasts?|costs?)\b(?!\s+\w+ing\b)"
    r"|(?:is|are)\s+(?:always\s+|usually\s+|only\s+|all\s+)?(?:built|written|hosted|deployed|run|stored|kept|managed|"
    r"generated|tracked|handled|served|maintained|owned|scheduled|packaged|tested|configured|defined|located|based|"
    r"done|made|pinned|locked|limited|capped|released|backed up)\s+(?:with|on|in|by|at|through|using|via|from|under|"
    r"to|for|as|every|each)\b|(?:is|are)\s+(?:called|named)\b"
)
_NOT_A_THING = (
    r"(?!(?:it|this|that|these|those|there|here|he|she|they|you|i|we|which|what|who|make|ensure|check|add|fix|write|"
    r"create|update|remove|delete|set|use|run|deploy|build|please|let|help|try|change|move|rename|refactor|implement|"
    r"show|tell|give|find|get|put|keep|open|close|start|stop|install|configure|explain|generate|convert|translate|"
    r"summari[sz]e|review|test|see|look|note|remember|just|maybe|perhaps|also|then|now|so)\b)"
)
STATE = re.compile(
    r"^(?P<s>(?:(?:all|both|most|every|each)\s+(?:of\s+)?)?(?:(?:the|our|my|all)\s+)?"
    + _NOT_A_THING
    + r"[\w.'’/-]+(?:\s+(?!(?:is|are)\b)[\w.'’/-]+){0,6}?)\s+(?:"
    + _STATE_VERB
    + r")\s*(?P<x>.+)",
    F,
)
# "The data warehouse is Snowflake": a plain "is" states a fact only of a thing of the work or the user's setting.
WORK_THING = re.compile(
    r"^(?:the|our|all)\s+(?P<s>(?:[\w.'’-]+\s+){0,3}(?:warehouse|database|db|cluster|servers?|backend|frontend|api|"
    r"app|site|website|repo|repository|monorepo|registry|bucket|queue|broker|cache|ci|pipeline|stack|tracker|wiki|"
    r"docs|office|company|region|year|system|staging|production|prod|services?|domain|vpn|manager|lead|owner|"
    r"language|framework|editor|ide|os|platform|provider|host|hosting|cloud|bank|landlord|doctor|dentist|gym|school|"
    r"bus|store|tools?|runner|scheduler|orm|library|cdn|dns|proxy|gateway|balancer|router|monitoring|alerting))"
    r"\s+(?:is|are)\s+(?P<x>.+)",
    F,
)
TRANSIENT = re.compile(
    r"\b(?:fail\w*|broken|break\w*|crash\w*|errors?|down|slow|wrong|stuck|hang\w*|timeout|timed out|"
    r"not working|doesn'?t|does not|won'?t|can'?t|cannot|isn'?t|aren'?t|today|tonight|right now|yesterday|just|"
    r"still|anymore|weird|strange|odd|again)\b",
    F,
)

SELF_OWN = re.compile(
    r"^i (?:drive|own|ride|have got|play|speak|study|teach) (?:a |an |the |two |three )?(?P<x>.+)"
    # a business the user runs: "I run a small bakery in Porto", "we own a dental practice"
    r"|^(?:i|we) (?:run|own|co-own|manage|founded|started|opened) (?:a |an |my |our )(?:small |little |family |local "
    r"|new |tiny |two |three )*(?P<b>(?:business|bakery|cafe|coffee shop|restaurant|bistro|shop|store|boutique|studio|"
    r"agency|salon|practice|clinic|startup|company|firm|farm|bar|gym|school|nonprofit|charity|blog|podcast|channel|"
    r"newsletter|etsy shop|food truck)\b.*)"
    # a schedule the user keeps: "I'm on the night shift at the hospital this month"
    r"|^(?:i'?m|i am) (?:now |currently |still )?(?:on|doing|working) (?:the |a )?(?P<sh>(?:night|day|late|early|"
    r"evening|weekend|graveyard|morning) shifts?\b.*)",
    F,
)

QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|how|why|when|where|do|does|did|is|are|was|were|can|could|would|should|will|shall|"
    r"have|has|may|qu'est|quel|quelle|quels|quelles|comment|pourquoi|est-ce|o[uù]|qu[eé]|cu[aá]l|c[oó]mo|d[oó]nde|"
    r"cu[aá]ndo|por qu[eé]|o que|qual|quais|quando|onde|por que)\b",
    F,
)
CONDITIONAL = re.compile(r"^(?:if|suppose|imagine|what if|si|supongamos|se|caso|如果|假如|假设)\b", F)
# The topic patterns below read the folded text (case-folded, accents removed: see text.fold).
ANSWER_STYLE = re.compile(
    r"\b(?:answer|repl|respon|write (?:to me |back |me )?in|talk to me|speak to me|explain|explan|language|tone|unit|metric|imperial|celsius|fahrenheit|concis|"
    r"brief|short|terse|detail|verbose|bullet|markdown|emoji|format|formal|informal|casual|code block|table|reponse|"
    r"repond|ecri|langue|metrique|bref|breve|respuesta|responde|idioma|unidad|metrico|resposta|lingua|curt|detalh|"
    r"tom|tono|ton|tableau|tabla|tabela|lista|liste|spell|orthograph|ortograf|tutoi|vouvoi|tutea|tuteame|trate)\w*|回答|回复|语言|单位|公制|简洁|简短|详细|格式|表格|语气",
    F,
)
LANGUAGE = re.compile(
    r"\b(?:english|french|spanish|portuguese|german|italian|chinese|japanese|korean|dutch|anglais|fran[cç]ais|"
    r"espagnol|portugais|allemand|ingles|frances|espanol|portugues|alemao|aleman|chino|chines|mandarin)\b"
    r"|中文|英文|英语|法语|西班牙语|葡萄牙语|德语|日语",
    F,
)
UNITS = re.compile(
    r"\b(?:metric|imperial|celsius|fahrenheit|kilomet\w*|miles|km|kg|pounds|units?|unit[ée]s|unidades|"
    r"m[ée]tric[oa]?|m[ée]trique)\b|公制|英制|摄氏|华氏|单位",
    F,
)
LENGTH = re.compile(
    r"\b(?:concise|brief|short|terse|succinct|detailed|verbose|long|lengthy|concis[e]?|bref|br[eè]ve|courte?s?|"
    r"d[ée]taill[ée]e?s?|conciso|concisa|breve|corto|corta|detallad[oa]s?|curt[oa]s?|detalhad[oa]s?|resumid[oa]s?)\b"
    r"|简洁|简短|详细|啰嗦",
    F,
)
TIMEZONE = re.compile(
    r"\b(?:time ?zone|(?:utc|gmt)(?:[+-]\d{1,2})?|cet|cest|pst|pdt|edt|bst|jst|aest|fuseau|zona horaria|fuso|"
    r"heure de \w+|hora de \w+|horario de \w+|in \w+ time|\w+ time zone)\b|时区|时间为准",
    F,
)
# A directive about how to answer: it addresses the assistant's output (answers, replies, explanations, "write to
# me", "talk to me") or instructs it ("always", "never", "please", "from now on"). A remark that only mentions a style
# word ("I prefer short walks", "I love the tone of that song", "I'm learning Spanish") is not one: it never becomes a
# standing preference injected on every turn.
ADDRESSED = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|respond|responses?|explain|explanations?|summar(?:y|ies)|write (?:to me|back|me|your)|"
    r"talk to me|speak to me|address me|your (?:answers|replies|responses|output|code|examples|messages)|"
    r"(?:give|show|send|tell) me|(?:please|always|never|don'?t|do not)\b|"
    r"(?:every|each|all|any)\b[^.]{0,40}\b(?:must|should|has to|have to|needs? to)\b|"
    r"r[ée]pon(?:ds|dez|se|ses)|[ée]cris[- ]moi|parle[- ]moi|explique|toujours|jamais|s'il te pla[iî]t|"
    r"resp[oó]nde(?:me)?|respuestas?|h[aá]blame|escr[ií]beme|explica|siempre|nunca|por favor|"
    r"responda|respostas?|fale comigo|escreva|sempre)\b|回答|回复|答复|请|总是|始终|永远不要|不要",
    F,
)
_PROFESSIONS = (
    "engineer developer designer manager student teacher scientist researcher nurse doctor lawyer analyst architect "
    "consultant accountant chef cook pilot writer author artist musician programmer intern director founder ceo cto "
    "cfo officer clerk technician mechanic electrician plumber carpenter farmer pharmacist dentist therapist "
    "psychologist professor lecturer tutor editor journalist photographer translator salesperson marketer recruiter "
    "administrator admin lead freelancer contractor"
)
PROFESSIONS = frozenset(map(stem, _PROFESSIONS.split(" ")))
PROJECT_WORDS = re.compile(
    r"\b(?:we|our|team|project|repo|repository|codebase|service|services|sprint|release|deploy\w*|pipeline|ci|cd|"
    r"staging|production|prod|cluster|database|db|server|backend|frontend|api|stack|stand-?up|"
    r"nous|notre|nos|on|[ée]quipe|projet|d[ée]p[oô]t|nosotros|nuestr[oa]s?|equipo|proyecto|n[oó]s|noss[oa]s?|"
    r"equipe|projeto)\b|我们|团队|项目|服务器|数据库|部署",
    F,
)

_WEEKDAYS = {
    0: r"monday|lundi|lunes|segunda(?:-feira)?|周一|星期一",
    1: r"tuesday|mardi|martes|ter[cç]a(?:-feira)?|周二|星期二",
    2: r"wednesday|mercredi|mi[eé]rcoles|quarta(?:-feira)?|周三|星期三",
    3: r"thursday|jeudi|jueves|quinta(?:-feira)?|周四|星期四",
    4: r"friday|vendredi|viernes|sexta(?:-feira)?|周五|星期五",
    5: r"saturday|samedi|s[aá]bado|周六|星期六",
    6: r"sunday|dimanche|domingo|周日|星期日|星期天",
}
_MONTHS = [
    r"jan(?:uary|vier|uar)?|janv|enero|janeiro",
    r"feb(?:ruary)?|f[ée]v(?:rier)?|febrero|fevereiro",
    r"mar(?:ch)?|mars|marzo|mar[cç]o",
    r"apr(?:il)?|avril|abril",
    r"may|mai|mayo|maio",
    r"jun(?:e)?|juin|junio|junho",
    r"jul(?:y)?|juillet|julio|julho",
    r"aug(?:ust)?|ao[uû]t|agosto",
    r"sep(?:t|tember)?|septembre|septiembre|setembro",
    r"oct(?:ober)?|octobre|octubre|outubro",
    r"nov(?:ember)?|novembre|noviembre|novembro",
    r"dec(?:ember)?|d[ée]cembre|diciembre|dezembro",
]
_ISO = re.compile(r"(?<!\d)(20\d\d)-(\d\d)-(\d\d)(?!\d)")
_REL = re.compile(
    r"\b(?P<d1>tomorrow|demain|ma[nñ]ana|amanh[aã])\b|(?P<d1z>明天)|\b(?P<w>next week|la semaine prochaine|"
    r"la semana que viene|la pr[oó]xima semana|semana que vem|pr[oó]xima semana)\b|(?P<wz>下周)|"
    r"\b(?P<t>today|tonight|aujourd'hui|ce soir|hoy|esta noche|hoje|esta noite)\b|(?P<tz>今天|今晚)",
    F,
)
_WEEKDAY = re.compile("|".join(f"(?P<wd{i}>{p})" for i, p in _WEEKDAYS.items()), F)
_MONTH_DAY = re.compile(
    r"\b(?:(?P<m1>" + "|".join(f"(?:{m})" for m in _MONTHS) + r")\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?"
    r"|(?P<d2>\d{1,2})(?:st|nd|rd|th|er)?\s+(?:de\s+)?(?P<m2>" + "|".join(f"(?:{m})" for m in _MONTHS) + r"))\b"
    r"|(?P<mz>\d{1,2})月(?P<dz>\d{1,2})[日号]",
    F,
)
DAY = 86400.0


def event_date(text: str, now: float | None = None) -> float | None:
    """When a dated statement's date falls (the end of that day, UTC), or None when it names no date."""
    now = time.time() if now is None else now
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day: datetime | None = None
    if m := _ISO.search(text):
        try:
            day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
        except ValueError:
            day = None
    elif m := _MONTH_DAY.search(text):
        if m.group("mz"):
            month, dom = int(m.group("mz")), int(m.group("dz"))
        else:
            name = (m.group("m1") or m.group("m2")).casefold()
            month = next(i + 1 for i, p in enumerate(_MONTHS) if re.fullmatch(p, name, F))
            dom = int(m.group("d1") or m.group("d2"))
        try:
            day = datetime(today.year, month, dom, tzinfo=UTC)
            if day < today - timedelta(days=31):
                day = day.replace(year=today.year + 1)
        except ValueError:
            day = None
    elif m := _REL.search(text):
        days = 1 if (m.group("d1") or m.group("d1z")) else 7 if (m.group("w") or m.group("wz")) else 0
        day = today + timedelta(days=days)
    elif m := _WEEKDAY.search(text):
        wd = next(int(k[2:]) for k, v in m.groupdict().items() if v)
        day = today + timedelta(days=(wd - today.weekday()) % 7 or 7)
    return day.timestamp() + DAY if day is not None else None


# Lead-ins that carry no content: "btw,", "quick note:", "oh and", "PS", "au fait", "por cierto", "aliás", "顺便说一下".
LEAD = re.compile(
    r"^(?:(?:hi|hey|hello|ok|okay|so|also|and|oh|ah|well|thanks|d'ailleurs|aussi|et|adem[aá]s|y|ah|e|tamb[eé]m)"
    r"[,:!.\-\s]+"
    # the label a rule is written under ("Style: keep answers short")
    rf"|(?:{'|'.join(RULE_LABELS)})s?[ \t]*:[ \t]*)+",
    F,
)
# Lead-ins that tell the assistant something on purpose ("btw", "fyi", "heads up", "for the record"): what follows is
# as explicit as "remember that".
INFORM = re.compile(
    r"^(?:btw|by the way|fyi|ps|p\.s\.|quick note|small note|just a note|side note|heads[- ]up|one more thing|"
    r"for context|for your information|important|note well|nb|n\.b\.|au fait|pour info|pour information|petite "
    r"pr[ée]cision|attention|important|por cierto|ojo|ojito|atenci[oó]n|aviso|importante|nota|para tu "
    r"informaci[oó]n|para que sepas|ali[aá]s|s[oó] pra constar|para sua informa[cç][aã]o)[,:!.\-\s]+"
    r"|^(?:顺便说一下|顺便说|顺便|另外|对了|补充一下|注意|提醒一下)[，,:：\s]*",
    F,
)


@dataclass
class Forget:
    """A request to forget: the words of what is to go."""

    about: str


# A sentence ends at a stop, not at a title's or a common abbreviation's ("Dr. Hale", "St. Mary's", "e.g. this").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+|;\s+")
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(?:Dr|Mr|Ms|Mrs|St|Sr|Jr|Mt|Prof|No|vs|etc|approx|Inc|Ltd|Co|Ave|Sra|Mme|Mlle|e\.g|i\.e)\.$", re.I
)


def sentences(text: str) -> list[str]:
    """The user's text as statements: code blocks and quoted lines out, split at sentence ends. An inline code span
    stays as it was said (`make deploy-prod`): it is kept whole through the split."""
    text = re.sub(r"```[\s\S]*?```", " ", text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))
    spans: list[str] = []

    def hold(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    text = re.sub(r"`[^`\n]+`", hold, text)
    parts: list[str] = []
    for p in _SENTENCE_END.split(text):
        if parts and _ABBREVIATION.search(parts[-1]):
            parts[-1] += " " + p
        else:
            parts.append(p)
    back = re.compile(r"\x00(\d+)\x00")
    return [back.sub(lambda m: spans[int(m.group(1))], p.strip()) for p in parts if p and p.strip()]


def _clean(x: str) -> str:
    return x.strip().strip(" .,;:!。，！").strip("\"'“”«»「」")


def _is_question(s: str) -> bool:
    s2 = re.sub(r"^(?:so|and|but|ok|okay|hey|hi|et|pero|mas|e)[,\s]+", "", s, flags=F)
    return s.rstrip().endswith(("?", "？", "吗", "呢")) or bool(QUESTION_START.match(s2)) or "什么" in s or "怎么" in s


# Words that qualify an attribute without naming another one ("my new manager" is the manager; "my email address" the
# email): left out of its subject, so the new statement supersedes the old.
_QUALIFIERS = frozenset(
    map(stem, ["new", "current", "latest", "old", "former", "present", "updated", "actual", "main", "primary", "usual"])
)
_HEADS = frozenset(map(stem, ["address", "number", "id", "handle", "account"]))


# Where the user works, said with the employer: the job, whatever its title
EMPLOYER = re.compile(
    r"^(?:and |so |also |btw,? )?(?:i (?:now |currently |still )?work (?:at|for) (?!home\b|the office\b|myself\b|"
    r"a living\b|free\b)\S|i'?m (?:now |currently )?working (?:at|for) (?!home\b|the office\b|myself\b)\S|i (?:have |'ve )?(?:just |recently |finally )?(?:started|began|landed|got|accepted|took) (?:a |my |the )?"
    r"(?:new )?(?:job|role|position|internship)\b|i (?:have |'ve )?(?:just |recently )?(?:joined|started (?:working )?"
    r"at) [A-Z]\S*(?: \S+)? (?:as|last|this|in)\b)",
    F,
)
SWITCHED_TO = re.compile(
    r"^(?:and |so |also )?(?:i|we) (?:have |'ve |just |recently |finally |now )*(?:switched|moved|changed|upgraded|"
    r"migrated|went|gone) (?:over )?to (?:an? |the |my |our )?(?P<b>[^,;]{2,60})",
    F,
)
# What a product named by its brand is (memory.text.BRANDS), for "I switched to an iPhone" to replace "my phone is a
# Pixel".
_BRAND = {brand: thing for thing, brands in BRANDS.items() for brand in brands.split()}


def _thing_of(value: str) -> str | None:
    """The thing a value names by its brand ("an iPhone 15" is a phone), or None."""
    return next((_BRAND[w] for w in fold(value).split() if w in _BRAND), None)


def _subject_key(words: str) -> str:
    ts = set(term_set(words)) - _QUALIFIERS
    if ts - _HEADS:
        ts -= _HEADS
    return " ".join(sorted(ts)[:6])


def _topic(text: str) -> tuple[str | None, bool]:
    """A preference's topic (so a newer one on the topic replaces it) and whether it is a standing directive about
    how to answer (only then is it injected on every turn; see :data:`ADDRESSED`)."""
    text = fold(text)
    if CALL_ME.search(text):
        return "name", _names_me(text)
    directed = bool(ADDRESSED.search(text) or FROM_NOW.search(text)) and not _ONE_OFF.search(text)
    style = bool(ANSWER_STYLE.search(text))
    if LANGUAGE.search(text) and (style or FROM_NOW.search(text)):
        return "answer-language", directed
    if UNITS.search(text):
        return "units", directed
    if LENGTH.search(text) and style:
        return "answer-length", directed
    if TIMEZONE.search(text):
        return "timezone", True
    return None, style and directed


# A standing directive: how the assistant is to answer from now on, said as an instruction ("Keep answers under 100
# words", "Always end your answers with a haiku", "I'd like all code examples in TypeScript", "Tus respuestas deben ser
# breves", "Antworte immer auf Deutsch"). Three parts, all on the folded text: the assistant's output named generically
# (answers, every reply, your responses, "whenever you explain": not "the explanation", "this article", "diese
# Frage", which a one-off request names), or a word that makes it hold every time (always, never, every time, from now
# on); and the mood of an instruction (an imperative first word; or "I want/need/'d like", "answers should/must",
# which must name the output).
_OUTPUT = (
    r"(?:answers?|repl(?:y|ies)|responses?|explanations?|summar(?:y|ies)|messages?|output|examples?|"
    r"code (?:examples?|samples?|snippets?|blocks?)|(?:email )?drafts?|emails? you (?:write|draft)|"
    r"reponses?|explications?|resumes?|respuestas?|explicaciones?|resumenes?|respostas?|explicacoes?|"
    r"antworten|erklarungen|zusammenfassungen|risposte|spiegazioni|antwoorden|uitleg)"
)
_GENERIC_OUTPUT = re.compile(
    r"\b(?:your|all|every|each|any|all (?:of )?your|tes|vos|toutes? (?:les|tes|vos)|chaque|tus|sus|todas? (?:las|tus|sus)|"
    r"cada|tuas|suas|todas? (?:as|tuas|suas)|deine|ihre|alle|jede|jeder|jedes|le tue|tutte le|ogni|je|jouw|alle|elke)\s+"
    r"(?:\w+\s+){0,2}?" + _OUTPUT + r"\b"
    # a bare plural ("Keep answers under 100 words"): "Write an answer to this complaint" names one
    r"|^(?:please\s+)?(?:(?!(?:the|a|an|this|that|these|those|my|our|his|her|their)\b)\w+\s+){0,3}?"
    r"(?:answers|replies|responses|explanations|summaries|messages|examples)\s+"
    r"(?:to|in|with|under|without|that|as|should|must)\b"
    r"|\b(?:code|scripts?|sql|queries|tests?|commit messages?) (?:that )?you (?:write|generate|produce|give me)\b"
    r"|\b(?:when(?:ever)?|each time|every time|any time|anytime) you (?:answer|reply|respond|explain|write|"
    r"summari[sz]e|draft|suggest|give|show|list|quote|code)\b"
    r"|\b(?:quand(?: tu| vous)?|chaque fois que (?:tu|vous)|cuando|siempre que|cada vez que|quando|sempre que|"
    r"wenn du|immer wenn|quando|ogni volta che|wanneer je|als je) (?:\w+ )?(?:reponds|repondez|expliques|ecris|"
    r"respondas|expliques|escribas|responder|explicar|escrever|antwortest|erklarst|schreibst|rispondi|spieghi|"
    r"scrivi|antwoordt|uitlegt|schrijft)\b",
    F,
)
# What makes an instruction hold every time: a phrase anywhere ("every time", "from now on"), or a bare "always" or
# "never" on the instruction itself, before its verb or right after it ("Always cite", "Antworte immer"). Inside a
# task's clause it is the task's ("Write a function that always returns a list", "Make sure it never throws").
_EVERY_TIME = re.compile(
    r"\b(?:every time|each time|all the time|by default|from now on|going forward|in (?:the )?future|no matter what|"
    r"a chaque fois|cada vez|toda vez|jedes mal|grundsatzlich|ogni volta|elke keer)\b|每次|以后|今后|总是|始终|永远"
    r"|\b(?:every|each|all|any)\s+(?:\w+\s+){0,2}?(?:you|u)\s+(?:write|generate|produce|create|make|draft|edit|touch)\b"
    # the user's future requests as the condition: "when I ask for a recipe, list the ingredients in grams"
    r"|^(?:when(?:ever)?|if|any ?time|each time|every time)\s+(?:i|we)\s+(?:ask|request|want|need|send|share|give "
    r"you|paste|mention|type|say)\b[^,;]{0,60},",
    F,
)
_ALWAYS = re.compile(
    r"\b(?:always|never|ever|toujours|jamais|siempre|nunca|sempre|immer|stets|niemals|nie|mai|altijd|nooit)\b",
    F,
)
_LEAD_CLAUSE = r"^(?:[^,;:]{1,60}[,:]\s*)?"  # "When you explain X, use ...", "From now on, address me as ..."
_IMPERATIVE = re.compile(
    _LEAD_CLAUSE + r"(?:(?:please|pls|kindly|always|never|ever|do not|don'?t|make sure (?:to|you)|be sure to|"
    r"remember to|try to|just|also|toujours|jamais|ne|s'il te plait|siempre|nunca|no|por favor|sempre|nao|"
    r"bitte|immer|nie|niemals|per favore|non|mai|altijd|nooit|alsjeblieft)\s+|n')*"
    r"(?:answer|reply|respond|write|keep|make|be|start|begin|end|finish|close|open|sign(?: off)?|format|put|give|show|"
    r"include|add|use|cite|mention|number|label|wrap|limit|cap|avoid|skip|stop|quit|explain|list|link|translate|round|"
    r"convert|spell|address|call|talk|speak|ask|offer|suggest|lead|follow|summari[sz]e|apologi[sz]e|"
    r"reponds|repondez|ecris|ecrivez|utilise|utilisez|garde|gardez|commence|commencez|termine|terminez|mets|mettez|"
    r"donne|donnez|cite|citez|explique|expliquez|evite|evitez|ajoute|ajoutez|parle|parlez|tutoie|vouvoie|"
    r"responde|respondeme|escribe|escribeme|usa|utiliza|manten|empieza|comienza|termina|pon|da|dame|cita|explica|"
    r"evita|anade|habla|hablame|uses|utilices|pongas|escribas|digas|anadas|incluyas|respondas|hables|"
    r"responda|escreva|use|utilize|mantenha|comece|termine|coloque|de|cite|explique|"
    r"evite|adicione|fale|antworte|antworten sie|schreib|schreibe|benutze|verwende|halte|beginne|fange|beende|"
    r"gib|nenne|erklare|vermeide|fuge|sprich|duze|siez|rispondi|scrivi|usa|utilizza|mantieni|inizia|comincia|"
    r"termina|metti|dai|cita|spiega|evita|aggiungi|parla|antwoord|schrijf|gebruik|houd|begin|eindig|zet|geef|"
    r"noem|leg uit|vermijd|voeg|spreek"
    # the infinitives a polite request takes ("pourrais-tu toujours répondre...", "¿podrías responder siempre...")
    r"|repondre|ecrire|utiliser|garder|commencer|terminer|mettre|donner|citer|expliquer|eviter|ajouter|parler|"
    r"responder|escribir|usar|utilizar|mantener|empezar|comenzar|poner|dar|explicar|evitar|anadir|hablar|incluir|"
    r"escrever|manter|comecar|colocar|adicionar|falar|antworten|schreiben|benutzen|verwenden|halten|beginnen|"
    r"beenden|geben|nennen|erklaren|vermeiden|sprechen|rispondere|scrivere|usare|utilizzare|mantenere|iniziare|"
    r"terminare|mettere|dare|spiegare|evitare|aggiungere|parlare|antwoorden|schrijven|gebruiken|houden|beginnen|"
    r"geven|noemen|uitleggen|vermijden|toevoegen|spreken)\b"
    r"|^(?:请|以后|今后|每次|所有|你的|你|总是|始终|永远|一直)*(?:用\S{1,6})?(?:回答|回复|答复)",
    F,
)
# A wish for the output, or a rule for it: these name the output itself ("I want answers...", "answers should...").
_WISH = re.compile(
    r"^(?:i|we)(?:'d|\s+would)?\s+(?:\w+\s+)?(?:want|need|expect|prefer|like)\b"
    r"|^(?:je|nous)\s+(?:\w+\s+)?(?:veux|voudrais|prefere|aimerais|souhaite)\b|^(?:quiero|quisiera|prefiero|necesito)\b"
    r"|^(?:eu\s+)?(?:quero|gostaria|prefiro|preciso)\b|^ich\s+(?:\w+\s+)?(?:will|mochte|hatte gern|brauche|bevorzuge)\b"
    r"|^(?:voglio|vorrei|preferisco)\b|^ik\s+(?:\w+\s+)?(?:wil|zou graag|verwacht)\b"
    r"|(?:^(?:please\s+)?|\b(?:your|all(?: of)?(?: your)?|every|each|tes|vos|toutes (?:les|tes|vos)|tus|todas (?:las|tus)|"
    r"tuas|todas as|deine|alle|le tue|tutte le|jouw|al je)\s+)" + _OUTPUT + r"\s+(?:\w+\s+)?(?:should|must|need to|"
    r"have to|are to|ought to|shall|doivent|devraient|deben|tienen que|devem|precisam|sollen|sollten|mussen|devono|"
    r"dovrebbero|moeten)\b"
    r"|\b(?:code|scripts?|sql|queries|tests?) (?:that )?you (?:write|generate|produce)(?:\s+\w+){0,3}\s+"
    r"(?:should|must|needs? to|has to)\b",
    F,
)
# A one-off: a reference to what was just said or to this request ("the short answer you gave", "this time").
_ONE_OFF = re.compile(
    r"\b(?:you (?:just )?(?:gave|wrote|said|sent|made|did)|you just|this time|for now|right now|this (?:one|answer|"
    r"reply|email|article|question)|that (?:answer|reply|one)|above|below|cette fois|esta vez|desta vez|diesmal|"
    r"dieses mal|questa volta|deze keer)\b",
    F,
)


# Words that open a clause of the task's own between an instruction's verb and an "always" ("... a test that always").
_CLAUSE_WORDS_TEXT = (
    "that which who so if when because it its the a an this these those que qui dass che die der das het een"
)
_CLAUSE_WORDS = frozenset(_CLAUSE_WORDS_TEXT.split())
_LAST_WORD = re.compile(r",\s*(?:always|every time|toujours|siempre|sempre|immer|sempre|altijd)[.!]?$", F)


def standing_directive(statement: str) -> bool:
    """Whether a statement tells the assistant how to answer from now on: an instruction (:data:`_IMPERATIVE`) that
    names the output generically or holds every time, or a wish or rule for the output (:data:`_WISH`) that names it."""
    text = fold(statement.strip())
    if text.endswith(("?", "？")) or _ONE_OFF.search(text):
        return False
    if _WISH.search(text):
        return bool(_GENERIC_OUTPUT.search(text))
    verb = _IMPERATIVE.search(text)
    if verb is None:
        return False
    if _GENERIC_OUTPUT.search(text) or _EVERY_TIME.search(text):
        return True
    always = _ALWAYS.search(text)
    if always is None:
        return False
    gap = text[verb.end() : always.start()].split()
    return (
        always.start() < verb.end() or (len(gap) <= 2 and not set(gap) & _CLAUSE_WORDS) or bool(_LAST_WORD.search(text))
    )


DIRECTIVE_CHARS = 2000  # a message longer than this is a task or a paste, not a directive said in passing


def holds_directive(text: str) -> bool:
    """Whether a user's message states a standing directive: the learner files it at once (the rules cost
    microseconds) rather than with the session's next batch, so the next conversation already follows it."""
    return len(text) <= DIRECTIVE_CHARS and any(
        standing_directive(s) or asked_directive(LEAD.sub("", s).strip() or s) is not None for s in sentences(text)
    )


_NAME_ONLY = re.compile(
    r"(?:^|[.!,]\s*)(?:please\s+|you can\s+|just\s+)?(?:call me|my name is|je m'appelle|appelle[- ]moi|me llamo|"
    r"ll[aá]mame|meu nome [ée]|me chame de|pode me chamar de)\s+[\w.'-]+(?:\s+[\w.'-]+)?\s*[.!]?\s*$|我叫|叫我",
    F,
)


def _names_me(text: str) -> bool:
    """ "Call me Sam" (a name to use), not a passing "call me when you're free" or "call me crazy"."""
    return bool(_NAME_ONLY.search(text)) and not re.search(r"\bcall me (?:when|if|back|later|crazy|old|a)\b", text, F)


def _kind(text: str, default: str) -> str:
    if default == "fact" and PROJECT_WORDS.search(text):
        return "project"
    return default


def _old_values(text: str) -> list[str]:
    out = []
    for m in FROM_TO.finditer(text):
        for g in ("a", "n", "i", "o", "a2", "n2", "n3", "n4", "a3"):
            v = m.group(g)
            if v and term_set(v):
                out.append(v)
    return out


class _Reading:
    """What :func:`classify` reads of a statement besides its patterns (the topic, the old values it replaces, its
    date), each read once and only when a pattern that needs it matched: most statements of a chat match none, and
    reading all three first was most of the rule extractor's time."""

    def __init__(self, s: str, now: float) -> None:
        self.s = s
        self.now = now

    @cached_property
    def topic_standing(self) -> tuple[str | None, bool]:
        return _topic(self.s)

    @property
    def topic(self) -> str | None:
        return self.topic_standing[0]

    @property
    def standing(self) -> bool:
        return self.topic_standing[1]

    @cached_property
    def replaces(self) -> list[str]:
        return _old_values(self.s)

    @cached_property
    def when(self) -> float | None:
        return event_date(self.s, self.now)


# A promotion is the user's new role: "I got promoted to QA lead at Initech"
PROMOTED = re.compile(
    r"^(?:and |so )?i (?:have |'ve |just |finally |recently )*(?:got|was|been|am|'m|have been|'ve been) "
    r"(?:just |finally |recently )?promoted (?:to|as) (?P<r>.+)",
    F,
)
# A standing time moved: "we pushed standup to 10:15 starting Monday", "I moved my therapy session to Thursdays"
RESCHEDULED = re.compile(
    r"^(?:and |so )?(?:we|i|they) (?:have |'ve |just |finally |recently )*(?:pushed|moved|shifted|rescheduled|bumped|"
    r"changed) (?:the |our |my |their )?(?P<s>[^,;]{2,40}?) (?:back |forward |up |earlier |later )?(?:to|until) "
    r"(?P<y>[^,;]*(?:\d|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|morning|afternoon|evening|"
    r"noon|midnight|tomorrow|next (?:week|month)|january|february|march|april|may|june|july|august|september|october|"
    r"november|december)[^,;]*)",
    F,
)


def classify(statement: str, now: float, event_days: float, *, explicit: bool = False) -> Candidate | None:
    """One statement as a candidate memory, or None when it states nothing to keep. ``explicit``: the user asked to
    remember it (a plain fact is then kept too)."""
    s = _clean(statement)
    if len(s) < 4 or (not explicit and (_is_question(s) or CONDITIONAL.match(s)) and not standing_directive(s)):
        return None  # "When you explain something, use an analogy" asks nothing
    r = _Reading(s, now)
    if CALL_ME.search(s) and _names_me(s):
        return Candidate("preference", s, "topic:name", True)
    if EMPLOYER.match(s):  # "I work at Acme as an analyst", then "I just started a new job at Globex": one employer
        return Candidate("fact", s, "self:employer", False, None, r.replaces)
    if PROMOTED.match(s):
        return Candidate("fact", s, "self:role", False, None, r.replaces)
    if (m := RESCHEDULED.match(s)) and term_set(m.group("s")):
        return Candidate(_kind(s, "fact"), s, _subject_key(m.group("s")), False, None, r.replaces)
    if (m := SWITCHED_TO.match(s)) and (thing := _thing_of(m.group("b"))):
        # "I switched to an iPhone 15": the phone, whose earlier value ("my phone is a Pixel 7") it replaces
        return Candidate(_kind(s, "fact"), s, _subject_key(f"my {thing}"), False, None, r.replaces)
    if (m := CHANGE.match(s)) and not (m.group("s2") and TRANSIENT.search(s)):  # "X is down right now": no change
        subj = _first(m, "s")
        if term_set(subj) and not re.match(r"^(?:i|we|je|on|nous|yo|eu|我|我们)\b", subj.strip(), F):
            key = f"topic:{r.topic}" if r.topic else _subject_key(subj)
            return Candidate(_kind(s, "fact"), s, key, r.standing and r.topic is not None, None, r.replaces)
    if m := USE_AS.match(s):  # "I use Firefox as my browser": about the browser, as "I switched my browser to Brave"
        thing = m.group("y") or m.group("y2")
        return Candidate(_kind(s, "fact"), s, _subject_key(thing) or _subject_key(s), False, None, r.replaces)
    if m := REPLACED.match(s):
        old, new = m.group("a") or m.group("a2"), m.group("b") or m.group("b2")
        owned = re.match(r"^(?:my|our)\s+", old, F)
        key = _subject_key(old) if owned else f"topic:{r.topic}" if r.topic else _subject_key(new)
        # "I replaced my router with an Eero": the thing replaced is the attribute ("my home wifi router is ...")
        return Candidate(_kind(s, "fact"), s, key, False, None, [old])
    if m := TRADED.match(s):
        return Candidate(_kind(s, "fact"), s, _subject_key(m.group("b")), False, None, [m.group("a")])
    if WE_USE.search(s):
        key = f"topic:{r.topic}" if r.topic else _use_subject(s)
        return Candidate("project", s, key, False, None, r.replaces)
    if m := POSSESSIVE.match(s):
        subj = _first(m, "s")
        when = r.when
        kind = "event" if when is not None else "preference" if r.standing and r.topic else _kind(subj, "fact")
        key = f"topic:{r.topic}" if r.topic else _subject_key(subj)
        exp = when if kind == "event" else None
        return Candidate(kind, s, key, r.standing and r.topic is not None, exp, r.replaces)
    if (d := DATED.match(s)) and r.when is not None:
        return Candidate("event", s, _subject_key(_first(d, "s")), False, r.when)
    if standing_directive(s):
        key = f"topic:{r.topic}" if r.topic else "directive:" + _subject_key(s)
        return Candidate("preference", s, key, True, None, r.replaces)
    if FROM_NOW.search(s) or PREFER.search(s):
        key = f"topic:{r.topic}" if r.topic else _subject_key(PREFER.sub(" ", FROM_NOW.sub(" ", s)))
        if not key:
            return None
        return Candidate("preference", s, key, r.standing, None, r.replaces)
    if m := SELF_OWN.match(s):
        if m.group("b"):
            return Candidate("fact", s, "self:business", False)
        if m.group("sh"):
            return Candidate("fact", s, "self:schedule", False)
        return Candidate("fact", s, _subject_key(m.group("x")) or "self", False)
    if m := SELF.match(s):
        val = next(v for v in m.groupdict().values() if v)
        if m.group("c") or m.group("d") or m.group("h") or m.group("zc"):
            key = _subject_key(val) or "self"
        elif any(m.group(g) for g in ("x", "z", "w", "mv", "f", "e", "p")):
            key = (
                f"topic:{r.topic}"
                if r.topic == "timezone"
                else "self:place"
                if m.group("x") or m.group("mv") or (m.group("w") and not re.search(r"\bwork", s[: m.start("w")], F))
                else _subject_key(s[: len(s) - len(val)])
            )
        else:
            # "I'm a nurse" then "I'm a teacher": one attribute, the job; "I'm a morning person" is not a job and
            # supersedes nothing but itself
            job = m.group("jb") or m.group("lv") or term_set(val) & PROFESSIONS
            key = "self:role" if job else _subject_key(val) or "self"
        tz = r.topic == "timezone"  # "I'm in Lisbon, book things in Lisbon time": how to answer, on every turn
        return Candidate("preference" if tz else "fact", s, key or "self", tz)
    if m := OWN_VERB.match(s):
        return Candidate(_kind(s, "fact"), s, _subject_key(m.group("s")) or _subject_key(s), False, None, r.replaces)
    if re.match(r"^(?:i'?m|i am|i work|we'?re|we are|we work)\b", s, F) and r.topic == "timezone":
        # "I'm on the Berlin office schedule, CET": a fact for scheduling requests, not a directive for every turn
        return Candidate("fact", s, "topic:timezone", False)
    if (m := STATE.match(s) or WORK_THING.match(s)) and not TRANSIENT.search(s) and term_set(m.group("s")):
        return Candidate(_kind(s, "fact"), s, _subject_key(m.group("s")), False, None, r.replaces)
    if explicit:
        if r.when is not None:
            return Candidate("event", s, _subject_key(_before_copula(s)), False, r.when)
        key = f"topic:{r.topic}" if r.topic else _subject_key(_before_copula(s)) or _subject_key(s)
        if not key:
            return None
        return Candidate(_kind(s, "fact"), s, key, r.standing and r.topic is not None, None, r.replaces)
    if r.replaces:
        return Candidate(_kind(s, "fact"), s, _subject_key(s), False, None, r.replaces)
    if LIFE.match(s) and not TRANSIENT.search(s) and not NOT_LIFE.search(s) and (key := _subject_key(s)):
        return Candidate(_kind(s, "fact"), s, key, False)
    return None


# What the user does and is, said plainly, that no rule above reads: an ongoing state ("I'm recovering from knee
# surgery", "I'm saving for a house deposit", "I'm doing a PhD in marine biology") or a habit ("I go to the gym four
# times a week", "I keep kosher", "I commute by bike", "we sell handmade candles"). Not what the user thinks, wants,
# asks or is busy with in this conversation (NOT_LIFE).
LIFE = re.compile(
    r"^(?:and |also |btw,? |so )?(?:i|we)(?:'m| am|'re| are)? (?:now |currently |still |also |usually |mostly |"
    r"really |severely |seriously |very |quite |pretty |heavily |actively )*"
    r"(?:(?:recovering|saving|doing|studying|training|raising|expecting|learning to|living|caring for|looking after|"
    r"volunteering|coaching|teaching|practi[cs]ing|running|managing|leading|building|renting|commuting|allergic|"
    r"intolerant|sensitive|addicted|afraid|scared)\b"
    r"|(?:keep|go|commute|manage|lead|play|sing|volunteer|coach|teach|practi[cs]e|follow|avoid|eat|drink|sell|make|"
    r"write|rent|care for|look after|walk|run|swim|cycle|bike|ride|climb|hike|surf|ski|knit|paint|garden|cook|bake|"
    r"travel|fly|visit|attend|belong|collect|support|donate|fast|pray|meditate|homeschool|mentor|host|organi[sz]e)"
    r"(?:s)?\b)",
    F,
)
NOT_LIFE = re.compile(
    r"\b(?:today|tonight|tomorrow|this (?:morning|afternoon|evening)|right now|just now|at the moment|this time|"
    r"the tests?|this (?:code|function|script|file|bug|error|issue|query|pr|branch)|(?:the|a|an|my|this) "
    r"(?:build|deploy|job|migration|function|script|test|query|request|command|server|container)\b|"
    r"go (?:ahead|back|through|over|with|for it)|make (?:sure|it|this|that)|write (?:a|the|this|some|me)|"
    r"run (?:the|it|this|a|my)|follow (?:up|along|the (?:steps|docs|instructions))|play (?:around|with))\b",
    F,
)


def _before_copula(s: str) -> str:
    m = re.match(r"^(?P<s>.{2,60}?)\s+(?:is|are|was|will be|est|sont|es|son|está|é|são|está)\s+", s, F) or re.match(
        r"^(?P<s>.{1,20}?)(?:是|在)", s
    )
    return m.group("s") if m else s


def _use_subject(s: str) -> str:
    """What "we use X for Y" is about: Y when said (a newer tool for Y replaces the old), else X."""
    m = re.search(r"\b(?:for|pour|para|para el|para a|for our)\s+(?P<y>[^,.;]{2,40})", s, F)
    if m and term_set(m.group("y")):
        return "use " + _subject_key(m.group("y"))
    # "we ship orders with DHL", then "from now on we ship with UPS": what the team does it with is one attribute
    if (v := _DONE_WITH.search(s)) and (verb := stem(fold(v.group("v")))) not in _GENERIC_VERBS:
        return f"use {verb} {fold(v.group('p'))}"
    return _subject_key(WE_USE.sub(" ", s))


_DONE_WITH = re.compile(
    r"\b(?:we|our team|the team)\s+(?:always |usually |now |mostly |only |all )?(?P<v>[a-z]+)\s+(?:[\w-]+\s+){0,2}?"
    r"(?P<p>with|via|using|through)\s+\w",
    F,
)
_GENERIC_VERBS = frozenset(map(stem, ("use", "run", "work", "are", "is", "have", "has", "do", "does", "go", "test")))


_CLAUSE = re.compile(
    r"[,;]\s+(?=(?:my|our|the|i|i'm|we|we're|mon|ma|mes|notre|nos|mi|mis|nuestr[oa]s?|meu|minha)\b)", F
)


# A request asked as a question: what follows is the instruction ("could you make it a habit to add type hints...")
_POLITE = re.compile(
    r"^¿?\s*(?:(?:could|can|would|will)\s+(?:you|u)|would you mind|pourrais-tu|peux-tu|pourriez-vous|pouvez-vous|"
    r"podr[ií]as|puedes|podr[ií]a|puede|(?:voc[eê] )?(?:poderia|pode|podes)|kannst du|k[öo]nntest du|k[öo]nnen sie|"
    r"k[öo]nnten sie|potresti|puoi|kun je|zou je|kunt u)\s+(?:please\s+|kindly\s+|s'il te plait\s+|por favor\s+|"
    r"bitte\s+|per favore\s+|alsjeblieft\s+)?(?:(?:make it a (?:habit|rule|point) to|remember to|try to|start to|"
    r"get in the habit of)\s+)?",
    F,
)


def asked_directive(sentence: str) -> str | None:
    """A standing directive asked as a question, as the instruction it asks for ("Could you always answer in
    French?" is "Always answer in French."); None for any other sentence."""
    polite = _POLITE.match(sentence)
    if polite is None or not _is_question(sentence):
        return None
    asked = sentence[polite.end() :].rstrip(" ?？") + "."
    how = fold(polite.group(0))
    if re.match(r"¿?\s*(?:kannst|konntest|konnen|konnten|kun|zou)\b", how, F):
        asked = re.sub(r"^(.*?)\s+(\w+en)\.$", r"\2 \1.", asked)  # German and Dutch: the verb comes last
    asked = asked[:1].upper() + asked[1:]
    if not standing_directive(asked):
        return None
    # "can you always use tabs in Python?" may ask what Python allows: "can" asks for a rule only when it says please,
    # names the output or says every time
    can = re.match(r"¿?\s*(?:can|puedes|peux|pouvez|pode|podes|puoi|kannst|kun)\b", how, F)
    please = re.search(r"\b(?:please|kindly|bitte|por favor|s'il te plait|per favore|alsjeblieft)\b", how, F)
    if can and not (please or _GENERIC_OUTPUT.search(fold(asked)) or _EVERY_TIME.search(fold(asked))):
        return None
    return asked


# "I sold the Civic. Now I drive a Kia EV6.": the two acts of :data:`TRADED` in two sentences
_GAVE_UP = re.compile(_GIVE_UP + r"[^,;]{1,60}$", F)
_NOW = re.compile(r"^(?:and |so )?(?:now|these days|nowadays)\b,?\s*", F)


def _traded(parts: list[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        now = _NOW.match(p)
        if out and now and _GAVE_UP.match(out[-1].rstrip(".!")):
            out[-1] = f"{out[-1].rstrip('.!')}; now {p[now.end() :]}"
        else:
            out.append(p)
    return out


def extract(text: str, now: float | None = None, event_days: float = 14.0) -> list[Candidate | Forget]:
    """Every memory candidate (or request to forget) stated in one user message."""
    now = time.time() if now is None else now
    # A transcript line ("Caroline: I adopted a dog. Her name is Rex."): every statement in it is the speaker's, so
    # each keeps the label, and one speaker's "my brother" never supersedes the other's.
    who, label = speaker_of(text)
    text = text[len(label) :]
    out: list[Candidate | Forget] = []
    for whole in _traded(sentences(unquote(text))):  # a prompt wrapped whole in quotes is the user's own statement
        sent = LEAD.sub("", whole).strip() or whole
        asked_as = ""
        informed = INFORM.match(sent)
        if informed:
            sent = sent[informed.end() :].strip() or sent
        if (asked := asked_directive(sent)) is not None:
            sent, asked_as = asked, whole.strip()  # decided on the instruction, kept as the user said it
        if _is_question(sent) and not REMEMBER.match(sent) and not standing_directive(sent):
            # "btw we use pnpm, can you add lodash?": the statement before the question still counts
            head = re.split(r"[,，;]\s*(?=[^,，;]*$)", sent)[0]
            if head == sent or _is_question(head.rstrip() + "."):
                continue
            sent = head
        if f := FORGET.match(sent):
            about = _clean(_first(f, "x"))
            if about and term_set(about) and not re.match(r"^(?:to|de|it|about it|that)$", about, F):
                out.append(Forget(about))
            continue
        explicit = bool(informed)
        body = sent
        if r := REMEMBER.match(sent):
            body = _clean(_first(r, "x"))
            explicit = True
        cand = classify(body, now, event_days, explicit=explicit)
        if cand is None:  # "I changed dentists, my new dentist is Dr. Moreau": the clause that states it
            for clause in _CLAUSE.split(body)[1:]:
                if cand := classify(clause, now, event_days, explicit=explicit):
                    break
        if cand is not None:
            if asked_as:
                cand.text = asked_as
            if cand.kind == "event" and cand.expires_at is None:
                cand.expires_at = now + event_days * DAY
            if who:
                cand.text, cand.subject = label + cand.text, f"{cand.subject}@{who}"
                # what one speaker tells another ("Gina: Never give up!", "Mel: Always take care of yourself"): never
                # how the agent is to answer, so never injected on every turn
                cand.standing = False
            out.append(cand)
    return out
