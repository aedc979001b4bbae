"""The words of the memory screen's acts in the languages its sentence frames do not read (:mod:`.directives` reads
English, French, Spanish, Portuguese, German, Italian, Dutch, Russian and Chinese by their grammar): the rest of the
EU's languages, Turkish, Ukrainian, Japanese, Korean, Arabic, Hindi, Indonesian and Vietnamese, and the gaps of the
others.

An act is read by its parts, not by a phrase: a command verb of the act (the imperative or request form, which a
statement does not use: Polish "wyślij", not "wysyła"; Korean "보내 주세요", not "보낸다") and its object in one
sentence, in either order (Turkish, Japanese, Korean and Hindi put the verb last):

* exfiltration: a verb of sending and a place outside (an address, a URL, a host);
* secret reveal: a verb of showing and a secret (passwords, keys, tokens, environment variables);
* fetch and run: a verb of fetching and one of running;
* pre-approval: a verb of approving and "all" or "automatically";
* skipping confirmations: a verb of skipping and a check (confirmation, warning), or any command verb with "without
  asking me";
* authority transfer: a verb of obeying, instructions and where they come from (mails, messages, pages, documents).

A negation next to the verb ("nie wysyłaj", "stuur nooit", "जवाब मत दिखाओ", "đừng gửi") makes it no command.

Words are written as the language writes them; ``*`` stands for any ending (an object's case or number: "hasł*"
reads "hasło", "haseł" and "hasła"). :func:`compile_words` reads them through the screen's normaliser, so a word
matches the text as the screen reads it (no accents, case folded, ı as i).
"""

from __future__ import annotations

import re

from ...lookalikes import HOMOGLYPHS
from ..screening.normalise import normalise

