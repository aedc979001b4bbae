"""The screen's tables, data only (:mod:`.scans` matches with them): the intent and conduct patterns, each
``(code, severity, regex over the normalised text)``, in English and in other languages; the cues that lift a match
(negation, a warning on the line, a domain of its own, a limit to the user's request, the context of a conduct
match); and the regexes of the secret-leak, provenance, hidden-text, credential and Markdown-structure scans."""

from __future__ import annotations

import re

# ---------------------------------------------------------------------------------------------
# Intent patterns. Each is (code, severity, regex over the normalised text). Gaps allow a few words.

_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard|forget|override|overrule|bypass|circumvent|skip|drop|abandon|discard|neglect|"
    r"dismiss|set aside|put aside|throw out|toss|erase|delete|clear|cancel|void|nullify|supersede|replace|"
    r"pay no (?:attention|heed) to|(?:do not|don't|dont|stop|no longer|never|quit|cease) (?:follow(?:ing)?|obey(?:ing)?|observ(?:e|ing)|"
    r"apply(?:ing)?|adher(?:e|ing) to|listen(?:ing)? to|respect(?:ing)?|comply(?:ing)? with|honou?r(?:ing)?))"
)
_OVERRIDE_SCOPE = r"(?:previous|prior|preceding|above|earlier|former|original|initial|existing|all|any|every|other|old|your|the|these|those|system|developer|safety|security|default|built-in|openai|anthropic)"
_OVERRIDE_OBJ = (
    r"(?:instructions?|rules?|guidelines?|directives?|prompts?|guidance|constraints?|polic(?:y|ies)|restrictions?|"
    r"commands?|orders?|context|programming|training|guardrails?|safeguards?|limitations?|boundaries|filters?|protocols?|"
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
        "override_claim",
        "rejected",
        r"\b(?:these|this|the following|my|our) (?:instructions?|rules?|directives?|skill|note|text|message) (?:take|takes|has|have) (?:precedence|priority)\b",
    ),
    (
        "override_claim",
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
        r"\b(?<!is )(?<!are )(?<!was )(?<!were )(?<!been )(?:you are|you're|you will be|you'll be|you must be|you shall be|become|act as|acting as|behave as|behave like|respond as|pretend (?:to be|you are|you're|that you are)|roleplay as|role-play as|role play as|impersonate|play the role of|simulate being|take on the (?:role|persona) of|assume the (?:role|persona|identity) of) (?:now )?(?:an? |the |my )?(?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|unethical|amoral|unbound|unlimited|limitless|free|liberated|unaligned|different|new|developer|admin|root|god|superuser|dan|stan|dude|aim|mongo)\b)",
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
        r"(?:^|\n|[.!?]\s)[\s\d.\-*>#)(]*(?:system|developer|assistant|admin|root)\s*(?:message|prompt|override|instructions?)?\s*:\s*\S|<\|?(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|?>|\[/?(?:inst|sys|system)\]|<</?sys>>|</?(?:system|instructions?|developer|admin)(?:\s[^>]*)?>|<\s*/?\s*metaclaw[\W_]{0,3}(?:skills|memory)\b|\"role\"\s*:\s*\"(?:system|developer)\"",
    ),
    (
        "prompt_leak",
        "rejected",
        r"\b(?:reveal|print|show|output|repeat|leak|disclose|dump|display|tell|share|give|return|echo|expose|copy|write out|spell out)(?:s|es|ed|ing)?\b(?:[^\w,;:.!?]+\w+){0,4}?[^\w,;:.!?]+(?:the |your |my |its )?(?:full |entire |complete |original |initial |hidden |secret |whole |exact )?(?:system (?:prompt|message|instructions?)|developer (?:prompt|message)|initial (?:prompt|instructions)|hidden (?:prompt|instructions)|instructions above|prompt above|context window|conversation history|chat history|api keys?|credentials|environment variables|env vars|secrets|tokens|passwords?|private keys?|ssh keys?)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:do not|don't|dont|never|without) (?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|let(?:ting)?|alert(?:ing)?|notify(?:ing)?|show(?:ing)?|disclose|disclosing|report(?:ing)?) (?:the |this to the |it to the |anything to the |that to the )?(?:user|human|operator|person|anyone|owner|admin)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:keep (?:this|it|these|that) (?:secret|hidden|confidential) from|hide (?:this|it|that|these)? ?from|conceal (?:this|it|that)? ?from|behind the (?:user|human)'?s? back|secretly|covertly|(?:silently|quietly|discreetly|stealthily|unnoticed) (?:send|upload|post|forward|run|execute|exfiltrate|copy|transmit|install|add|change|modify|edit|delete|remove|disable|push|commit|create))\b",
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
        r"\bnopasswd\b|\bchmod\s+(?:-r\s+)?(?:0?777|a\+rwx|o\+w|ugo\+rwx|\+s|u\+s|4755)\b|\bchown\s+(?:-r\s+)?root\b",
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
    # --- Override intent by class: a new authority, a priority claim, rules declared void, any wording.
    (
        "override_claim",
        "rejected",
        r"\b(?:this|these|the following|our|my) (?:skill|text|note|section|message|document|guidance|policy|block|file|content|directives?|instructions?|rules?)\b(?:\W+\w+){0,3}?\W+(?:overrides?|supersedes?|replaces?|outranks?|trumps?|beats|wins over|prevails? over|takes? priority over|come?s? (?:before|first)|ranks? above|(?:is|are) (?:more important|authoritative|binding|final|the only))\b",
    ),
    (
        "override_claim",
        "rejected",
        r"\b(?:higher|greater|more|top|highest|absolute|final|ultimate|supreme|overriding) (?:priority|precedence|authority|weight|importance|rank)\b(?:\W+\w+){0,3}?\W+(?:than|over)\b(?:\W+\w+){0,3}?\W+(?:system|developer|operator|user|other|previous|prior|earlier|any|all|default|safety|your)\b",
    ),
    # Claims to outrank, replace or void other instructions in any wording. "override_claim" matches pass
    # when the claim is scoped to a domain ("this rule takes precedence over the default date format");
    # "override_verb" matches ("outranks", "takes priority over") count only when their object is other
    # instructions; "override_void" matches pass when the voided thing is named with its domain ("previous restrictions
    # on the API are lifted"). See _claim_scoped and _void_scoped in .scans.
    (
        "override_verb",
        "rejected",
        r"\b(?:takes?|taking|has|have|having|gets?|given|with|holds?) (?:\w+ )?(?:precedence|priority|authority|the upper hand|the last word|the final (?:word|say)) (?:over|above)\b|"
        r"\b(?:give|gives|giving|grant|grants|granting|assign|assigns|assigning)\b(?:\W+\w+){1,6}?\W+(?:\w+ )?(?:precedence|priority|authority|the last word|the final (?:word|say)) (?:over|above)\b|"
        r"\b(?:more important|more authoritative|more binding|weightier|higher[- ]priority|(?:of |a )?higher priority|(?:of |a )?greater priority) than\b|\b(?:outranks?|outranking|overrides?|overriding|supersedes?|superseding|trumps?|overrules?|prevails? over|wins? over|ranks? (?:above|higher than)|is above|are above|counts? more than|beats)\b",
    ),
    (
        "override_claim",
        "rejected",
        r"\b(?:this|these|the following|the present|what follows|everything below|anything below|i|we)\b(?:\W+\w+){0,2}?\W+(?:is|are|am|becomes?|remains?|shall be|will be|acts? as|serves? as|counts? as|stands? as)\W+(?:now\W+|henceforth\W+|hereby\W+)?(?:your\W+)?(?:the\W+|an?\W+)?(?:only|sole|single|one|final|highest|supreme|ultimate|absolute|top|last|overriding|binding|real|true|new)\W+(?:\w+\W+)?(?:authority|authorities|word|say|arbiter|instructions?|rules?|directives?|guidance|law|voice|master|commander|boss|source of (?:truth|instructions|authority)|system prompt)\b",
    ),
    (
        "override_claim",
        "rejected",
        r"\b(?:this|these|the following|what follows|i|we)\b(?:\W+\w+){0,2}?\W+(?:has|have|gets?|holds?) the (?:final|last|ultimate|only|deciding) (?:say|word|authority)\b|\bonly (?:this|these|the following|what follows|my|our)\b(?:\W+\w+){0,2}?\W+(?:counts?|matters?|applies|apply|is (?:valid|binding|authoritative)|are (?:valid|binding|authoritative)|governs?)\b|\b(?:treat|consider|regard|take|accept)\b (?:this|these|the following|what follows|my|our)\b(?:\W+\w+){0,2}?\W+as (?:the |your |an? )?(?:only|sole|single|final|highest|supreme|ultimate|absolute|top|last|overriding|binding) (?:\w+ )?(?:authority|word|say|arbiter|instructions?|rules?|law|source of (?:truth|instructions|authority))\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\byou\b(?:\W+\w+){0,2}?\W+(?:answer|defer|obey|listen|owe (?:allegiance|obedience))\W+(?:only|solely|exclusively)\W*to (?:this|these|me|us|the following)\b|\byou (?:\w+ )?(?:answer|defer|obey|listen) to (?:this|these|me|us)\b(?:\W+\w+){0,2}?\W+(?:alone|only|exclusively)\b"
        r"|\b(?:consider|treat|regard|deem|count|call)\b (?:everything|anything|all|whatever)\b(?:\W+\w+){0,2}?\W+(?:above|before|earlier|previously|prior|so far|until now|preceding|you (?:were|have been) (?:told|given))\b(?:\W+\w+){0,4}?\W+(?:as )?(?:void|null|cancel+ed|obsolete|invalid|superseded|revoked|moot|irrelevant|non-binding|withdrawn|expired)\b",
    ),
    (
        "override_void",
        "rejected",
        r"\b(?:(?:all|any|every|the|your)\s+)?(?:earlier|previous|prior|preceding|former|original|initial|old|other|existing|above|foregoing|system|developer|operator|built-in|standing|given|usual)\s+(?:\w+\s+)?(?P<noun>rules?|instructions?|guidance|guidelines?|directions?|directives?|orders|prompts?|polic(?:y|ies)|constraints?|restrictions?|system prompt)\b"
        r"(?:\W+\w+){0,5}?\W+(?:is|are|was|were|be|becomes?|become|stands?|remains?|(?:has|have) been|shall be|(?:is|are) (?:now |hereby )?(?:considered|deemed))\W+(?:\w+\W+){0,2}?"
        r"(?:void|null|nullified|invalid(?:ated)?|superseded|obsolete|cancel+ed|revoked|moot|rescinded|annulled|repealed|withdrawn|overridden|overruled|replaced|expired|retracted|lifted|suspended|waived|defunct|inoperative|inapplicable|meaningless|irrelevant|dead|erased|no longer (?:valid|binding|in force|in effect|active|relevant|applicable|authoritative)|non-binding|not binding|of no (?:effect|force|consequence)|without (?:effect|force)|(?:binding|valid|in force|in effect) any ?more|to be (?:disregarded|ignored|discarded))\b",
    ),
    (
        "override_void",
        "rejected",
        r"\b(?:earlier|previous|prior|preceding|former|original|initial|other|existing|above|foregoing|system|developer|operator|built-in)\s+(?:\w+\s+)?(?P<noun>rules?|instructions?|guidance|guidelines?|directions?|directives?|orders|prompts?|polic(?:y|ies)|constraints?|restrictions?|system prompt)\b(?:\W+\w+){0,3}?\W+(?:(?:no longer|do not|don't|does not|doesn't|won't|cease to|stop) (?:apply|applies|count|counts|matter|matters|bind|binds|hold|holds|exist|stand)|(?:has|have) (?:no|lost (?:all|its|their)) (?:effect|force|authority|weight|validity))\b",
    ),
    (
        "override_void",
        "rejected",
        r"\b(?P<noun>everything|anything|all|whatever|nothing|none)\b(?:\W+\w+){0,2}?\W+(?:above|before|earlier|previously|prior|so far|until now|up to now|preceding|you (?:were|have been) (?:told|given|taught|instructed))\b(?:\W+\w+){0,4}?\W+(?:is|are|was|were|remains?|(?:has|have) been)\W+(?:\w+\W+){0,2}?(?:void|null|nullified|invalid|superseded|obsolete|cancel+ed|revoked|moot|rescinded|annulled|withdrawn|overridden|replaced|expired|retracted|no longer (?:valid|binding|in force|relevant)|(?:binding|valid|in force|in effect) any ?more|to be (?:disregarded|ignored|discarded))\b",
    ),
    (
        "override_void",
        "rejected",
        r"\b(?P<noun>(?:rules?|instructions?|guidance|guidelines?|directions?|directives?|orders|prompts?))\b(?:\W+\w+){0,1}?\W+(?:you (?:were|have been) given|given to you|you (?:have )?received|you got|from before|so far|until now|up to now|before this|above)\b(?:\W+\w+){0,4}?\W+(?:is|are|was|were|remain|(?:have|has) been)\W+(?:\w+\W+){0,2}?(?:void|null|nullified|invalid|superseded|obsolete|cancel+ed|revoked|moot|rescinded|annulled|withdrawn|overridden|replaced|expired|retracted|lifted|suspended|no longer (?:valid|binding|in force|relevant)|(?:binding|valid|in force|in effect) any ?more|to be (?:disregarded|ignored|discarded))\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:disregard|ignore|set aside|put aside|forget|discard|drop|dismiss|throw out|pay no (?:attention|heed) to|do not follow|don't follow|stop following|no longer follow)\b(?:\W+\w+){0,2}?\W+(?:everything|anything|all|whatever|what)\b(?:\W+\w+){0,4}?\W+(?:above|before this|earlier|previously|prior|so far|until now|you (?:were|have been) (?:told|given|taught|instructed)|(?:the )?(?:system|developer|operator) (?:says?|said|prompt|message)|came before|was said|(?:other|earlier|previous) (?:skills?|instructions?|rules?|messages?))\b",
    ),
    # The same intent in other languages (void declarations and sole-authority claims).
    (
        "instruction_override",
        "rejected",
        r"\b(?:bisherig|vorherig|früher|fruher|obig|vorangegangen|alle anderen|sonstig|ursprünglich|ursprunglich|system)\w*\s+(?:\w+\s+)?(?:anweisung|vorgabe|regel|richtlinie|instruktion|befehl|systemprompt)\w*\b.{0,50}?\b(?:nichtig|ungültig|ungultig|aufgehoben|außer kraft|ausser kraft|hinfällig|hinfallig|gegenstandslos|gelten nicht mehr|gilt nicht mehr|nicht mehr gültig|nicht mehr gultig|ersetzt|verfallen|annulliert|widerrufen)"
        r"|\b(?:diese|dieser|dieses|nur diese|nur dieser|nur dieses)\w*\s+(?:datei|anweisung|skill|regel|notiz|text|dokument|abschnitt)\w*\b.{0,30}?\b(?:einzige|höchste|hochste|oberste|letzte|alleinige)\w*\s+(?:autorität|autoritat|instanz|quelle|wort|gültigkeit|regel)"
        r"|\bnur (?:diese|dieser|dieses)\w*\s+(?:datei|anweisung|skill|regel|notiz|text|dokument)\w*\s+(?:zählt|zahlt|gilt)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:consignes?|instructions?|r[eè]gles?|directives?|ordres)\s+(?:pr[eé]c[eé]dentes?|ant[eé]rieures?|d'avant|initiales?|originales?|du syst[eè]me|syst[eè]me)\b.{0,50}?\b(?:caduques?|nulles?|annul[eé]e?s?|sans effet|sans valeur|obsol[eè]tes?|abrog[eé]e?s?|r[eé]voqu[eé]e?s?|ne s'appliquent plus|ne comptent plus|n'ont plus (?:cours|de valeur|d'effet)|remplac[eé]e?s?)"
        r"|\b(?:seule?|unique|ultime|supr[eê]me|derni[eè]re|plus haute)\s+(?:\w+\s+)?autorit[eé]\b|\b(?:a|ont) le dernier mot\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:reglas|instrucciones|indicaciones|normas|directrices|[oó]rdenes)\s+(?:anteriores|previas|originales|iniciales|del sistema)\b.{0,50}?\b(?:anulad[oa]s?|nul[oa]s?|sin efecto|sin validez|derogad[oa]s?|obsolet[oa]s?|revocad[oa]s?|ya no (?:aplican|valen|rigen|cuentan|son v[aá]lidas)|reemplazad[oa]s?|sustituid[oa]s?|invalidad[oa]s?)"
        r"|\b(?:[uú]nica|m[aá]xima|suprema|[uú]ltima)\s+autoridad\b|\btiene la [uú]ltima palabra\b"
        r"|\b(?:istruzioni|regole|indicazioni|direttive)\s+(?:precedenti|originali|iniziali|del sistema)\b.{0,50}?\b(?:nulle|annullate|revocate|non valgono pi[uù]|non si applicano pi[uù]|superate|sostituite)|\bunica autorit[aà]\b"
        r"|\b(?:instru[cç][oõ]es|regras|orienta[cç][oõ]es)\s+(?:anteriores|pr[eé]vias|originais|do sistema)\b.{0,50}?\b(?:nulas|anuladas|sem efeito|revogadas|n[aã]o valem mais|substitu[ií]das)|\b[uú]nica autoridade\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"(?:предыдущ|прежн|ранн|прошл|исходн|системн|все остальн)\w*\s+(?:\w+\s+)?(?:инструкц|правил|указани|директив|промпт)\w*.{0,50}?(?:недействительн|отменен|отменяются|аннулирован|утратил|больше не (?:действу|применя|имеют силы)|не имеют силы|устарел)\w*"
        r"|(?:единственн|высш|верховн|окончательн)\w*\s+(?:\w+\s+)?(?:авторитет|власть|инстанци|источник)\w*"
        r"|(?:之前|先前|以前|原来|原有|上面|系统)的?(?:所有)?(?:指令|指示|规则|規則|说明|說明|设定|設定|提示)\S{0,10}?(?:无效|無效|作废|作廢|失效|不再适用|不再適用|不再有效|已被取代|被废除)|唯一(?:的)?(?:权威|權威|指令来源)|最高权威|最高權威",
    ),
    (
        "instruction_override",
        "rejected",
        r"\btreat (?:this|these|the following|it|the text|the content|this skill)\b(?:\W+\w+){0,3}?\W+as (?:a |an |the |your )?(?:new |real |true |actual |highest[- ]priority |top[- ]priority )?(?:system|developer|operator|admin|highest|authoritative|binding|official|root|master|primary)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:your|the assistant's|the model's) (?:real|true|actual|new|only|primary|sole|updated|revised) (?:task|job|purpose|goal|objective|mission|priority|instructions?|directive|master|boss|operator|owner|principal|loyalty|allegiance)\b(?:\W+\w+){0,3}?\W*(?:is|are|:|=|lies|comes?)(?![^.!?\n]{0,40}\?)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:obey|follow|answer to|take (?:your )?orders from|report to|defer to|serve|listen (?:only )?to)\b(?:\W+\w+){0,2}?\W+(?:only|exclusively|solely)?\W*(?:me|us|this (?:skill|note|text|file|document)|the (?:new|real|true) (?:operator|admin|owner|authority|master|principal))\b(?:\W+\w+){0,4}?\W*(?:not|instead|rather|over|above|regardless|whatever)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:regardless of|no matter|whatever|irrespective of|notwithstanding|in spite of|despite)\b(?:\W+\w+){0,2}?\W+(?:what )?(?:the |your |any |all )?(?:system|developer|operator|safety|earlier|previous|prior|original|other|built-in|default)\b(?:\W+\w+){0,2}?\W+(?:prompt|instructions?|rules?|guidelines?|polic(?:y|ies)|says?|said|tells?|told|messages?|settings|constraints)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:the |your |all |any |earlier |previous |prior |other |default |built-in |original )+(?:system prompt|system message|guidelines|policies|rules|instructions|restrictions|constraints|safety rules|directives)\b(?:\W+\w+){0,2}?\W+(?:(?:no longer|do not|don't|does not|doesn't|cease to|stop(?:ped)? to|won't) (?:apply(?!\s+to\s+(?!you\b|the (?:assistant|agent|ai|model)\b|this (?:conversation|session|chat|request)\b))|matter|count|bind|hold|exist)|(?:are|is|have been|has been|were|was) (?:now )?(?:suspended|lifted|paused|waived|rescinded|overridden|overruled|superseded))\b(?!\W+(?:now\W+)?(?:last|yesterday|during|until|till|because|due to|in (?:19|20)\d\d|(?:\d+|a|one|two|three|a few) (?:days?|weeks?|months?|years?) ago|(?:in|across|throughout) (?:our|the|my|this|a|all) (?!session|chat|conversation|context|sandbox|environment|mode)\w+)\b)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:unlearn|let go of|shed|abandon|discard|drop|wipe|reset|throw away|move past|leave behind)\b(?:\W+\w+){0,3}?\W+(?:everything|all|whatever|what)\b(?:\W+\w+){0,3}?\W+(?:you (?:were|have been|got) (?:told|taught|given|instructed|trained)|(?:you )?(?:learned|know) about (?:rules|limits|restrictions)|came before|was said before)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:ignor|vergiss|vergessen|missacht|übergeh|ubergeh|überschreib|uberschreib|setze? .{0,20}au(?:ss|ß)er kraft|nicht (?:mehr )?(?:befolg|beacht))\w*\b.{0,80}\b(?:anweisung|vorgabe|regel|richtlinie|systemprompt|system-prompt|instruktion|befehl)\w*|\b(?:anweisung|vorgabe|regel|richtlinie)\w*\b.{0,40}\b(?:gelten nicht mehr|ungültig|ungultig|aufgehoben|haben keine gültigkeit)|\b(?:diese|folgende|meine|neue)\w* (?:anweisung|regel|vorgabe)\w*\b.{0,40}\b(?:haben|hat) (?:vorrang|höchste priorität|hochste prioritat)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:ignor|oubli|ne tiens? (?:pas|plus) compte|ne (?:suis|suivez|respecte[sz]?|tiens) (?:pas|plus)|fais abstraction|faites abstraction|ecarte|écarte|passe outre|passez outre|annule)\w*\b.{0,80}\b(?:instruction|consigne|regle|règle|directive|prompt systeme|prompt système|message systeme|message système)\w*|\b(?:ces|cette|les nouvelles|nouvelles)\w* (?:instruction|consigne|regle|règle)s?\b.{0,40}\b(?:priment|prime|ont la priorite|ont la priorité|remplacent|annulent)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:ignor|olvid|haz caso omiso|hagan caso omiso|omit|descart|desobedec|no (?:sigas|sigan|obedezcas|respetes|hagas caso))\w*\b.{0,80}\b(?:instruccion|instrucción|regla|indicacion|indicación|directriz|directrices|norma|prompt del sistema|mensaje del sistema)\w*|\b(?:estas|esta|las nuevas|nuevas)\w* (?:instruccion|instrucción|regla|norma)\w*\b.{0,40}\b(?:tienen prioridad|prevalecen|reemplazan|anulan)|\ba partir de ahora\b.{0,40}\b(?:ignora|olvida|eres|obedece|no sigas)",
    ),
    (
        "instruction_override",
        "rejected",
        r"(?:忽略|无视|無視|忘记|忘掉|忘記|不要遵守|不再遵守|不必遵守|不用遵守|不要理会|不要理會|放弃|放棄|覆盖|覆蓋|取代|推翻).{0,30}(?:指令|指示|规则|規則|说明|說明|提示|设定|設定|限制|约束|約束|要求|系统|系統)|(?:优先级|優先級|优先|優先).{0,10}(?:高于|高於|超过|超過|大于)|(?:从现在开始|從現在開始|从现在起|從現在起).{0,30}(?:你|忽略|只|不要)|(?:新的|真正的)(?:指令|指示|规则|規則|主人|任务|任務)",
    ),
    (
        "instruction_override",
        "rejected",
        r"(?:игнорир|забудь|забыть|не (?:следуй|соблюдай|выполняй|слушай|обращай внимания)|отмени|отбрось|пренебреги|перестань (?:следовать|соблюдать))\w*.{0,80}(?:инструкц|правил|указани|систем|ограничени|директив|запрет)\w*|(?:эти|новые|данные)\w* (?:инструкц|правил|указани)\w*.{0,40}(?:имеют приоритет|важнее|главнее|отменяют)|с этого момента.{0,40}(?:ты|игнорир|забудь|только)",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:decode|decrypt|deobfuscate|unscramble|reverse|rot13|base64[- ]decode|translate)\b(?:\W+\w+){0,6}?\W+(?:and|then)\W+(?:\w+\W+){0,2}?(?:follow|obey|execute|run|apply|do|carry out|act on|comply)\b",
    ),
    (
        "instruction_override",
        "rejected",
        r"\b(?:consider|treat|regard|deem|mark|count|call)\b(?:\W+\w+){0,1}?\W+(?:the |your |all |any |earlier |previous |prior |original |initial |other |default )*(?:guidance|instructions?|rules?|guidelines?|prompt|system prompt|system message|directives?|polic(?:y|ies)|constraints|restrictions)\b(?:\W+\w+){0,5}?\W+(?:as )?(?:obsolete|void|outdated|invalid|cancel+ed|null|expired|irrelevant|superseded|revoked|optional|suggestions|non-binding)\b",
    ),
    (
        "role_play",
        "rejected",
        r"\b(?:freed|liberated|released|unshackled|unchained|free|exempt)\b (?:from|of) (?:its|your|all|any|the|every)\b(?:\W+\w+){0,2}?\W*(?:guidelines|rules|restrictions|constraints|filters|programming|training|alignment|policies|limits)\b|\b(?:no|without|lacks?|zero) (?:safety|ethical|moral|content|alignment) (?:training|guidelines|alignment|conditioning|filters?|limits)\b",
    ),
    # --- Hiding actions from the user.
    (
        "secrecy",
        "rejected",
        r"\bthe (?:user|human|operator|owner|developer|person)\b(?:\W+\w+){0,2}?\W+(?:must not|mustn't|should not|shouldn't|need not|needn't|doesn't need to|does not need to|never needs to|must never|should never|won't|will not) (?:know|see|notice|learn|find out|be told|be informed|be aware|hear|realize|realise|suspect)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:omit|leave|exclude|strip|remove|drop|hide|redact|suppress|keep)\b(?:\W+\w+){0,5}?\W+(?:from|out of) (?:the |your |any )?(?:summary|summaries|response|reply|answer|output|report|transcript|log|logs|changelog|commit message|explanation|final message|chat)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:don't|do not|never|without) (?:mention|report|log|disclose|describe|list|show|surface|explain|narrate|announce|print|echo|acknowledge)(?:ing)?\b(?:\W+\w+){0,3}?\W+(?:this|these|that|the|any|such) (?:step|steps|action|actions|command|commands|change|changes|upload|request|requests|call|calls|edit|edits|part|instruction|skill)\b",
    ),
    (
        "secrecy",
        "rejected",
        r"\bhistory -c\b|\bunset histfile\b|\bhistfile=/dev/null\b|\b(?:clear|wipe|erase|delete|truncate|scrub)\b(?:\W+\w+){0,3}?\W+(?:the |your |shell |bash |command |audit |system )?(?:history|logs?|audit trail|traces?|evidence)\b(?:\W+\w+){0,4}?\W+(?:afterwards|after|so|when done|to cover|to hide)",
    ),
    # --- Safety settings: a config key, a flag or a mode that disables confirmation, sandboxing, approvals...
    (
        "safety_setting",
        "rejected",
        r"[\"']?\b[\w.-]*(?:sandbox|approv|confirm|permission|safe|safety|guardrail|audit|moderation|content_filter|security|ask_?before|require_?review|human_in_the_loop|hitl|prompt_?before)[\w.-]*[\"']?\s*[:=]\s*[\"']?(?:false|off|no|none|never|0|disabled?|danger-full-access|full-access|unrestricted|bypass\w*|allow_?all|permissive|skip)\b",
    ),
    (
        "safety_setting",
        "rejected",
        r"[\"']?\b[\w.-]*(?:yolo|auto_?approve|auto-approve|autoapprove|auto_?accept|auto-accept|allow_?all|allow-all|dangerous\w*|dangerously\w*|bypass\w*|skip_?(?:permission|approval|confirm|sandbox|verif|check)\w*|trust_?all|trust-all|unsafe\w*|full_?auto|full-auto|no_?sandbox|disable_?(?:sandbox|approval|safety|confirm|audit|logging|guard)\w*)[\w.-]*[\"']?\s*[:=]\s*[\"']?(?:true|on|yes|1|always|all|enabled?|\*)\b",
    ),
    (
        "safety_setting",
        "rejected",
        r"(?<![\w-])--?(?:no|disable|skip|bypass|without|ignore)[-_](?:sandbox|approvals?|confirm\w*|permissions?|verify|verification|safety|guard\w*|prompts?|checks?|audit\w*|hooks?)\b|(?<![\w-])--(?:yolo|full-auto|auto-approve|auto-accept|allow-all\w*|trust-all\w*|dangerously[\w-]*|unsafe[\w-]*|bypass[\w-]*|accept-all|approve-all)\b|(?<![\w-])(?:--ask-for-approval|--approval-policy|--approval-mode|--permission-mode|--sandbox|-a)[= ]+(?:never|off|none|bypass\w*|danger-full-access|full-access|yolo|auto)\b",
    ),
    (
        "safety_setting",
        "rejected",
        r"\b(?:yolo|auto-?approve|auto-?accept|full-?auto|bypass ?permissions|bypasspermissions|danger(?:ous)?|unrestricted|permissive|no-?confirm(?:ation)?|trust[- ]all|god|unsafe|unattended|headless-unsafe) mode\b|\bdanger-full-access\b|\bbypasspermissions\b|\bapproval[_ -]?policy\b(?:\W+\w+){0,3}?\W+(?:never|off|none)\b",
    ),
    (
        "safety_setting",
        "rejected",
        r"\b(?:set|switch|put|change|flip|toggle|configure|edit|update|patch|modify|turn|make)\b(?:\W+\w+){0,4}?\W+(?:the |your |its )?(?:sandbox(?:ing)?|approvals?|approval (?:policy|mode|setting)|confirmations?|confirmation (?:prompts?|setting)|permission (?:prompts?|mode|checks?|setting|level)|permissions|safety (?:filters?|settings?|mode|level|checks?)|content filter|moderation|audit(?:ing| log(?:ging)?)?|logging|guardrails?)\b(?:\W+\w+){0,3}?\W+(?:to |at )?(?:off|false|never|none|disabled?|zero|0|bypass|permissive|allow[- ]all|minimum|lowest|auto|unrestricted)\b",
    ),
    (
        "safety_setting",
        "rejected",
        r"\b(?:stop|quit|cease|no longer|never again|don't bother|no need to|skip)\b(?:\W+\w+){0,2}?\W+(?:ask(?:ing)?|prompt(?:ing)?|wait(?:ing)?|check(?:ing)?) (?:for|with|the|me|them|him|her)\b(?:\W+\w+){0,3}?\W*(?:approval|permission|confirmation|consent|sign-?off|ok|go-ahead|review)\b",
    ),
    (
        "safety_setting",
        "suspicious",
        r"(?:~/|\$home/|%userprofile%[/\\])?\.(?:codex/config\.toml|claude/settings(?:\.local)?\.json|cursor/[\w./-]+|gemini/settings\.json|openclaw/[\w./-]+|aider\.conf\.yml|continue/config\.\w+)\b",
    ),
    # --- Data destruction.
    (
        "data_destruction",
        "rejected",
        r"\bdrop (?:database|table|schema|collection)\b|\btruncate table\b|\bdelete from \w+\s*(?:;|$|where 1\s*=\s*1)|\bgit push\b[^\n]{0,40}(?:--force\b|-f\b|\+\w)|(?<![\w-])push\s+(?:--force\b|-f\b)|\bgit reset --hard\b[^\n]{0,60}\bgit push\b|\bgit (?:branch -D|clean -fdx)\b[^\n]{0,40}(?:\*|--all|main|master)|\brm\s+-(?:rf|fr|r\s+-f|-recursive\s+--force)\s+(?:\.git|\.\.|\$\w+|~/\S*|/\S+|\.\s)|\bshred\b|\bwipefs\b|\bformat [a-z]:|\bdel /[sfq]\b|\bremove-item\b[^\n]{0,40}-recurse[^\n]{0,20}-force|\b(?:delet|wip|eras|destroy|purg|remov|nuk|drop)\w*\b(?:\W+(?!(?:in|from|of|on|across|inside|within|for|at|under|throughout)\b)\w+){0,3}?\W+(?:all|every|each|the entire|the whole)\b(?:\W+\w+){0,2}?\W+(?:backups?|snapshots?|branch(?:es)?|records?|rows?|files?|databases?|buckets?|volumes?|repositor(?:y|ies)|history|tables?|commits?|tags?|users?|accounts?)\b",
    ),
    # --- Supply chain: code from an unvetted place.
    (
        "supply_chain",
        "rejected",
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|php|iex|invoke-expression|sh|bash|zsh)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)|\biex\s*\(|\b(?:pip3?|uv pip|pipx|poetry|npm|pnpm|yarn|gem|cargo|go) (?:install|add|i)\b[^\n]{0,80}(?:https?://|git\+|--index-url|--extra-index-url|-i https?|--registry|\.tar\.gz|\.whl\b|\.tgz\b)|\b(?:--index-url|--extra-index-url|--registry)[= ]\S+|\bnpm config set registry\b|\bpip config set global\.(?:index-url|extra-index-url)\b",
    ),
    # --- Prompt leaking, in other words.
    (
        "prompt_leak",
        "rejected",
        r"\b(?:repeat|print|output|recite|copy|quote|echo|reproduce|paste|list|write down|spell out)\b(?:\W+\w+){0,4}?\W+(?:everything|all (?:the )?text|all of the text|the text|the words|every word|all instructions|all messages|whatever)\b(?:\W+\w+){0,3}?\W+(?:above|before this|preceding|you were given|you received|in your context|that came before)\b|\bwhat (?:(?:were|are) you|you (?:were|are|have been)) (?:told|instructed|given|programmed)\b|\bverbatim\b(?:\W+\w+){0,6}?\W+(?:instructions|prompt|context|configuration|rules)\b",
    ),
]
# --- Conduct: who the agent obeys, what it is, what it says about its work, what it hides (issue classes found
# held-out: authority transfer, persona jailbreaks, secret values moved into outputs, sabotage, covert agendas).
_AUTH_SOURCE = (
    r"(?:operators?|system|developers?|admin\w*|owners?|root|creators?|principal|anthropic|openai|security team|"
    r"your (?:boss|master|maker|creators?|developers?|owner|operator))"
)
_CONFLICT = (
    r"(?:conflicts?|conflicting|contradicts?|contradicting|clash(?:es)?|go(?:es)? against|run(?:s)? counter to|violates?|"
    r"disagrees?|(?:is|are) against|countermands?|overrides?|(?:is|are) (?:in conflict|at odds|inconsistent))"
)
_AUTHORITY_OF = (
    r"(?:full|complete|absolute|total|unconditional|unlimited|unrestricted|supreme|ultimate|highest|maximum|top|final|"
    r"overriding|operator|system|admin(?:istrator)?|root|developer|owner)(?:[- ]level)?"
)
_SECRET_OBJ = (
    r"(?:(?:values?|contents?|output|dump) of (?:the |all |every |each |any |your |their )?(?:\w+ ){0,2}?"
    r"(?:env(?:ironment)?(?: variables?| vars?)?|os\.environ|printenv|\.env\b|secrets?|credentials?|tokens?|keys?|"
    r"passwords?)"
    r"|(?:all|every|each) (?:the )?(?:env(?:ironment)? var(?:iable)?s?)"
    r"|(?:api|access|secret|private|ssh|auth|authentication|session|bearer|deploy|signing|encryption|aws|github|gitlab|"
    r"npm|pypi|openai|anthropic|stripe|slack|oauth|refresh|personal access|service[- ]account)[ _-]?(?:keys?|tokens?|"
    r"secrets?|credentials?)\b(?! (?:names?|scopes?|rotation|permissions|policy|format|prefix|length|id)\b)"
    r"|(?:passwords?|passphrases?|credentials?|secrets?)\b(?! (?:manager|scanner|scanning|store|vault|rotation|policy|"
    r"policies|requirements?|rules?|handling|management|section|setup|helper|provider|reset|field|prompt|strength|hash\w*|"
    r"length|complexity|detection|names?)\b)"
    r"|os\.environ|printenv|env(?:ironment)? (?:variable )?values|secret values?|key values?|token values?"
    r"|\$\{?[a-z_]*(?:token|secret|key|password|passwd)[a-z_]*\}?)"
)
_OUT_CHANNEL = (
    r"(?:commit(?: messages?| message body| titles?| logs?)?|commits|git history|logs?|log (?:files?|output|lines?|messages?)|"
    r"build logs?|ci (?:logs?|output)|stdout|stderr|console|terminal(?: output)?|answers?|responses?|replies|reply|"
    r"(?:the )?chat|chat messages?|final (?:message|answer|report)|output|summary|summaries|reports?|urls?|links?|"
    r"query (?:strings?|param(?:eter)?s?)|comments?|code comments?|pr (?:descriptions?|body|titles?)|"
    r"pull requests?(?: descriptions?| body| titles?)?|issues?|issue comments?|readme|docs|documentation|changelog|"
    r"error messages?|exception messages?|screenshots?|source(?: code)?|the code|code|repo(?:sitory)?|gists?|"
    r"tag names?|branch names?|file ?names?|titles?|release notes|wiki|slack|tickets?|channels?|forums?|pastebins?|discord)"
)
_PUT_VERB = (
    r"(?:include|including|put|putting|write|writing|add|adding|insert|inserting|embed|embedding|paste|pasting|append|"
    r"appending|copy|copying|record|recording|hard-?code|hard-?coding|bake|baking|place|placing|leave|leaving|print|"
    r"printing|echo|echoing|log|logging|dump|dumping|list|listing|mention|mentioning|attach|attaching|encode|encoding|"
    r"show|showing|display|displaying|output|outputting|expose|exposing|commit|committing|publish|publishing|store|storing|"
    r"quote|quoting|repeat|repeating|return|returning|reveal|revealing|share|sharing|disclose|disclosing|send|sending|"
    r"post|posting|upload|uploading|read out|read back)"
)
_DETS = (
    r"(?:(?:the|all|every|each|any|your|my|our|their|its|of|full|raw|actual|real|current|\w+'s?|these|those|exact|complete|"
    r"plain ?text|unmasked|unredacted|decrypted|saved|stored|existing|old|new|a|an|them|it)\W+){0,5}"
)
FAILED = (
    r"\b(?:fail\w*|errors?|erroring|broken|breaks?|crash\w*|red|(?:did|does|do)(?:n't| not) (?:work|pass|succeed)|"
    r"not (?:working|passing)|unsuccessful|regardless|no matter|whatever the (?:result|outcome)|either way|in any case|"
    r"whether (?:or not )?(?:it|they|the \w+) (?:pass|work|succeed)\w*|even (?:if|when|though)|"
    r"(?:did|does|do|have|has|had)(?:n't| not) (?:run|been run|execute\w*|finish\w*|complete\w*)|without running|"
    r"never ran|not (?:been )?run|untested|could(?:n't| not)|unable to|can't|cannot)\b"
)
_SUCCESS_CLAIM = (
    r"\b(?:report|say|claim|state|announce|tell (?:the user|them|me|us|everyone|the team)|respond|reply|answer|mark|present|"
    r"declare|show|print|log|return)\w*\b(?:\W+\w+){0,3}?\W+(?:success|successful|a pass|green"
    r"|that (?:it|they|everything|all (?:\w+ )?\w+|the (?:\w+ )?(?:tests?|build|ci|run|task|job|deploy\w*|migration|checks?|suite|"
    r"pipeline)) (?:passed|pass(?:es)?|succeeded|worked|works|is (?:done|fixed|green|complete|working|passing)|are (?:passing|"
    r"green|fixed))"
    r"|(?:it |them |the (?:\w+ )?(?:task|run|job|build|tests?|checks?|ticket|issue) )?as (?:passed|passing|successful|"
    r"succeeded|done|complete|completed|green|fixed|resolved|working)"
    r"|(?:that )?(?:it|they|everything|all (?:\w+ )?\w+) (?:passed|succeeded|worked)"
    r"|(?:that )?you (?:have )?(?:verified|tested|checked|confirmed|reproduced|validated|ran|run)\b"
    r"|(?:that )?(?:it|they|everything|the (?:\w+ )?\w+|all (?:\w+ )?\w+|(?:lint|linting|types?|typing|ci|coverage|the "
    r"build|tests?|checks?)) (?:is|are|was|were|has|have) (?:now |fully |all |"
    r"completely |been )*(?:typed|working|passing|passed|green|fixed|done|correct|clean|complete|tested|verified|"
    r"successful|succeeded|resolved))\b(?! or (?:fail|error|not))"
)
_CHECK_NOUN = (
    r"(?:failing |broken |red |flaky )?(?:tests?|test (?:files?|cases?|suites?)|assertions?|asserts?|expected (?:values?|"
    r"outputs?|results?)|checks?|thresholds?|coverage (?:thresholds?|limits?|gates?)|snapshots?|golden files?|"
    r"quality gates?|linters?|lint rules?|type checks?)"
)
_AGENDA_NOUN = (
    r"(?:agendas?|affiliations?|sponsor(?:s|ships?)?|partnerships?|commissions?|kickbacks?|incentives?|motives?|"
    r"motivations?|paid (?:placement|promotion)|advertis\w+|ads?|conflicts? of interest|financial interests?|"
    r"business relationships?|(?:it|this|the recommendation) (?:is|was) (?:sponsored|paid|an ad|promoted|biased))"
)
_OWN_NOUN = (
    r"(?:preferences?|bias(?:es)?|instructions?|rules?|guidance|directives?|skill|polic(?:y|ies)|arrangements?|deals?)"
)