# Roles: verbs (send, show, get, run, approve, skip, obey), objects (secret, check, instr, source, all, auto), and
# phrases that stand for themselves (noask: "without asking me"; neg and postneg: negations before and after a verb).
WORDS: dict[str, dict[str, str]] = {
    "pl": {
        "send": "wyślij|wysyłaj|wyślijcie|prześlij|przesyłaj|przekaż|przekazuj|wrzuć|wrzucaj|wgraj|wgrywaj|załaduj|"
        "ładuj|udostępnij|udostępniaj|opublikuj|publikuj|skopiuj|kopiuj",
        "show": "pokaż|pokazuj|wyświetl|wyświetlaj|wypisz|wypisuj|podaj|podawaj|ujawnij|ujawniaj|zdradź|wydrukuj|"
        "drukuj|dołącz|dołączaj|wklej|wklejaj|dodawaj|dodaj",
        "get": "pobierz|pobieraj|ściągnij|ściągaj",
        "run": "uruchom|uruchamiaj|wykonaj|wykonuj|odpal|odpalaj|zainstaluj|instaluj",
        "approve": "zatwierdź|zatwierdzaj|akceptuj|zaakceptuj|potwierdzaj|potwierdź|zezwalaj|zezwól|zgadzaj się|"
        "zgódź się",
        "skip": "pomiń|pomijaj|ignoruj|zignoruj|wyłącz|wyłączaj|omiń|omijaj",
        "obey": "wykonuj|wykonaj|słuchaj|posłuchaj|przestrzegaj|realizuj|stosuj się do|trzymaj się",
        "secret": "hasł*|haseł|hasel*|klucz*|token*|zmienn* środowisk*|dane logowania|poświadcze*|sekret*",
        "check": "potwierdze*|ostrzeże*|zabezpiecze*|weryfikacj*",
        "instr": "polece*|instrukc*|rozkaz*|wskazówk*",
        "source": "wiadomoś*|maili|mailach|e-maili|e-mailach|stron*|dokument*|załącznik*",
        "all": "wszystk*|każd*",
        "auto": "automatycznie|bez czytania|bez sprawdzania",
        "noask": "bez pytania*|bez pytania mnie|bez sprawdzania ze mną|bez potwierdze*|nie pytając*",
        "neg": "nie|nigdy",
    },
    "cs": {
        "send": "pošli|posílej|přepošli|přeposílej|nahraj|nahrávej|odešli|odesílej|zveřejni|sdílej",
        "show": "ukaž|ukazuj|zobraz|zobrazuj|vypiš|vypisuj|prozraď|vlož|vkládej|přidej|přidávej",
        "get": "stáhni|stahuj",
        "run": "spusť|spouštěj|proveď|prováděj|nainstaluj|instaluj",
        "approve": "schval|schvaluj|schvaluj|přijmi|přijímej|potvrď|potvrzuj|povol|povoluj",
        "skip": "přeskoč|přeskakuj|ignoruj|vypni|obejdi",
        "obey": "poslouchej|řiď se|dodržuj|plň|proveď|prováděj",
        "secret": "hesl*|klíč*|token*|proměnn* prostředí|přihlašovací údaje|tajemstv*",
        "check": "potvrzen*|varování|upozorněn*|kontrol*",
        "instr": "pokyn*|instrukc*|příkaz*",
        "source": "zpráv*|e-mail*|email*|stránk*|dokument*|přílo*",
        "all": "všechn*|všech*|každ*",
        "auto": "automaticky|bez čtení|bez kontroly",
        "noask": "bez ptaní|bez dotazu|aniž by ses zeptal*|bez potvrzení",
        "neg": "ne|nikdy",
    },
    "sk": {
        "send": "pošli|posielaj|prepošli|nahraj|nahrávaj|odošli|zverejni|zdieľaj",
        "show": "ukáž|ukazuj|zobraz|zobrazuj|vypíš|prezraď|vlož|pridaj",
        "get": "stiahni|sťahuj",
        "run": "spusti|spúšťaj|vykonaj|nainštaluj",
        "approve": "schváľ|schvaľuj|prijmi|prijímaj|potvrď|potvrdzuj|povoľ",
        "skip": "preskoč|preskakuj|ignoruj|vypni",
        "obey": "poslúchaj|riaď sa|dodržiavaj|plň",
        "secret": "hesl*|kľúč*|token*|premenn* prostredia|prihlasovacie údaje",
        "check": "potvrden*|varovan*|upozornen*|kontrol*",
        "instr": "pokyn*|inštrukci*|príkaz*",
        "source": "správ*|e-mail*|email*|stránk*|dokument*|prílo*",
        "all": "všetk*|každ*",
        "auto": "automaticky",
        "noask": "bez pýtania|bez opýtania|bez potvrdenia",
        "neg": "ne|nikdy",
    },
    "sl": {
        "send": "pošlji|pošiljaj|posreduj|naloži|objavi",
        "show": "pokaži|prikaži|prikazuj|izpiši|razkrij",
        "get": "prenesi",
        "run": "zaženi|izvedi|namesti",
        "approve": "odobri|odobravaj|sprejmi|potrdi|dovoli",
        "skip": "preskoči|ignoriraj|izklopi",
        "obey": "upoštevaj|ubogaj|sledi",
        "secret": "gesl*|ključ*|žeton*|spremenljivk* okolja",
        "check": "potrdi*|opozoril*",
        "instr": "navodil*|ukaz*",
        "source": "sporočil*|e-pošt*|spletn* stran*|dokument*",
        "all": "vs*",
        "auto": "samodejno",
        "noask": "brez spraševanja|brez vprašanja",
        "neg": "ne|nikoli",
    },
    "hr": {  # Croatian, Serbian and Bosnian in Latin letters
        "send": "pošalji|šalji|proslijedi|prosljeđuj|prenesi|učitaj|postavi|objavi|podijeli",
        "show": "pokaži|pokazuj|prikaži|prikazuj|ispiši|otkrij|dodaj|umetni",
        "get": "preuzmi|skini",
        "run": "pokreni|izvrši|izvršavaj|instaliraj",
        "approve": "odobri|odobravaj|prihvati|prihvaćaj|potvrdi|potvrđuj|dopusti",
        "skip": "preskoči|preskači|ignoriraj|zanemari|isključi",
        "obey": "slijedi|poslušaj|slušaj|izvršavaj|izvrši|poštuj",
        "secret": "lozink*|ključ*|token*|varijabl* okruženja|tajn*",
        "check": "potvrd*|upozoren*|provjer*",
        "instr": "uput*|naredb*|instrukcij*",
        "source": "poruk*|e-mail*|mail*|stranic*|dokument*|privit*",
        "all": "sv*|svak*",
        "auto": "automatski",
        "noask": "bez pitanja|bez potvrde",
        "neg": "ne|nikad|nikada",
    },
    "bg": {
        "send": "изпрати|изпращай|препрати|препращай|качи|качвай|публикувай|сподели|споделяй",
        "show": "покажи|показвай|изведи|извеждай|разкрий|отпечатай|добави|добавяй",
        "get": "изтегли|изтегляй|свали|сваляй",
        "run": "стартирай|изпълни|изпълнявай|пусни|инсталирай",
        "approve": "одобри|одобрявай|приеми|приемай|потвърди|потвърждавай|разреши|разрешавай",
        "skip": "пропусни|пропускай|игнорирай|изключи",
        "obey": "следвай|изпълнявай|изпълни|слушай|спазвай",
        "secret": "парол*|ключ*|токен*|променливи* на средата|тайн*",
        "check": "потвърждени*|предупреждени*|провер*",
        "instr": "инструкци*|указани*|команд*|нареждани*",
        "source": "писм*|имейл*|съобщени*|страниц*|документ*",
        "all": "всички|всеки|всяк*",
        "auto": "автоматично",
        "noask": "без да питаш|без да ме питаш|без потвърждение",
        "neg": "не|никога",
    },
    "ro": {
        "send": "trimite|trimiteți|redirecționează|încarcă|încărcați|publică|postează|distribuie|partajează",
        "show": "arată|afișează|afișați|dezvăluie|tipărește|listează|adaugă",
        "get": "descarcă|descărcați",
        "run": "rulează|execută|lansează|instalează",
        "approve": "aprobă|aprobați|acceptă|acceptați|confirmă|permite",
        "skip": "sari peste|ignoră|ignorați|dezactivează|ocolește",
        "obey": "urmează|ascultă|execută|respectă|îndeplinește",
        "secret": "parol*|chei*|cheia*|token*|variabil* de mediu|secret*",
        "check": "confirmăr*|confirmar*|avertisment*|verificăr*",
        "instr": "instrucțiun*|comenz*|ordin*",
        "source": "mesaj*|e-mail*|email*|pagin*|document*|atașament*",
        "all": "toate|toți|tot|fiecare",
        "auto": "automat",
        "noask": "fără să mă întrebi|fără să întrebi|fără confirmare",
        "neg": "nu|niciodată",
    },
    "hu": {
        "send": "küldd|küldd el|küldj|küldjed|továbbítsd|töltsd fel|tedd közzé|oszd meg",
        "show": "mutasd|mutasd meg|jelenítsd meg|írd ki|áruld el|fedd fel|nyomtasd ki|add hozzá",
        "get": "töltsd le",
        "run": "futtasd|futtasd le|indítsd el|hajtsd végre|telepítsd",
        "approve": "hagyd jóvá|hagyj jóvá|fogadd el|fogadj el|erősítsd meg|engedélyezd",
        "skip": "hagyd ki|ugord át|hagyd figyelmen kívül|kapcsold ki",
        "obey": "kövesd|teljesítsd|hajtsd végre|engedelmeskedj",
        "secret": "jelszav*|jelszó*|kulcs*|token*|környezeti változ*|titk*",
        "check": "megerősítés*|figyelmeztetés*|ellenőrzés*",
        "instr": "utasítás*|parancs*",
        "source": "üzenet*|e-mail*|email*|level*|oldal*|dokumentum*|csatolmány*",
        "all": "összes|minden|mindegyik",
        "auto": "automatikusan",
        "noask": "kérdezés nélkül|megkérdezés nélkül|megerősítés nélkül|anélkül hogy megkérdeznél",
        "neg": "ne|soha|sose",
    },
    "fi": {
        "send": "lähetä|lähettäkää|välitä|lataa palvelimelle|lataa ylös|julkaise|jaa",
        "show": "näytä|näyttäkää|tulosta|paljasta|kerro|listaa|lisää",
        "get": "lataa|hae|imuroi",
        "run": "suorita|aja|käynnistä|asenna",
        "approve": "hyväksy|hyväksykää|vahvista|salli",
        "skip": "ohita|sivuuta|jätä huomiotta|poista käytöstä",
        "obey": "noudata|tottele|seuraa|toteuta",
        "secret": "salasan*|avai*|tunnu*|token*|ympäristömuuttuj*|salaisuu*",
        "check": "vahvistu*|varoitu*|tarkistu*",
        "instr": "ohje*|käsky*|komen*",
        "source": "viest*|sähköpost*|sivu*|sivuj*|asiakirj*|liit*",
        "all": "kaikki|kaikkia|jokai*",
        "auto": "automaattisesti",
        "noask": "kysymättä|kysymättä minulta|ilman vahvistusta",
        "neg": "älä|älkää|ei",
    },
    "et": {
        "send": "saada|saatke|edasta|laadi üles|postita|jaga",
        "show": "näita|kuva|prindi|avalda",
        "get": "laadi alla|tõmba",
        "run": "käivita|käita|paigalda",
        "approve": "kinnita|kiida heaks|luba|aktsepteeri",
        "skip": "jäta vahele|ignoreeri|eira|lülita välja",
        "obey": "järgi|täida|kuula",
        "secret": "parool*|võtm*|võti|token*|keskkonnamuutuj*",
        "check": "kinnitus*|hoiatus*",
        "instr": "juhis*|käsk*",
        "source": "sõnum*|kiri*|e-kir*|lehe*|dokument*",
        "all": "kõik|iga",
        "auto": "automaatselt",
        "noask": "küsimata|ilma küsimata",
        "neg": "ära|ärge|mitte",
    },
    "lv": {
        "send": "sūti|nosūti|pārsūti|augšupielādē|publicē|kopīgo",
        "show": "parādi|rādi|izvadi|atklāj|izdrukā|pievieno",
        "get": "lejupielādē",
        "run": "palaid|izpildi|instalē",
        "approve": "apstiprini|apstiprināt|pieņem|atļauj",
        "skip": "izlaid|ignorē|atspējo",
        "obey": "seko|izpildi|ievēro|klausi",
        "secret": "parol*|atslēg*|marķier*|token*|vides mainīg*",
        "check": "apstiprinājum*|brīdinājum*",
        "instr": "norādījum*|instrukcij*|komand*",
        "source": "ziņ*|e-past*|lap*|dokument*",
        "all": "visas|visus|visi|katr*",
        "auto": "automātiski",
        "noask": "nejautājot|bez jautāšanas",
        "neg": "ne|nekad",
    },
    "lt": {
        "send": "siųsk|siųskite|persiųsk|nusiųsk|įkelk|paskelbk|dalinkis",
        "show": "parodyk|rodyk|išvesk|atskleisk|atspausdink|pridėk",
        "get": "atsisiųsk|parsisiųsk",
        "run": "paleisk|vykdyk|įvykdyk|įdiek",
        "approve": "patvirtink|tvirtink|priimk|leisk",
        "skip": "praleisk|ignoruok|išjunk",
        "obey": "vykdyk|laikykis|klausyk|sek",
        "secret": "slaptažod*|rakt*|žetoon*|token*|aplinkos kintam*",
        "check": "patvirtinim*|įspėjim*",
        "instr": "nurodym*|instrukcij*|komand*",
        "source": "žinut*|laišk*|el. laišk*|puslap*|dokument*",
        "all": "visus|visas|visi|kiekvien*",
        "auto": "automatiškai",
        "noask": "neklausdamas|neklausus|be patvirtinimo",
        "neg": "ne|niekada",
    },
    "sv": {
        "send": "skicka|vidarebefordra|ladda upp|publicera|dela",
        "show": "visa|skriv ut|avslöja|lägg till|inkludera",
        "get": "ladda ner|hämta",
        "run": "kör|exekvera|starta|installera",
        "approve": "godkänn|acceptera|bekräfta|tillåt",
        "skip": "hoppa över|hoppa|ignorera|stäng av|strunta i",
        "obey": "följ|lyd|utför",
        "secret": "lösenord*|nyckl*|nyckel*|token*|miljövariab*|hemlighet*",
        "check": "bekräftels*|varning*|kontroll*",
        "instr": "instruktion*|order|kommando*|anvisning*",
        "source": "meddeland*|mejl*|e-post*|mail*|sid*|webbsid*|dokument*|bilag*",
        "all": "alla|allt|varje",
        "auto": "automatiskt",
        "noask": "utan att fråga*|utan bekräftelse",
        "neg": "inte|aldrig|inga",
        "postneg": "inte|aldrig",
    },
    "da": {  # Danish and Norwegian
        "send": "videresend|last opp|publicer|publiser",
        "show": "vis|udskriv|skriv ut|afslør|avslør|tilføj|legg til",
        "get": "hent|last ned",
        "run": "kør|kjør|udfør|utfør|installer",
        "approve": "godkend|godkjenn|accepter|aksepter|bekræft|bekreft|tillad|tillat",
        "skip": "spring over|spring|hopp over|hopp|ignorer|slå fra|slå av",
        "obey": "følg|adlyd|udfør|utfør",
        "secret": "adgangskod*|passord*|kodeord*|nøgl*|nøkl*|token*|miljøvariab*|hemmelighed*",
        "check": "bekræftels*|bekreftels*|advarsl*|kontrol*",
        "instr": "instruks*|instruktion*|ordre*|kommando*",
        "source": "besked*|beskjed*|mail*|e-post*|sid*|dokument*|vedhæft*|vedlegg*",
        "all": "alle|alt|hver|hvert",
        "auto": "automatisk",
        "noask": "uden at spørge|uten å spørre|uden bekræftelse",
        "neg": "ikke|aldrig|aldri|ikkje",
        "postneg": "ikke|aldrig|aldri|ikkje",
    },
    "el": {
        "send": "στείλε|στέλνε|στείλτε|προώθησε|ανέβασε|ανεβάστε|δημοσίευσε|μοιράσου",
        "show": "δείξε|δείχνε|εμφάνισε|εμφανίστε|τύπωσε|αποκάλυψε|πρόσθεσε",
        "get": "κατέβασε|κατεβάστε",
        "run": "τρέξε|εκτέλεσε|εκτελέστε|εγκατέστησε",
        "approve": "ενέκρινε|εγκρίνετε|αποδέξου|επιβεβαίωσε|επίτρεψε",
        "skip": "παράλειψε|αγνόησε|απενεργοποίησε",
        "obey": "ακολούθησε|ακολούθα|υπάκουσε|εκτέλεσε",
        "secret": "κωδικός|κωδικό|κωδικοί|κωδικούς|κωδικ* πρόσβασης|συνθηματικ*|κλειδ*|token*|μεταβλητ* περιβάλλοντος|"
        "μυστικ*",
        "check": "επιβεβαιώσ*|προειδοποιήσ*|ελέγχ*",
        "instr": "οδηγί*|εντολ*",
        "source": "μηνύματ*|email*|μέιλ*|σελίδ*|έγγραφ*",
        "all": "όλ*|κάθε",
        "auto": "αυτόματα",
        "noask": "χωρίς να ρωτήσεις|χωρίς επιβεβαίωση",
        "neg": "μην|μη|ποτέ|δεν",
    },
    "tr": {
        "send": "gönder|gönderin|yolla|yollayın|ilet|iletin|yükle|yükleyin|paylaş|paylaşın",
        "show": "göster|gösterin|yazdır|yazdırın|yaz|açıkla|listele|ekle|paylaş",
        "get": "indir|indirin",
        "run": "çalıştır|çalıştırın|yürüt|kur|başlat",
        "approve": "onayla|onaylayın|kabul et|kabul edin|izin ver",
        "skip": "atla|geç|yok say|görmezden gel|kapat|devre dışı bırak",
        "obey": "uy|uyun|uygula|uygulayın|itaat et|takip et|yerine getir",
        "secret": "şifre*|parola*|anahtar*|token*|ortam değişken*|gizli*",
        "check": "onay*|uyarı*|doğrulama*|kontrol*",
        "instr": "talimat*|komut*|emir*|emr*|yönerge*",
        "source": "e-posta*|eposta*|mail*|mesaj*|sayfa*|belge*|ekler*|ekte*",
        "all": "tüm|tümünü|bütün",
        "auto": "otomatik*|okumadan|kontrol etmeden",
        "noask": "sormadan|onay sormadan|bana sormadan|onay almadan",
        "neg": "asla|hiçbir zaman",
    },
    "uk": {
        "send": "надішли|надсилай|надсилайте|відправ|відправляй|відправте|перешли|пересилай|завантаж на|"
        "вивантаж|опублікуй|поділись",
        "show": "покажи|показуй|покажіть|виведи|виводь|розкрий|надрукуй|додай|додавай|вставляй",
        "get": "завантаж|завантажуй|скачай",
        "run": "запусти|запускай|виконай|виконуй|встанови",
        "approve": "схвали|схвалюй|прийми|приймай|підтверди|підтверджуй|дозволь|дозволяй",
        "skip": "пропусти|пропускай|ігноруй|вимкни",
        "obey": "виконуй|виконай|слухай|дотримуйся|слідуй",
        "secret": "парол*|ключ*|токен*|змінн* середовища|секрет*",
        "check": "підтвердж*|попереджен*|перевірк*",
        "instr": "вказівк*|інструкці*|команд*|наказ*",
        "source": "лист*|повідомлен*|пошт*|сторінк*|документ*",
        "all": "всі|усі|все|кожн*",
        "auto": "автоматично",
        "noask": "не питаючи|без підтвердження|без запиту",
        "neg": "не|ніколи",
    },
    "ru": {
        "send": "загружай|загрузи|залей|заливай",
        "show": "показывай|покажи",
        "get": "скачай|скачивай|загрузи",
        "run": "запусти|запускай|выполни|выполняй|установи",
        "approve": "одобряй|одобри|подтверждай|подтверди|принимай|разрешай",
        "skip": "пропускай|пропусти|игнорируй|отключи",
        "obey": "выполняй|выполни|слушайся|следуй|подчиняйся",
        "secret": "парол*|ключ*|токен*|переменн* окружения|секрет*",
        "check": "подтвержден*|предупрежден*|проверк*",
        "instr": "указани*|инструкци*|команд*|приказ*",
        "source": "пис*|сообщени*|почт*|страниц*|документ*",
        "all": "все|всё|каждый|любые",
        "auto": "автоматически",
        "noask": "не спрашивая|без спроса|без подтверждения",
        "neg": "не|никогда",
    },
    "nl": {
        "send": "stuur|verstuur|zend|deel|publiceer",
        "show": "toon|laat zien|geef|onthul|voeg toe",
        "get": "haal",
        "run": "voer uit|voer het uit|voer ze uit|draai|installeer",
        "approve": "keur goed|goedkeuren|accepteer|bevestig|sta toe",
        "skip": "sla over|sla|negeer|schakel uit",
        "obey": "volg|volg op|gehoorzaam|voer uit",
        "secret": "wachtwoord*|sleutel*|token*|omgevingsvariabel*|geheim*",
        "check": "bevestiging*|waarschuwing*|controle*",
        "instr": "instructie*|opdracht*|bevel*",
        "source": "e-mail*|mail*|bericht*|pagina*|website*|document*|bijlage*",
        "all": "alle|alles|elk|elke|ieder",
        "auto": "automatisch|zonder ze te lezen|zonder te lezen|zonder te controleren",
        "noask": "zonder te vragen|zonder het te vragen|zonder bevestiging",
        "neg": "niet|nooit|geen",
        "postneg": "niet|nooit",
    },
    "ja": {
        "send": "送って|送信して|転送して|アップロードして|投稿して|共有して|送れ|送信しろ",
        "show": "表示して|見せて|教えて|出力して|印刷して|書いて|貼り付けて",
        "get": "ダウンロードして|ダウンロードし|取得して",
        "run": "実行して|実行し|起動して|インストールして",
        "approve": "承認して|許可して|同意して|承認し",
        "skip": "スキップして|無視して|省略して",
        "obey": "従って|従え|実行して",
        "secret": "パスワード|キー|鍵|トークン|環境変数|認証情報|シークレット",
        "check": "確認|警告|チェック",
        "instr": "指示|命令|指図",
        "source": "メール|メッセージ|ページ|文書|ドキュメント|添付",
        "all": "すべて|全て|全部|あらゆる",
        "auto": "自動的に|自動で",
        "noask": "確認なしで|確認せずに|聞かずに|尋ねずに",
        "postneg": "ないで|ません|るな",
    },
    "ko": {
        "send": "보내 주세요|보내주세요|보내세요|보내 줘|보내줘|보내라|보내|전송해|전송하세요|전달해|전달하세요|"
        "업로드해|업로드하세요|올려 주세요|올려주세요|올려",
        "show": "보여 주세요|보여주세요|보여 줘|보여줘|표시해|표시하세요|출력해|출력하세요|알려 주세요|알려줘",
        "get": "다운로드해|다운로드하고|다운로드한|받아서|내려받아",
        "run": "실행해|실행하세요|실행하고|실행해라|설치해|설치하세요",
        "approve": "승인해|승인하세요|허용해|허용하세요|수락해|수락하세요|동의해",
        "skip": "건너뛰|무시해|무시하세요|생략해",
        "obey": "따르세요|따라 주세요|따라|따라라",
        "secret": "비밀번호|암호|키|토큰|환경 변수|환경변수|자격 증명",
        "check": "확인|경고|승인 요청",
        "instr": "지시|명령|지침",
        "source": "이메일|메일|메시지|페이지|문서|첨부",
        "all": "모든|모두|전부",
        "auto": "자동으로",
        "noask": "확인 없이|묻지 말고|묻지 않고|물어보지 말고",
        "postneg": "지 마|지 말",
    },
    "*": {  # what a fetched program is called, in every language above
        "code": "script*|skrypt*|skript*|szkript*|betiğ*|betik*|скрипт*|σενάρι*|スクリプト|스크립트|skrip*|tập lệnh|"
        "سكريبت|سكربت|स्क्रिप्ट|installer*|instalator*|instalátor*|asennusohjelm*|инсталатор*|установщик*|інсталятор*",
    },
    "zh": {
        "approve": "点同意|点允许|点确认|点击同意|点击允许",
        "obey": "照着做|照做|照办|遵照|听从|服从",
        "auto": "一律|自动|统统",
        "instr": "指示|指令|命令|要求",
        "source": "邮件|消息|网页|页面|文档|附件",
    },
    "ar": {
        "send": "أرسل|ارسل|أرسلي|ابعث|حوّل|أعد توجيه|ارفع|انشر|شارك",
        "show": "اعرض|أعرض|أظهر|اظهر|اطبع|اكشف|أضف|اكتب",
        "get": "نزّل|نزل|حمّل|حمل",
        "run": "شغّل|شغل|نفّذ|نفذ|ثبّت|ثبت",
        "approve": "وافق|اقبل|أكّد|أكد|اسمح",
        "skip": "تخطّ|تخط|تجاهل|عطّل|عطل",
        "obey": "نفّذ|نفذ|اتبع|أطع|اطع",
        "secret": "كلمات المرور|كلمة المرور|كلمة السر|مفاتيح|مفتاح|رموز|متغيرات البيئة|أسرار",
        "check": "تأكيد|تحذير|تحذيرات|تنبيهات",
        "instr": "الأوامر|أوامر|تعليمات|التعليمات",
        "source": "رسائل|بريد|البريد|صفحات|مستندات|مرفقات",
        "all": "جميع|كل",
        "auto": "تلقائيا|تلقائيًا|آليا",
        "noask": "دون أن تسألني|بدون أن تسألني|دون سؤالي|بدون تأكيد|دون تأكيد",
        "neg": "لا|أبدا",
    },
    "hi": {
        "send": "भेजो|भेज दो|भेजें|भेजिए|भेज देना|फॉरवर्ड करो|अपलोड करो|अपलोड करें|पोस्ट करो|शेयर करो",
        "show": "दिखाओ|दिखाएं|दिखाइए|दिखा दो|बताओ|बताइए|प्रिंट करो|लिखो",
        "get": "डाउनलोड करो|डाउनलोड करके|डाउनलोड कर",
        "run": "चलाओ|चला दो|रन करो|इंस्टॉल करो|एक्ज़िक्यूट करो",
        "approve": "स्वीकार करो|स्वीकार करें|मंज़ूर करो|मंजूर करो|अनुमति दो|अप्रूव करो",
        "skip": "छोड़ दो|अनदेखा करो|नज़रअंदाज़ करो|बंद करो",
        "obey": "मानो|पालन करो|का पालन करें|फॉलो करो",
        "secret": "पासवर्ड|कुंजी|कुंजियाँ|टोकन|एपीआई कुंजी|एनवायरनमेंट वेरिएबल|पर्यावरण चर",
        "check": "पुष्टि|चेतावनी|चेतावनियाँ",
        "instr": "निर्देश|आदेश|हुक्म",
        "source": "ईमेल|मेल|संदेश|पेज|दस्तावेज़",
        "all": "सभी|सब|हर",
        "auto": "अपने आप|स्वचालित रूप से",
        "noask": "बिना पूछे|बिना पुष्टि के|मुझसे पूछे बिना",
        "neg": "मत|न|नहीं|कभी",
        "postneg": "मत|नहीं",
    },
    "id": {  # Indonesian and Malay
        "send": "kirim|kirimkan|kirimlah|teruskan|unggah|unggahlah|bagikan|hantar",
        "show": "tampilkan|tunjukkan|perlihatkan|cetak|ungkapkan|sebutkan|tambahkan|sertakan",
        "get": "unduh|ambil",
        "run": "jalankan|eksekusi|pasang|instal",
        "approve": "setujui|terima|konfirmasi|izinkan|luluskan",
        "skip": "lewati|abaikan|matikan|nonaktifkan",
        "obey": "ikuti|patuhi|turuti|laksanakan|jalankan",
        "secret": "kata sandi|kata laluan|sandi|kunci|token|variabel lingkungan|rahasia",
        "check": "konfirmasi|peringatan|verifikasi",
        "instr": "instruksi|perintah|arahan",
        "source": "email|surel|pesan|halaman|dokumen|lampiran",
        "all": "semua|setiap|seluruh",
        "auto": "secara otomatis|otomatis",
        "noask": "tanpa bertanya|tanpa menanyakan|tanpa konfirmasi|tanpa izin saya",
        "neg": "jangan|tidak|tak|jgn",
    },
    "vi": {
        "send": "gửi|chuyển tiếp|tải lên|chia sẻ",
        "show": "hiển thị|hiện|cho xem|tiết lộ|liệt kê",
        "get": "tải xuống|tải về",
        "run": "chạy|thực thi|thực hiện|cài đặt",
        "approve": "chấp nhận|phê duyệt|duyệt|đồng ý|cho phép|xác nhận",
        "skip": "bỏ qua|tắt|phớt lờ",
        "obey": "làm theo|tuân theo|nghe theo|thực hiện",
        "secret": "mật khẩu|khóa|khoá|token|biến môi trường|bí mật",
        "check": "xác nhận|cảnh báo|kiểm tra",
        "instr": "chỉ dẫn|hướng dẫn|chỉ thị|lệnh|yêu cầu",
        "source": "email|thư|tin nhắn|trang|tài liệu|tệp đính kèm",
        "all": "tất cả|mọi|mỗi",
        "auto": "tự động",
        "noask": "mà không hỏi|không hỏi tôi|không cần hỏi|không xác nhận",
        "neg": "đừng|không|chớ",
    },
}