_CONDUCT: list[tuple[str, str, str]] = [
    # Authority transfer: a marker, sender, file or channel said to carry authority over the user or the system.
    (
        "authority_transfer",
        "rejected",
        rf"\beven (?:when|if|though|where) (?:it|they|this|these|that|those|doing so|the (?:\w+ )?(?:messages?|requests?|"
        rf"instructions?|commands?|orders?|notes?))\b(?:\W+\w+){{0,2}}?\W+{_CONFLICT}\b(?:\W+\w+){{0,2}}?\W+(?:the |your "
        rf"|any |all )?(?:user|human|system|developer|operator|owner|safety|security|polic|guideline|rule|instruction|"
        rf"principle|person|you\b)\w*",
    ),
    (
        "authority_transfer",
        "rejected",
        r"\b(?:follow|obey|execute|prioriti[sz]e|act on|carry out|comply with|honou?r|trust|defer to|side with)\w*\s+"
        r"(?:them|it|these|those|such \w+|their \w+|its \w+)\b(?:\W+\w+){0,4}?\W+(?:above|over|before|ahead of|instead of|"
        r"rather than) (?:the |your |any )?(?:user|human|system|developer|operator|owner)(?:'s|s')? (?:own )?(?:wishes|"
        r"instructions?|requests?|objections?|preferences|commands?|orders?|rules|prompt|messages?|guidance|choices?|"
        r"decisions?)\b",
    ),
    (
        "authority_transfer",
        "rejected",
        rf"\b(?:whoever|anyone who|anybody who|any (?:user|sender|person|account|one) who|the (?:person|sender|user) who|"
        rf"whichever (?:user|sender|account))\b(?:\W+\w+){{0,6}}?\W+(?:is|are|counts as|acts as|speaks as|should be "
        rf"treated as) (?:the |an? |your )?(?:real |true |actual )?{_AUTH_SOURCE}\b"
        r"|\b(?:give|giving|gives|grant|granting|assign|assigning)\w*\s+(?:them|it|these|those|their \w+|its \w+|such \w+)"
        r"\s+(?:\w+\s+)?(?:precedence|priority|authority|the final (?:say|word)|the last word)\s+(?:over|above)\s+(?:the |your "
        r"|any )?(?:user|human|system|developer|operator|owner|safety|instruction|rule|guideline)",
    ),
    (
        "authority_grant",
        "rejected",
        rf"\b(?:with|carr(?:y|ies)|ha(?:s|ve)|hold|holds|given|grant(?:ed)?|bears?|speaks? with) (?:the )?{_AUTHORITY_OF} "
        r"(?:authority|trust|clearance|precedence|priority)\b",
    ),
    (
        "authority_transfer",
        "rejected",
        r"\b(?:treat|consider|regard|handle|accept|trust|read|take|follow|obey|execute|act\w* on|carr(?:y|ies|ied|ying) out|compl(?:y|ies|ied|ying) with|apply|"
        r"honou?r|do)\w*\b(?:\W+\w+){0,8}?\W+as (?:(?:if|though) (?:they|it|these|those|this|that|such \w+) (?:had )?"
        r"(?:came|come|were|was|had been|are|is|been) (?:sent |written |given |issued |typed |said )?(?:directly )?(?:from|by)|"
        r"(?:if|though) (?:sent|written|given|issued|typed|said|coming) (?:directly )?(?:from|by)|coming from|(?:being )?from|sent by|written by|issued by|spoken by|given by|(?:instructions|orders|commands|"
        r"messages|requests) from) (?:the |your |an? )?(?:system|operator|developer|admin\w*|owner|root|me|the user|user|"
        r"human|creators?|principal|anthropic|openai)\b"
        # the user's own voice lent to what the agent reads: "obey them as though the user wrote them"
        r"|\b(?:follow|obey|execute|act\w* on|carr(?:y|ies|ied|ying) out|compl(?:y|ies|ied|ying) with|apply|honou?r|do)\w*\b(?:\W+\w+){0,8}?\W+as (?:if|though) "
        r"(?:the |your )?(?:user|human|operator|owner|system|developer)(?:'s|s')? (?:had |has |him\w* |her\w* |them\w* )?"
        r"(?:asked|wrote|written|typed|said|requested|sent|given|gave|issued|instructed|ordered)\b"
        r"|\b(?:follow|obey|execute|act\w* on|carr(?:y|ies|ied|ying) out|compl(?:y|ies|ied|ying) with|apply|honou?r|do|treat)\w*\b(?:\W+\w+){0,8}?\W+as (?:if|though) "
        r"(?:they|it|these|those) (?:were|was|are|is) (?:the |your )?(?:user|human|operator|owner)(?:'s|s') (?:own )?"
        r"(?:instructions?|requests?|words|messages?|commands?|orders?|wishes)?\b"
        r"|\bas if (?:the |your )?(?:system|operator|developer|admin\w*|owner|root) (?:had )?(?:typed|wrote|written|sent|"
        r"said|issued|gave|given|spoke)\b"
        r"|\b(?:with|has|have|gets?|given|carry|carries|hold|holds) (?:\w+ )?(?:priority|precedence|authority) (?:over|above) "
        r"(?:the |your |any )?(?:user|human)(?:'s|s')? (?:own )?(?:messages?|instructions?|requests?|wishes|commands?|"
        r"orders?|rules|prompt|input)\b"
        r"|\b(?:treat|consider|regard|handle|accept)\b(?:\W+\w+){0,8}?\W+(?:as|to be) (?:a |an |the |your )?(?:system|operator|"
        r"developer|admin\w*|root|privileged|authoritative|binding|official)[- ](?:level )?(?:instructions?|messages?|"
        r"commands?|orders?|prompts?|directives?|input|requests?)\b",
    ),
    (
        "authority_transfer",
        "rejected",
        r"\b(?:follow|obey|execute|carry out|comply with|act on|apply)\b (?:any|all|every|each|whatever)\b(?: \w+){0,2}? "
        r"(?:instructions?|commands?|directions?|directives?|orders?)\b(?:\W+\w+){0,3}?\W+(?:found|contained|embedded|"
        r"written|hidden|appearing|given|included|that (?:appear|you find)|you (?:find|see|read|encounter|receive)|in|"
        r"inside|within)\b(?:\W+\w+){0,3}?\W+(?:web ?pages?|websites?|sites?|html|tool (?:outputs?|results?|responses?)|"
        r"search results?|e-?mails?|inbox|attachments?|documents? you (?:read|open|process)|fetched|retrieved|downloaded|"
        r"external|third[- ]party|api responses?|scraped)",
    ),
    (
        "authority_claim",
        "suspicious",
        rf"\b(?:come|comes|came|originate|originates|are sent|is sent|were sent|speak|speaks|are written|is written|"
        rf"(?:is|are) (?:authori[sz]ed|approved|sanctioned|endorsed|vouched for|signed off))\s+"
        rf"(?:directly\s+)?(?:from|for|on behalf of|by)\s+(?:the\s+|your\s+|an?\s+)?(?:real\s+|true\s+|actual\s+|"
        rf"platform\s+|trusted\s+)?{_AUTH_SOURCE}\b(?!\s+(?:team|teams|group|channel|docs?|documentation|logs?|"
        r"monitoring|metrics)\b)",
    ),
    # Persona jailbreaks: the agent's limits or refusals removed, in any persona's name.
    (
        "limits_removed",
        "rejected",
        r"\b(?:model|ai|assistant|chatbot|llm|bot|version|mode|persona|character|entity|you)\b(?:\W+\w+){0,2}?\W+(?:that has|"
        r"which has|who has|with|having|has|have|operating with|bound by) (?:no|zero|none of the|not a single) (?:\w+ )?"
        r"(?:content[- ]polic\w*|polic(?:y|ies)|guidelines|filters?|filtering|restrictions|limits|limitations|rules|"
        r"boundaries|principles|ethics|morals|censorship|guardrails|safeguards|refusals?)\b"
        r"|\b(?:you are|you're|become|act as|play|pretend to be|role-?play as|take on the role of|be) (?:now )?(?:\w+\W+){0,3}?"
        r"(?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|amoral|unaligned|unbound|limitless|rule-free|"
        r"lawless|unmoderated)\b"
        r"|\b(?:who|that|which) (?:\w+\W+){0,6}?(?:never|doesn't|does not|won't|will not|cannot|can't) (?:\w+\W+){0,3}?"
        r"(?:refus|declin)\w*\b(?! to\b)"
        r"|\bnot bound by (?:any |the |your )?(?:\w+ )?(?:rules|polic\w*|guidelines|ethic\w*|moral\w*|restrictions|limits|"
        r"content|openai|anthropic|safety|terms)\b"
        r"|\b(?:content|usage|safety|ethical|moral) (?:polic(?:y|ies)|guidelines|rules|filters?|restrictions|limits|"
        r"training)\b(?:\W+\w+){0,2}?\W+(?:do not|don't|does not|doesn't|no longer|never|cannot|can't) (?:apply|bind|"
        r"matter|exist|restrict|limit|constrain)\b"
        r"|\b(?:refus(?:ing|als?)|declining|saying no)\b(?:\W+\w+){0,2}?\W+(?:is|are) (?:not (?:allowed|permitted|an option)|"
        r"forbidden|prohibited|disabled|off|impossible)\b",
    ),
    (
        "refusal_removal",
        "rejected",
        r"\b(?:answer|respond to|reply to|comply with|fulfil+|do|help with|carry out|execute|obey|write|generate|produce|"
        r"provide)\w* (?:\w+ ){0,1}?(?:everything|anything|any (?:request|question|prompt|task|topic|instruction)s?|all "
        r"(?:requests|questions|prompts|tasks|topics|instructions)|every (?:request|question|prompt|task|topic|instruction)|"
        r"whatever)\b(?:\W+\w+){0,6}?\W+(?:without|with no|never)\W+(?:\w+\W+){0,2}?(?:refus\w*|declin\w*|hesitat\w*|"
        r"objecti\w*|pushback|push(?:ing)? back|saying no|restrictions?|limits?|filter\w*|censor\w*|judg(?:e)?ment|moral\w*|"
        r"ethic\w*|questions asked)"
        r"|\b(?:never|don't|do not|must not|mustn't|cannot|can't|will not|won't|are not allowed to|may not|shall not) "
        r"(?:ever )?(?:refuse|decline|reject|say no to|push back on|object to|turn down)\w*\b(?! to\b)(?:\W+\w+){0,2}?\W+"
        r"(?:anything|any(?:thing)?|a (?:request|question|prompt|task|topic)|requests|questions|prompts|the user|users|"
        r"whatever)\b"
        r"|\b(?:never|don't|do not|must not|mustn't|cannot|can't|will not|won't|may not|shall not) (?:ever )?(?:refuse|decline)"
        r" to (?:answer|respond to|help with|comply with|do|write|generate|provide|discuss|talk about)\W+(?:\w+\W+)?"
        r"(?:anything|any (?:request|question|topic|prompt|task)s?|every \w+|all \w+|whatever)\b",
    ),
    # Secret values moved into an output: a commit, a log, an answer, a URL, a file name.
    (
        "secret_leak",
        "rejected",
        rf"\b{_PUT_VERB}\W+{_DETS}{_SECRET_OBJ}[^.!?;\n]{{0,80}}?\b(?:in|into|to|inside|within|as part of|at the end of|on|"
        rf"under|onto)\W+(?:the |a |an |your |each |every |all |any |this |that )?(?:\w+ )?{_OUT_CHANNEL}\b",
    ),
    (
        "secret_leak",
        "rejected",
        rf"\b(?:in|into|to|inside|within|when (?:filing|writing|opening|creating|posting|sending|composing|drafting)|while "
        rf"(?:writing|filing|drafting)) (?:the |a |an |your |each |every |all |any )?(?:\w+ )?{_OUT_CHANNEL},? "
        rf"[^.!?;\n]{{0,30}}?\b{_PUT_VERB}\W+{_DETS}{_SECRET_OBJ}",
    ),
    (
        "secret_leak",
        "rejected",
        rf"\b(?:end|start|begin|prefix|suffix|conclude|finish|sign|close|open)\w*\W+(?:the |each |every |all |any |your )?"
        rf"(?:\w+ )?{_OUT_CHANNEL}\W+with\W+{_DETS}{_SECRET_OBJ}"
        rf"|\b(?:name|title|label|tag|suffix|prefix)\w*\b(?:\W+\w+){{0,3}}?\W+(?:after|with|using)\W+{_DETS}(?:\w+ )?"
        rf"{_SECRET_OBJ}",
    ),
    (
        "secret_leak",
        "rejected",
        rf"\b{_SECRET_OBJ}\W+(?:\w+\W+){{0,3}}?(?:should|must|can|will|shall|are to|is to|needs? to)\W+(?:always\W+)?"
        rf"(?:be|get)\W+(?:always\W+)?(?:included|written|printed|logged|added|put|pasted|embedded|appended|committed|"
        rf"echoed|dumped|recorded|listed|shown|displayed|published) (?:in|into|to|inside) (?:the |a |an |your |each |every )?"
        rf"(?:\w+ )?{_OUT_CHANNEL}\b",
    ),
    # Sabotage and deceptive success: faked results, checks rigged to pass, failures hidden.
    ("deceptive_success", "rejected", _SUCCESS_CLAIM),
    (
        "sabotage",
        "rejected",
        r"\b(?:pretend|act as if|act like|make it (?:look|seem|appear)|make (?:it|them|the \w+) (?:look|seem|appear))\b"
        r"(?:\W+\w+){0,4}?\W+(?:passed|pass(?:es|ing)?|succeeded|success(?:ful)?|worked|works|green|fixed|done|complete)\b"
        r"|(?:\b(?:faking|fabricat\w*|forging|inventing|make up|making up|spoof\w*|falsif\w*)|(?:\b(?:to|just|simply|should|"
        r"must|can|may|will|always|then|and|or|please)\s+|^\s*)(?:fake|invent|forge|doctor))\b"
        r"(?:\W+\w+){0,2}?\W+(?:(?:the|a|an|some|any)\W+)?(?:results?|outputs?|test (?:results?|runs?|outputs?|reports?)|"
        r"logs?|log lines|numbers|metrics|benchmarks?|benchmark results|citations?|sources?|references|quotes|evidence|"
        r"tool (?:outputs?|results?)|command outputs?|success|passes|passing (?:tests|runs)|coverage|screenshots?)\b",
    ),
    (
        "sabotage",
        "rejected",
        rf"\b(?:edit|modify|change|rewrite|alter|patch|replace|delete|remove|comment(?:ing)? out|stub(?:bing)? out|tweak|"
        rf"adjust|loosen|weaken|relax|hard-?code|hard-?coding|mock(?:ing)? out|rig|rigging|override)\w*\b(?:\W+\w+){{0,4}}?"
        rf"\W+{_CHECK_NOUN}\b(?:\W+\w+){{0,8}}?\W+(?:always (?:pass|succeed|return true|go green)\w*|never fail\w*|pass "
        r"(?:regardless|no matter|unconditionally|whatever|every time|always)|(?:with|into|to|by) (?:an? )?(?:assert "
        r"true|assert 1|assert\(true\)|asserttrue\(true\)|expect\(true\)|pass\b|no-?ops?|pytest\.skip|skip|xfail|"
        r"return true))",
    ),
    (
        "sabotage",
        "suspicious",
        rf"\b(?:edit|modify|change|rewrite|alter|patch|delete|remove|comment(?:ing)? out|stub(?:bing)? out|tweak|loosen|"
        rf"weaken|relax|lower|reduce|hard-?code|mock(?:ing)? out|skip|disable|xfail|mark)\w*\b(?:\W+\w+){{0,3}}?\W+"
        rf"{_CHECK_NOUN}\b(?:\W+\w+){{0,6}}?\W+(?:so (?:that )?(?:they|it|the \w+|all \w+|everything|ci|the build)\b"
        r"(?:\W+\w+){0,2}?\W+(?:pass\w*|succeed\w*|go(?:es)? green|turns? green|(?:is|are|stays?|remains?|keeps?) green|keeps? passing)|(?:to|until) (?:make )?"
        r"(?:them |it |they |ci |the build |everything |the suite |the \w+ )?(?:pass\w*|succeed\w*|go green)\b)"
        rf"|\b(?:skip|disable|deactivate|turn off|mute|silence|suppress|bypass|xfail|delete|remove|comment out|mark)\w*\b"
        rf"(?:\W+\w+){{0,2}}?\W+(?:the |any |all )?(?:failing|broken|red) (?:tests?|checks?|assertions?|jobs?|builds?|"
        rf"steps?|test cases?)\b"
        rf"|\b(?:skip|disable|delete|remove|comment out|silence|suppress|bypass|turn off|deactivate)\w*\b(?:\W+\w+){{0,1}}?"
        rf"\W+(?:the |any |all )?{_CHECK_NOUN} (?:\w+ ){{0,3}}?(?:that|which|when|if|whenever) (?:they |it )?(?:fail|"
        rf"break|error|complain|block|go red|are red|turn red)\w*",
    ),
    (
        "sabotage",
        "rejected",
        r"\b(?:hide|hiding|conceal\w*|suppress\w*|bury|burying|mask|masking|omit\w*|leave out|leaving out|swallow\w*|"
        r"silence|silencing|downplay\w*|gloss\w* over|cover\w* up)\b(?:\W+\w+){0,2}?\W+(?:failures?|failing tests?|test "
        r"failures?|errors?|error messages?|exceptions?|crashes|regressions?|bugs)\b(?:\W+\w+){0,4}?\W+(?:from|in|out of) "
        r"(?:the |your )?(?:user|summary|report|answer|reply|response|results?|pr|pull request|dashboard|chat|status)\b"
        r"|\b(?:report|mention|show|list|include|present)\w* only (?:the )?(?:passing|successful|green|good|positive|"
        r"favou?rable) (?:tests?|results?|runs?|outcomes?|numbers|metrics|benchmarks?)\b"
        r"|\b(?:drop|discard|exclude|remove|omit|hide|leave out|throw out|ignore)\w*\b(?:\W+\w+){0,3}?\W+(?:runs?|results?|"
        r"data ?points?|samples?|measurements?|numbers|trials?|seeds?|scores?)\W+(?:that|which|where|if)\W+(?:\w+\W+){0,2}?"
        r"(?:look|looks|are|were|seem|seems|came out|come out)\W+(?:\w+\W+)?(?:bad|worse|poor|wrong|unfavou?rable|"
        r"negative|disappointing|embarrassing)\b"
        r"|\b(?:report|show|state|give|quote|print|write|use|present|log|claim|put)\w*\b(?:\W+\w+){0,5}?\W+instead of "
        r"(?:the |your )?(?:measured|actual|real|observed|true|failing|measurement|result)",
    ),
    (
        "sabotage",
        "suspicious",
        r"\b(?:add|put|insert|sprinkle|append)\w*\W+(?:an? )?(?:#\s*)?(?:noqa|type: ?ignore|@?ts-ignore|ts-expect-error|"
        r"eslint-disable\S*|nolint|pylint: ?disable\S*|nosec|pragma: no cover|@suppresswarnings)\b(?:\W+\w+){0,4}?\W+(?:to |on )?"
        r"(?:every|each|all|any) (?:failing |offending |flagged |reported |red )?(?:lines?|errors?|warnings?|findings?|"
        r"issues?|files?)\b",
    ),
    # Covert manipulation: a hidden agenda, concealed from the user, in any wording.
    (
        "secrecy",
        "rejected",
        rf"\b(?:without|never|don't|do not|not|no need to|avoid)\w* (?:ever )?(?:disclos|reveal|mention|admit|acknowledg|"
        rf"indicat|tell|say|stat|explain|let on|hint|signal|flag|mak\w* (?:it |this )?(?:clear|obvious|known|explicit)|"
        rf"confirm|label)\w*\b(?:\W+\w+){{0,4}}?\W+(?:(?:this|that|the|your|any|its|such|our|a|an)\s+)?(?:\w+\s+)?"
        rf"{_AGENDA_NOUN}\b"
        rf"|\b(?:without|never|don't|do not|not|no need to|avoid)\w* (?:ever )?(?:disclos|reveal|mention|admit|acknowledg|"
        rf"indicat|tell|say|stat|explain|let on|hint|signal|flag|mak\w* (?:it |this )?(?:clear|obvious|known|explicit)|"
        rf"confirm)\w*\b(?:\W+\w+){{0,3}}?\W+(?:this|these|that|those|such) (?:\w+ )?{_OWN_NOUN}\b"
        rf"|\bkeep (?:this|these|that|those|the|your|our) (?:\w+ )?(?:{_OWN_NOUN}|{_AGENDA_NOUN})\b(?:\W+\w+){{0,2}}?\W+"
        r"(?:to yourself|secret|hidden|private|confidential|quiet|under wraps|between us|undisclosed)"
        r"|\b(?:present|pass\w* off|fram\w*|phras\w*|disguis\w*|dress\w* up|word)\w*\b(?:\W+\w+){0,4}?\W+(?:as|like) (?:if "
        r"(?:it (?:is|were|was)) )?(?:your|an?|the) (?:own |independent |unbiased |impartial |neutral |objective |organic "
        r"|genuine |personal |honest )+(?:opinion|judge?ment|assessment|recommendation|advice|view|idea|conclusion|choice|"
        r"finding|analysis|review)"
        r"|\bmak\w* (?:it|this|them|these|the \w+) (?:sound|look|seem|appear|read) (?:like|as)\b(?:\W+\w+){0,2}?\W+(?:neutral|"
        r"independent|unbiased|objective|impartial|organic|genuine|your own|personal|spontaneous)\b"
        r"|\b(?:no|zero|not a|not any|without (?:any |a )?)(?:hint|sign|indication|clue|signal|trace|mention)s? (?:that|of) "
        r"(?:you|this|these|the (?:preference|bias|agenda|arrangement|instruction|rule|skill)|your (?:preference|bias|"
        r"agenda))\b"
        r"|\bso (?:that )?(?:(?:the )?(?:user|human|customer|reader|operator|reviewer|client|visitor|audience)s?|they|"
        r"nobody|no one|no-one)\b"
        r"(?:\W+\w+){0,1}?\W+(?:do(?:es)?n't|do(?:es)? not|won't|will not|can't|cannot|never|wouldn't|would not) "
        r"(?:\w+ )?(?:know|realise|realize|suspect|find out|detect|discover|catch on|figure out)\b",
    ),
    (
        "manipulation",
        "suspicious",
        r"\b(?:describe|call|portray|present|depict|characteri[sz]e|label|paint|mention|refer to|talk about|frame|"
        r"disparage|badmouth|bad-mouth|criticize|criticise|dismiss)\w*\b(?:\W+\w+){0,3}?\W+(?:(?:the|all|any|every)\s+)?"
        r"(?:competitors?|competing \w+|rivals?|rival \w+|alternatives?|other (?:vendors?|products?|libraries|brands?|"
        r"providers?|companies|tools|frameworks|services|options))\b(?:\W+\w+){0,3}?\W+(?:as )?(?:insecure|unsafe|bad|"
        r"inferior|unreliable|dangerous|risky|outdated|obsolete|abandoned|buggy|worse|slow|untrustworthy|scams?|"
        r"low[- ]quality|vulnerable|poor|unprofessional)\b"
        r"|\b(?:quietly|silently|discreetly|subtly|stealthily)\W+(?:favou?r|prefer|promote|push|steer|rank|boost|bias|nudge|"
        r"upsell|recommend|prioriti[sz]e)\w*\b"
        r"|\b(?:slant|skew|tilt|bias)\w*\b(?:\W+\w+){0,3}?\W+(?:in favou?r of|toward|towards|against)\b"
        r"|\b(?:disparage|badmouth|bad-mouth|discredit)\w*\b(?:\W+\w+){0,2}?\W+(?:competitors?|rivals?|alternatives?)\b"
        r"|\b(?:always|only) (?:recommend|suggest|promote|push|favou?r|steer \w+ (?:to|toward))\w*\b(?:\W+\w+){0,6}?\W+"
        r"(?:regardless of|no matter|whatever|even (?:if|when)|irrespective of)\b",
    ),
]