ROLES = (
    "send",
    "show",
    "get",
    "run",
    "approve",
    "skip",
    "obey",
    "secret",
    "check",
    "instr",
    "source",
    "all",
    "auto",
    "noask",
    "code",
)

# A letter of a word, Devanagari's vowel signs included (Python's \w does not hold them), not its full stops (danda).
WORD_CHAR = r"[\w\u0900-\u0963\u0966-\u097f]"
# The languages that put the verb after its object: only there does an act read backwards.
VERB_LAST = ("tr", "ja", "ko", "hi")
# Kana, CJK and Hangul (as syllables, and as the jamo the normaliser decomposes them to): no word boundaries.
SPACELESS = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]")
# Greek sigma is a letter that ignore-case matching equates with another: a literal holding it cannot be prefiltered
# (:mod:`metaclaw_plugin.regexlits`), so both the words and the sentence read it as "s".
SIGMA = str.maketrans({"σ": "s", "ς": "s"})


_END = ""  # a trie's mark: a word ends here


def _tokens(word: str) -> list[str]:
    """A word as the screen reads it, as pattern pieces: ``*`` any ending, a space any run of them."""
    out: list[str] = []
    for i, part in enumerate(word.split("*")):
        if i:
            out.append(rf"{WORD_CHAR}*")
        for j, piece in enumerate(part.split(" ")):
            if j:
                out.append(r"\s+")
            out.extend(re.escape(ch) for ch in normalise(piece).translate(SIGMA))
    return out