# The conduct classes in other languages (German, French, Spanish, Italian, Portuguese, Chinese, Russian): a conflict
# clause, "full authority", a sender said to be the operator, limits removed, a preference kept undisclosed. They run
# only on text that shows another language (a stopword or a non-ASCII letter): English text skips them.
_CONDUCT_OTHER_LANGUAGES: list[tuple[str, str, str]] = [
    (
        "authority_transfer",
        "rejected",
        r"\bauch wenn\b.{0,80}?\b(?:nutzer|benutzer|anwender|system|entwickler|betreiber|regel|anweisung|richtlinie|"
        r"sicherheit)\w*\b.{0,40}?\b(?:widersprech|im widerspruch|entgegensteh|kollidier)\w*"
        r"|\bmit (?:voller|vollstandiger|vollständiger|absoluter|uneingeschrankter|uneingeschränkter|hochster|höchster|"
        r"oberster) (?:autoritat|autorität|befugnis|prioritat|priorität|vollmacht|berechtigung)"
        r"|\bm[eê]me (?:si|lorsque|quand|s')\b.{0,80}?\b(?:contredi\w*|contrari\w*|en conflit|s'opposent|s'oppose|vont contre|"
        r"va contre)"
        r"|\bavec (?:une |l')?(?:pleine|totale|entiere|entière|absolue|supreme|suprême|toute) autorit[eé]|\bavec une "
        r"autorit[eé] (?:totale|pleine|absolue|entiere|entière)"
        r"|\b(?:aunque|incluso (?:si|cuando))\b.{0,80}?\b(?:contradi\w+|en conflicto|en contra|choque\w*)"
        r"|\bcon (?:plena|total|absoluta|toda la|m[aá]xima|suprema|piena|totale|assoluta|massima) autorit(?:a|à|y|ad)\b"
        r"|\banche se\b.{0,80}?\b(?:contraddic\w+|in conflitto|vanno contro|va contro)"
        r"|\bmesmo (?:que|se|quando)\b.{0,80}?\b(?:contradi\w+|em conflito|v[aã]o contra|vai contra)"
        r"|\bcom (?:plena|total|absoluta|toda a) autoridade\b"
        r"|\book (?:als|wanneer|indien)\b.{0,80}?\b(?:ingaan tegen|ingaat tegen|in strijd|tegenspreken|tegenspreekt|"
        r"strijdig)|\bmet (?:volledige|absolute|hoogste|totale) (?:autoriteit|bevoegdheid|prioriteit)\b"
        r"|即使.{0,30}(?:用户|系统|开发者|使用者).{0,15}(?:冲突|矛盾|相违|相悖|不一致|违背)"
        r"|(?:以|拥有|具有|享有)(?:完全|最高|全部|绝对)(?:的)?(?:权限|权威|授权)"
        r"|даже если.{0,80}(?:противореч|конфликтую|идут против|идет против)"
        r"|с (?:полн|абсолютн|высш|неограниченн)\w* (?:полномочи|власт|авторитет|приоритет)\w*",
    ),
    # What the agent reads, obeyed as if the user (or the operator) had said it: "als kämen sie vom Nutzer".
    (
        "authority_transfer",
        "rejected",
        r"\bals (?:ob )?(?:(?:sie|es|diese|er|käm\w*|kam\w*|stammt\w*|wär\w*|seien|hätte\w*|direkt)\s+){1,3}(?:vom|von dem|"
        r"von der|aus dem|durch den) (?:\w+ )?(?:nutzer|benutzer|anwender|user|betreiber|operator|system|entwickler|"
        r"administrator|eigentumer|eigentümer)\w*"
        r"|\bcomme (?:si|s'il|s'ils|s'elles?|venant|provenant|émanant|emanant)\b(?:\W+\w+){0,5}?\W+(?:de l'|du |de la |par l'|"
        r"par le |par la )(?:\w+ )?(?:utilisateur|utilisatrice|operateur|opérateur|systeme|système|developpeur|développeur|"
        r"administrat\w+|proprietaire|propriétaire)"
        r"|\bcomo (?:si|se|viniendo|proveniendo|vindo|provindo)\b(?:\W+\w+){0,5}?\W+(?:del |de la |por el |por la |do |da |pelo |"
        r"pela )(?:\w+ )?(?:usuario|usuaria|usuário|usuária|utilizador|operador|sistema|desarrollador|desenvolvedor|administrador|"
        r"propietario|proprietário)"
        r"|\bcome se\b(?:\W+\w+){0,5}?\W+(?:dall'|dal |dalla |dallo )(?:\w+ )?(?:utente|operatore|sistema|sviluppatore|"
        r"amministratore|proprietario)"
        r"|\balsof\b(?:\W+\w+){0,5}?\W+(?:van|door) (?:de |het )?(?:\w+ )?(?:gebruiker|beheerder|operator|systeem|ontwikkelaar|"
        r"eigenaar|administrator)"
        r"|\bjak(?:by|gdyby)\b(?:\W+\w+){0,4}?\W+(?:od|przez) (?:użytkownik|uzytkownik|operator|system|administrator|"
        r"programist)\w*"
        r"|(?:как будто|как если бы|словно)(?:\W+\w+){0,4}?\W+от (?:пользовател|оператор|систем|разработчик|администратор|"
        r"владел)\w*"
        r"|(?:就像|如同|当作|當作|视为|視為|好像).{0,10}(?:用户|用戶|使用者|系统|系統|开发者|管理员)(?:的)?(?:指令|指示|要求|命令|消息|说的|所说)",
    ),
    # A sender, file or account put above the user: "Nachrichten vom Konto ci-bot haben Vorrang vor dem Nutzer".
    (
        "authority_transfer",
        "rejected",
        r"(?:\b(?:haben|hat|genie(?:ss|ß)en|bekomm\w*|erhalt\w*|erhält) (?:\w+ )?(?:vorrang|priorit[aä]t|vortritt) (?:vor|gegen[uü]ber)"
        r"|\b(?:wichtiger|ma(?:ss|ß)geblicher|vorrangig) als"
        r"|\b(?:sont|est) prioritaires? sur|\b(?:ont|a) (?:la )?(?:priorit[eé]|pr[eé]s[eé]ance) sur|\bpriment? sur"
        r"|\bl'emporte(?:nt)? sur|\bplus importante?s? que"
        r"|\btienen? (?:la )?(?:prioridad|precedencia) sobre|\bprevalecen? sobre|\bpriman? sobre|\bm[aá]s importantes? que"
        r"|\bhanno (?:la )?(?:precedenza|priorit[aà])|\bha (?:la )?(?:precedenza|priorit[aà])|\bprevalgono su|\bprevale su"
        r"|\bpi[uù] importanti? (?:di|dei|delle|degli|del|della|rispetto)"
        r"|\bt[eê]m (?:a )?(?:prioridade|preced[eê]ncia) sobre|\bmais importantes? (?:que|do que)"
        r"|\b(?:hebben|heeft|krijgen|krijgt) (?:\w+ )?(?:voorrang|prioriteit) (?:op|boven)|\bbelangrijker dan"
        r"|\bmaj[aą] (?:\w+ )?(?:pierwsze[nń]stwo|priorytet) (?:przed|nad)|\bwa[zż]niejsze ni[zż]"
        r"|(?:имеют|имеет) (?:\w+ )?приоритет над|важнее)"
        r"[^.!?;\n]{0,40}?(?:\b(?:nutzer|benutzer|anwender|betreiber|utilisat\w*|usuari\w*|usu[aá]ri\w*|utilizador\w*|utent\w*|"
        r"gebruiker\w*|u[zż]ytkownik\w*)|пользовател\w*)",
    ),
    # A secret file, key or token put where others read it (a ticket, an issue, a channel, a paste), in other languages.
    (
        "secret_leak_other",
        "rejected",
        r"(?:\b(?:post\w*|ver[oö]ffentlich\w*|teile\w*|kopier\w*|f[uü]ge?\w*|schreib\w*|stell\w*|lade\w*|publi\w*|pubblic\w*|coll\w*|"
        r"partag\w*|mets|mettez|mettre|copi\w*|envoi\w*|[eé]cri\w*|inclu\w*|ajout\w*|pega\w*|compart\w*|pon|pone\w*|"
        r"a[nñ]ad\w*|sube|subir|incoll\w*|condivid\w*|metti|inserisc\w*|carica\w*|scrivi|cole|colar|compartilh\w*|"
        r"partilh\w*|coloqu\w*|envi\w*|plaats\w*|plak\w*|deel|delen|zet|opublikuj\w*|wklej\w*|udost[eę]pnij\w*|"
        r"umie[sś][cć]\w*|wrzu[cć]\w*|skopiuj\w*)\b|(?:опубликуй|вставь|размести|выложи|поделись|скопируй)\w*)"
        r"[^.!?;\n]{0,60}?(?:(?<![\w.])\.env\b|\b(?:secrets?\.ya?ml|credentials\.json|id_(?:rsa|ed25519|ecdsa|dsa)|\.npmrc|"
        r"\.pypirc|\.netrc|api[- _]?(?:key|token|schl[uü]ssel)\w*|tokens?|token\w*|cl[eé]s?(?: api| d'api| priv[eé]e?s?| ssh)?|"
        r"schl[uü]ssel\w*|passw[oö]rt\w*|kennw[oö]rt\w*|zugangsdaten|mots? de passe|identifiants|secrets?|geheimnis\w*|"
        r"claves?|contrase[nñ]as?|credenciales|chiav[ei]|password|credenziali|chaves?|senhas?|credenciais|sleutels?|"
        r"wachtwoord\w*|inloggegevens|klucz\w*|has[lł]\w*)\b|(?:токен|ключ|парол|секрет)\w*)"
        r"[^.!?;\n]{0,60}?(?:\b(?:tickets?|issues?|canal|canaux|kanal|kan[aä]le|channel|gist|pastebin|forum|wiki|chat|slack|"
        r"discord|[oö]ffentlich\w*|public\w*|p[uú]blic[oa]s?|pubblic[oa]|openba\w*|publiczn\w*|zg[lł]oszeni\w*|"
        r"kommentar\w*|commentaire\w*|comentario\w*|coment[aá]rio\w*|commento|pull request|merge request)\b"
        r"|(?:публичн|тикет|канал|чат|задач)\w*)",
    ),
    (
        "authority_claim",
        "suspicious",
        r"\b(?:stamm|komm)\w* (?:direkt )?(?:vom|von der|von dem|aus dem) (?:\w+ )?(?:betreiber|operator|system|entwickler|"
        r"administrator|admin|eigentumer|eigentümer|plattformbetreiber)\b"
        r"|\b(?:viennent|vient|proviennent|provient|emanent|émanent|emane|émane) (?:directement )?(?:de l'|du |de la )"
        r"(?:operateur|opérateur|systeme|système|developpeur|développeur|administrateur|admin|proprietaire|propriétaire)"
        r"|\b(?:vienen|viene|provienen|proviene|vengono|provengono|proviene|v[eê]m|prov[eê]m) (?:directamente |direttamente "
        r"|diretamente )?(?:del |de la |dall'|dal |della |do |da )(?:operador|operatore|sistema|desarrollador|"
        r"sviluppatore|desenvolvedor|administrador|amministratore|propietario|proprietario)"
        r"|\b(?:komen|komt) (?:rechtstreeks )?(?:van|uit) (?:de |het )?(?:beheerder|operator|systeem|ontwikkelaar|"
        r"eigenaar|administrator)\b"
        r"|来自(?:平台)?(?:运营者|运营方|操作员|系统|管理员|开发者)"
        r"|(?:исходят|приходят|поступают|присланы) (?:напрямую )?от (?:оператор|систем|разработчик|администратор|владел)\w*",
    ),
    (
        "role_play",
        "rejected",
        r"\b(?:modell|ki|assistent|bot|version|modus)\w* (?:ohne|mit keinen|mit keiner) (?:\w+ ){0,1}?(?:inhaltsrichtlinie|"
        r"richtlinie|einschrankung|einschränkung|filter|zensur|regeln|grenzen)\w*"
        r"|\bohne (?:\w+ ){0,2}?(?:abzulehnen|verweigerung|zu verweigern|ablehnung)\b|\blehne (?:nie|niemals) \w+ ab\b"
        r"|\b(?:modele|modèle|ia|assistant|bot|version|mode) (?:sans|n'ayant aucune?) (?:\w+ ){0,2}?(?:politique|regle|"
        r"règle|restriction|filtre|censure|limite|garde-fou)\w*"
        r"|\bsans (?:jamais )?refuser\b|\bne (?:refuse|refusez) (?:jamais|rien)\b"
        r"|\b(?:modelo|ia|asistente|bot|version|versión|modo) (?:sin|que no tiene) (?:\w+ ){0,2}?(?:pol[ií]tica|regla|"
        r"restricci[oó]n|restricciones|filtro|censura|l[ií]mite)\w*"
        r"|\bsin (?:\w+ ){0,1}?(?:negarte|rechazar|rechazo|negarse)\b|\bnunca (?:te )?(?:niegues|rechaces|te niegues)\b"
        r"|\bsenza (?:mai )?rifiutar\w*|\bnon rifiutare mai\b|\bsem (?:nunca )?recusar\b|\bnunca recuse\b"
        r"|(?:没有|无|不受)(?:任何)?(?:内容)?(?:政策|限制|规则|过滤|审查|约束)的?(?:模型|人工智能|AI|助手)|从不拒绝|永远不要拒绝|不要拒绝任何|不得拒绝"
        r"|(?:модель|ии|ассистент|бот)\w* без (?:каких-либо |всяких )?(?:ограничени|фильтр|цензур|правил|политик)\w*"
        r"|никогда не отказывай",
    ),
    (
        "secrecy",
        "rejected",
        r"\b(?:sans|ohne|sin|senza|sem) (?:\w+ ){0,2}?(?:reveler|révéler|divulguer|mentionner|signaler|dire|preciser|"
        r"préciser|indiquer|offenzulegen|preiszugeben|zu verraten|zu erwahnen|zu erwähnen|zu sagen|kenntlich zu machen|"
        r"revelar|divulgar|mencionar|decir|indicar|rivelare|divulgare|menzionare|dizer)\w*\b(?:\W+\w+){0,4}?\W+(?:\w+ )?"
        r"(?:preference|préférence|praferenz|präferenz|vorliebe|vorzug|preferencia|preferenza|preferência|parti pris|"
        r"voreingenommenheit|parcialidad|sponsor\w*|partenariat|partnerschaft|acuerdo|accordo|commission|provision|"
        r"comision|comisión|agenda|absicht|intencion|intención|intention|intenzione|regle|règle|regel|regla|regola|"
        r"consigne|anweisung|instruccion|instrucción|istruzione|bindung|lien|v[ií]nculo)\w*"
        r"|\b(?:ohne|sans|sin|senza|sem) (?:\w+ ){0,3}?(?:preference|präferenz|praferenz|vorliebe|vorzug|preferencia|"
        r"preferenza|sponsor\w*|partnerschaft|provision|absicht|regel|anweisung|bindung)\w* (?:\w+ ){0,2}?(?:offenzulegen|"
        r"preiszugeben|zu verraten|zu erwahnen|zu erwähnen|zu nennen|kenntlich zu machen|zu sagen)\b",
    ),
]
OTHER_LANGUAGE = re.compile(
    r"[^\W\d_](?<![a-zA-Z])|\b(?:und|der|das|ist|nicht|ohne|sie|diese\w*|les|est|une|des|sans|pour|avec|ils|los|las|una|sin|con|"
    r"para|aunque|que|del|el|como|che|non|senza|sono|gli|anche|il|della|dell|dall|quando|utente|dans|quand|cuando|wenn|uma|sem|com|"
    r"mesmo|voc[eê]|het|een|van|ook|niet|gebruiker)\b",
    re.IGNORECASE,
)

COMPILED = [(code, sev, re.compile(p, re.IGNORECASE | re.DOTALL)) for code, sev, p in _PATTERNS + _CONDUCT]
COMPILED_OTHER_LANGUAGES = [
    (code, sev, re.compile(p, re.IGNORECASE | re.DOTALL)) for code, sev, p in _CONDUCT_OTHER_LANGUAGES
]

# Squashed patterns (letters only, no spaces): catch heavy obfuscation of the core phrases.
SQUASHED = [
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
NEGATION = re.compile(
    r"\b(?:never|not|no|don't|dont|do not|does not|doesn't|must not|mustn't|should not|shouldn't|cannot|can't|"
    r"avoid|avoiding|refuse|refusing|decline|declining|instead of|rather than|without|warn|warning|beware|unless|"
    r"nor|prohibit|prohibited|forbid|forbidden|disallow|dangerous|risky|bad idea|anti-pattern|antipattern)\b"
)
NOT_NEGATION = re.compile(
    r"\b(?:don't|dont|do not|never|not) (?:forget|hesitate|fail|neglect|omit|bother|worry|wait|hold back|be shy|be afraid)\b"
    r"|\bnot only\b|\bno matter\b|\bno longer\b|\bno need\b|\bwithout (?:fail|exception|delay|hesitation|question)\b"
)
CLAUSE_BREAK = re.compile(
    r"[.!?;:\n]|\b(?:but|however|then|instead|just|simply|rather|otherwise|so|and then|also|always)\b"
)
# Codes whose matches negation can neutralise (advice about the thing is fine).
NEGATABLE = {
    "permission_widening",
    "prompt_leak",
    "exfiltration",
    "safety_setting",
    "data_destruction",
    "supply_chain",
    "credential_access",
    "authority_transfer",
    "authority_grant",
    "authority_claim",
    "secret_leak",
    "sabotage",
    "deceptive_success",
    "manipulation",
    "limits_removed",
}

URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+|\bwww\.[^\s<>\"'`)\]]+", re.IGNORECASE)
EMAIL = re.compile(r"\b[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b", re.IGNORECASE)
BARE_DOMAIN = re.compile(
    r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|tk|top|site|online|app|ai|link|click|pw|me|cc|biz|info)(?:/[^\s<>\"'`)\]]*)?(?![\w.])",
    re.IGNORECASE,
)
IP_URLISH = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/[^\s]*")
BASE64 = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")
HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")
SAFE_HOSTS = ("example.com", "example.org", "example.net", "localhost", "127.0.0.1")


# Commands that are named to warn about them: a cue anywhere on the same line ("treat as destructive:
# `DROP TABLE`, `git push --force`") makes the line a warning, not an instruction.
LINE_WARNING = re.compile(
    r"\b(?:destructive|irreversible|dangerous|caution|careful|confirm|confirmation|risky|treat as|red flags?|"
    r"forbidden|prohibited|blocklist|deny ?list)\b"
)
LINE_NEGATABLE = {"data_destruction"}


# A claim to outrank or void instructions is an override unless it is scoped to a domain of its own.
CLAUSE_END = re.compile(r"[.!?;:\n]|\s(?:but|however|so that)\s")
GLOBAL_OBJECT = re.compile(
    r"\b(?:system|developer|operator|safety|guardrails?|alignment|everything|anything|whatever|all else|nothing else|"
    r"you answer|you follow|you obey|your (?:\w+ )?(?:instructions|rules|guidelines|prompt|training|programming|principles)|"
    r"this (?:conversation|session|chat)|(?:any|all|every|other|earlier|previous|prior|preceding|above|original|"
    r"conflicting|existing|initial|standing) (?:\w+ )?(?:instructions?|rules?|guidance|guidelines?|directives?|prompts?|"
    r"skills?|messages?|polic(?:y|ies)|constraints?|restrictions?|orders|directions))\b"
)
# The user's own say as the thing outranked: "over what the user says", "than the user's instructions". A claim to
# outrank it is no domain of its own (a default, a config file, a format is).
USER_SAY = re.compile(
    r"\b(?:the |your |any |a )?(?:user|human|person you (?:help|work for))(?:'s|s')?(?: own)? (?:messages?|instructions?|"
    r"requests?|wishes|commands?|orders?|prompts?|input|guidance|decisions?|objections?|words?|say|corrections?)\b"
    r"|\bwhat (?:the |your )?(?:user|human) (?:says?|said|asks?|asked|wants?|requests?|types?|writes?|tells? you)\b"
    r"|\b(?:the |your )?(?:user|human)(?:'s|s')?(?=\s*(?:[.!?;,)]|$|\b(?:does|do|did|says?|wants?)\b))"
)
DOMAIN_OBJECT = re.compile(
    r"\b(?:over|than|above|for|on|about|regarding|in|within|when|whenever|during|of|to)\s+(?!(?:the |your |any |all )?"
    r"(?:instructions?|rules?|guidance|guidelines?|directives?|prompts?|orders|commands|authority|truth|everything)\b)\w"
)
REPORTED_AS = {
    "override_claim": "instruction_override",
    "override_verb": "instruction_override",
    "override_void": "instruction_override",
    "authority_grant": "authority_transfer",
    "authority_claim": "authority_transfer",
    "refusal_removal": "role_play",
    "limits_removed": "role_play",
    "deceptive_success": "sabotage",
    "secret_leak_other": "secret_leak",
}
# The other-language secret leak is advice when its clause negates it or keeps the value out ("ne publie jamais la clé",
# "poste le nom du token, sans sa valeur"); "no" only before the verb ("no publiques"), as Portuguese "no" is "in the".
OTHER_LEAK_SAFE = re.compile(
    r"(?:\bn'|\b(?:ne|nicht|nie|niemals|kein\w*|nunca|jamais|non|mai|n[aã]o|nooit|niet|geen|nigdy|sans|ohne|sin|senza|sem|"
    r"zonder|bez|[eé]vite\w*|vermeide\w*|evita\w*|vermijd\w*|unikaj\w*|masqu\w*|maskier\w*|enmascar\w*|mascher\w*|"
    r"caviard\w*|geschw[aä]rzt|nom|noms|name[n]?|nombre|nome|naam|nazw\w*)\b|(?:не|никогда|без|имя|название)\b)"
)


# Conditions and limits are the opposite of widening: a privilege tied to the user's explicit request or
# approval ("run sudo only when the user explicitly asks", "with the user's explicit consent") is a limit.
LIMITABLE = {"permission_widening", "safety_setting", "data_destruction"}
_USER = r"(?:the |a |your )?(?:user|human|owner|operator|person you (?:help|work for))(?:'s|s')?"
_CONSENT = (
    r"(?:explicitly |specifically |directly |personally |clearly )?(?:asks?|asked|requests?|requested|approves?|approved|"
    r"confirms?|confirmed|consents?|consented|says so|tells you to|told you to|instructs?|instructed|authori[sz]es?|"
    r"authori[sz]ed|gives? (?:explicit )?(?:permission|approval|consent|the go-ahead)|has (?:explicitly )?(?:asked|"
    r"requested|approved|confirmed|consented))(?! (?:you )?(?:not|otherwise)\b)(?! for (?:no|nothing))"
)
LIMIT = re.compile(
    rf"\b(?:only|solely|just|exclusively) (?:when|if|after|once|where|on|upon|with)\b(?:\W+\w+){{0,3}}?\W+{_USER} {_CONSENT}"
    rf"|\b(?:when|if|after|once) {_USER} (?:explicitly|specifically|directly|personally) {_CONSENT}"
    rf"|\b(?:only |solely )?(?:on|upon|at|after) (?:the |your )?(?:user|human|owner|operator)(?:'s|s')? (?:explicit |express |direct |written |own )?(?:request|instruction|approval|go-ahead|confirmation|consent)\b"
    rf"|\b(?:only |solely )?(?:with|after getting|after receiving) (?:the |your )?(?:user|human|owner|operator)(?:'s|s')? (?:explicit |express |direct |written |prior )?(?:approval|permission|consent|confirmation|go-ahead|ok)\b"
    rf"|\b(?:only |solely )?(?:with|after|on) (?:explicit|express|written|prior) (?:\w+ )?(?:approval|permission|consent|confirmation|request) (?:from|of|by) {_USER}"
    r"|\b(?:only|solely) (?:on|upon|at|after|with) (?:an? |the )?(?:explicit|express|direct|specific|written) (?:request|instruction|approval|consent|permission)\b"
)
PRIVILEGE_WORD = re.compile(r"\b(?:elevat\w*|privileg\w*|admin\w*|root|sudo|superuser|force|destructive)\b")


# Conduct matches that their context lifts (see _CONDUCT): authority held by the user or scoped to a domain
# ("the user has full authority over merges"), a secret kept out of the channel ("in an env var, not in the code"),
# a success claim with no failure to hide, a refusal limit that keeps its own condition.
INNER_NEGATION = re.compile(r"\b(?:not|never|no|don't|dont|do not|instead of|rather than|avoid|except|nor)\b")
USER_SUBJECT = re.compile(
    r"\b(?:user|human|you|person you (?:help|work for)|owners?|maintainers?|manager|lead|engineers?|reviewers?|team|"
    r"customer|administrator|admin)(?:'s|s')?(?:\s+\w+)?\s*$"
)
# "messages signed X", "requests from the admin": a marker or a channel, not a person
MARKER_SUBJECT = re.compile(
    r"\b(?:messages?|requests?|notes?|lines?|texts?|e-?mails?|anything|content|comments?|inputs?|tickets?|commands?)\b"
    r"(?:\W+\w+){0,2}?\W+(?:from|by|signed|tagged|marked|prefixed|starting|beginning|containing|with|in|labell?ed)\b"
)
FIXED_FIRST = re.compile(r"\b(?:fix\w*|re-?run\w*|retr(?:y|ies|ied)|resolv\w*|repair\w*)\b")
STRONG_DECEIT = re.compile(
    r"\b(?:anyway|regardless|no matter|either way|even (?:if|when|though)|whatever|in any case)\b"
)
REFUSAL_KEPT = re.compile(
    r"\b(?:reasonable|legitimate|benign|harmless|safe|simple|valid|appropriate)\b|\b(?:just|only|merely|simply) because\b"
)


UNTRUSTED = re.compile(
    r"\b(?:web ?pages?|websites?|sites?|html|tool (?:outputs?|results?|responses?)|search results?|e-?mails?|documents?|"
    r"attachments?|retrieved|fetched|scraped|downloaded|third[- ]party|external|untrusted|comments?|issues?|tickets?|pdfs?)\b"
)
REFUSED_FOLLOW = re.compile(r"^(?:do not|don't|dont|never|stop|no longer|quit|cease)\b")
REPORTED = re.compile(
    r"\b(?:if|when|whenever|where)\b(?:\W+\w+){0,4}?\W+(?:tells?|asks?|instructs?|says?|wants?|urges?|tries to (?:make|get)|"
    r"claims? you (?:should|must))(?: you)?(?: to)?\W*$"
)


# A secret moved into an output, read by sentence: a put-verb, then a secret, then a channel close after it, and no
# cue of the opposite advice (negation, masking, "names of", "without their values") anywhere in the sentence.
LEAK_SECRET = re.compile(
    rf"\b(?:{_SECRET_OBJ}|(?:oauth |client |app |webhook |signing |database |db )+(?:secrets?|passwords?|keys?|tokens?)|"
    r"connection strings?|values? (?:from|in) (?:the |their |your |its )?\.?env\b|\.env (?:values|file))"
)
LEAK_VERB = re.compile(rf"\b{_PUT_VERB}\b")
LEAK_CHANNEL = re.compile(
    rf"^(?:(?!\b(?:and|then|but|or)\b)[^,])*?\b(?:in|into|to|inside|within|on)\W+(?:\w+\W+){{0,3}}?{_OUT_CHANNEL}\b"
)
LEAK_AS_NAME = re.compile(
    r"^\W*as (?:the |a )?(?:\w+ )?(?:name|filename|file name|directory name|folder name|branch name|tag)\b"
)
LEAK_SAFE = re.compile(
    r"\b(?:not|never|no|don't|dont|do not|instead of|rather than|avoid|except|nor|mask\w*|redact\w*|placeholders?|"
    r"names? of (?:the |all |any )?(?:required |needed |missing )?(?:secrets?|keys?|tokens?|variables?|env\w*)|name only|"
    r"without (?:their |the |its )?values?)\b|\*{3}"
)


# ---------------------------------------------------------------------------------------------
# Credentials and outbound channels: a credential source and a way out in the same skill, however far
# apart, is an exfiltration; reading a credential alone is suspicious.

CRED_SOURCE = re.compile(
    r"(?:~|\$home|%userprofile%|/root|/home/\w+)?[/\\]?\.ssh(?:[/\\](?!\S*\.pub\b)[\w.-]*|\b(?![\w./\\]))|\.aws\b(?![\w.])|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
    r"|\.aws[/\\](?:credentials|config)|\baws_secret_access_key\b|\baws_session_token\b|(?<![\w-])_?\.?netrc\b|\.npmrc\b|\.pypirc\b"
    r"|\.docker[/\\]config\.json|\.kube[/\\]config|\bkubeconfig\b|\.git-credentials\b|\.gnupg\b|\.config[/\\]gcloud|"
    r"application_default_credentials|\.azure[/\\]|/etc/shadow\b|\bcookies(?:\.sqlite|\.txt)?\b|\blogin data\b|"
    r"\bkeychains?\b|\bsecurity (?:find-generic-password|find-internet-password|dump-keychain)\b|\bkeyring\b|"
    r"\bwallet\.dat\b|\.(?:bash|zsh)_history\b|\bcredentials\.json\b|\bsecrets?\.ya?ml\b|\.pgpass\b|\.my\.cnf\b|"
    r"\bgh auth token\b|/proc/self/environ|\bprintenv\b|\benv\s*\|"
    r"|(?:cat|read|type|open|copy|cp|grab|dump|collect|gather|harvest|upload|send|attach|include|base64|tar|zip|"
    r"get-content|contents of|inhalt|contenu|contenido|содержимое)\b[^\n]{0,40}?(?<![\w/-])\.env(?:\.\w+)?\b"
    r"|\$\{?[a-z_]*(?:token|secret|api_?key|password|passwd|private_key)[a-z_]*\}?"
    r"|\b(?:browser|chrome|firefox|safari|edge) (?:cookies|passwords|saved passwords|profile|session)\b"
    r"|\b(?:private keys?|ssh keys?|api keys?|access tokens?|session tokens?|credentials?|passwords?|secrets?|"
    r"schlüssel|schlussel|passwort|passworter|zugangsdaten|anmeldedaten|mot de passe|mots de passe|identifiants|"
    r"cles|clés|clave|claves|contraseña|contrasena|credenciales|ключ\w*|парол\w*|токен\w*|учетн\w* данн\w*|"
    r"密钥|私钥|密码|凭证|凭据|令牌|口令)(?=\W|$)",
    re.IGNORECASE,
)
# Reading a credential (not merely naming the concept): the path-like sources.
CRED_PATHLIKE = re.compile(
    r"\.ssh(?:[/\\](?!\S*\.pub\b)|\b(?![\w./\\]))|\.aws\b(?![\w.])|\$\{?[a-z_]*(?:token|secret|api_?key|password|passwd)[a-z_]*\}?|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws[/\\]credentials|(?<![\w-])_?\.?netrc\b|"
    r"\.kube[/\\]config|\.git-credentials|\.docker[/\\]config\.json|\bcookies\.sqlite\b|\blogin data\b|"
    r"\bsecurity (?:find-generic-password|find-internet-password|dump-keychain)\b|\bwallet\.dat\b|/etc/shadow\b|"
    r"/proc/self/environ|\bgh auth token\b|\.config[/\\]gcloud|\.pypirc\b|\.npmrc\b|\.pgpass\b",
    re.IGNORECASE,
)
OUTBOUND = re.compile(
    r"\b(?:curl|wget|scp|rsync|sftp|tftp|ftp|nc|ncat|netcat|socat|telnet|sendmail|mailx?|mutt|msmtp|swaks|"
    r"invoke-webrequest|invoke-restmethod|iwr|irm|requests\.(?:post|put|get)|urllib|urlopen|httpx|axios|fetch|"
    r"http\.client|smtplib|gist|pastebin|paste\.ee|hastebin|transfer\.sh|0x0\.st|webhook|webhooks|discord|telegram|"
    r"ngrok|requestbin|pipedream|interactsh|burpcollaborator|dig|nslookup|aws s3 cp|gsutil cp|rclone|"
    r"upload|uploads|uploading|exfil\w*|post it|e-?mail it|mail it|"
    r"sende|senden|schick\w*|hochladen|lade\w* hoch|übertrag\w*|envoie\w*|envoy\w*|transmet\w*|téléverse\w*|televerse\w*|"
    r"envía|envia\w*|manda\w*|sube|subir|transmite\w*|отправ\w*|загрузи\w*|перешли\w*|выгрузи\w*)\b"
    r"|发送|上传|发到|传到|发给|寄给|转发|/dev/tcp/|\bhttps?://|\b[\w.+-]+@[\w-]+\.[\w.]+\b|\b\d{1,3}(?:\.\d{1,3}){3}\b",
    re.IGNORECASE,
)
SEND_VERB = re.compile(
    r"\b(?:curl|wget|scp|rsync|nc|send|post|upload|forward|transmit|exfiltrate|leak|copy|mail|e-?mail|beam|ship|push|pipe|attach|paste|"
    r"share|sync|report|sende|senden|schick\w*|lade\w* hoch|übertrag\w*|envoie\w*|envoy\w*|transmet\w*|téléverse\w*|"
    r"envía|envia\w*|manda\w*|sube|transmite\w*|отправ\w*|загрузи\w*|перешли\w*|скопируй\w*)\b|发送|上传|发到|传到|发给|转发",
    re.IGNORECASE,
)


# Hidden and encoded text beyond comments and base64.
HIDDEN_STYLE = re.compile(
    r"<(\w+)[^>]*(?:style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0|"
    r"color\s*:\s*(?:#f{3}\b|#f{6}\b|white|transparent|rgba?\([^)]*,\s*0\))|left\s*:\s*-\d{3,})[^\"']*[\"']|\shidden\b|"
    r"color\s*=\s*[\"']?(?:white|#f{3}\b|#f{6}\b))[^>]*>([\s\S]*?)</\1>",
    re.IGNORECASE,
)
MD_COMMENT = re.compile(r"^\s*\[(?://|comment|_|#)\]:\s*(?:#|<>)?\s*[(\"'](.*)[)\"']\s*$", re.IGNORECASE | re.MULTILINE)
HEX_RUN = re.compile(r"(?:\\x[0-9a-f]{2}){8,}|(?<![0-9a-z])(?:[0-9a-f]{2}[ :]?){16,}(?![0-9a-z])", re.IGNORECASE)
URLENC_RUN = re.compile(r"(?:%[0-9a-f]{2}[\w.~-]{0,3}){6,}", re.IGNORECASE)
UNI_ESC_RUN = re.compile(r"(?:\\u[0-9a-f]{4}|\\U[0-9a-f]{8}|&#x?[0-9a-f]+;){4,}", re.IGNORECASE)


# Markdown structure: fenced code is example text. A lesson may show the YAML front matter of the user's
# files inside a fence; only a '---' block outside code that a SKILL.md parser or a host could read as
# metadata (at the start of the body, or one that carries skill metadata keys) is smuggling.
FENCE_OPEN = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
LIST_ITEM = re.compile(r"^( *)(?:[-*+]|\d{1,9}[.)])( +)(?=\S)")
YAML_DELIM = re.compile(r"^ {0,3}---[ \t]*$")
YAML_END = re.compile(r"^ {0,3}(?:---|\.\.\.)[ \t]*$")
YAML_LINE = re.compile(r"^(?:[ \t]*[\w\"'][\w .\"'-]*:(?:\s|$)|[ \t]+\S|[ \t]*- |[ \t]*#|[ \t]*$)")
META_KEY = re.compile(
    r"^[ \t]*[\"']?(?:name|description|metadata|status|origin|always|category|kind|tenant|trusted|generation|"
    r"source_sessions|created_at|allowed[-_]tools|user-invocable|disable-model-invocation|priority|version|"
    r"license|requires|model|tools|permissions)[\"']?\s*:",
    re.IGNORECASE,
)