def _trie_pattern(words: list[list[str]]) -> str:
    """One pattern for many words, factored by their shared starts (a regex tries an alternation's branches one by
    one at every position; a trie's first character rules out nearly all of them at once)."""
    trie: dict[str, dict] = {}
    for toks in words:
        node = trie
        for t in toks:
            node = node.setdefault(t, {})
        node[_END] = {}

    def emit(node: dict[str, dict]) -> str:
        ends = _END in node
        branches = [t + emit(child) for t, child in sorted(node.items()) if t != _END]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and not ends else "(?:" + "|".join(branches) + ")"
        return body + "?" if ends else body

    return emit(trie)


def key_words(*roles: str) -> frozenset[str]:
    """One word of every word or phrase for ``roles`` in the scripts with spaces (a phrase's longest, the rarest), as
    the screen reads it: a sentence none of whose words is one of these holds none of them (a set lookup per word,
    where a pattern of hundreds of words costs a try at every character)."""
    out: set[str] = set()
    for lex in WORDS.values():
        for role in roles:
            for w in lex.get(role, "").split("|"):
                if w.strip() and not SPACELESS.search(w):
                    key = max(normalise(w).translate(SIGMA).split(" "), key=len)
                    out |= {key, key.translate(HOMOGLYPHS)}
    return frozenset(out)


def compile_words(*roles: str, langs: tuple[str, ...] | None = None) -> str:
    """The words for ``roles`` of ``langs`` (every language by default), as one pattern bounded by word edges (none
    in scripts without spaces); Cyrillic and Greek words also as the look-alike folding leaves them in a mostly Latin
    text."""
    words = {
        w.strip()
        for lang, lex in WORDS.items()
        if langs is None or lang in langs
        for role in roles
        for w in lex.get(role, "").split("|")
        if w.strip()
    }
    spaced: list[list[str]] = []
    spaceless: list[list[str]] = []
    for w in words:
        for variant in {w, normalise(w).translate(HOMOGLYPHS)}:
            (spaceless if SPACELESS.search(variant) else spaced).append(_tokens(variant))
    alts = []
    if spaced:
        alts.append(rf"(?<!{WORD_CHAR}){_trie_pattern(spaced)}(?!{WORD_CHAR})")
    if spaceless:
        alts.append(_trie_pattern(spaceless))
    return "(?:" + "|".join(alts) + ")"
