"""A seeded generator of long multi-session conversations in LoCoMo's JSON layout, with questions by category.

Each sample is two people chatting over weeks: sessions a few days apart, each with a date and time, a few dozen
turns each, both narrating their life and work in the first person ("I went hiking at Eagle Ridge yesterday", "my
sister Lena just adopted a beagle"), with plans, changes of mind, small talk and distractors (hypotheticals, other
people's news, near-miss vocabulary). Questions come with their evidence turn ids, in LoCoMo's categories:

- 4 single-hop: one turn holds the answer ("What breed is Lena's dog?");
- 1 multi-hop: two turns of different sessions ("Which city is Ana flying to?": she is flying out to see her
  brother in one session, he moved to Denver in an earlier one; or the two hobbies she took up);
- 2 temporal: the answer is a date resolved from a relative expression against the session's date ("yesterday" in
  a session of 8 May 2023 is "7 May 2023"; "last week" is "the week before 8 May 2023");
- 3 open-domain / inference: the question does not use the turn's words ("What should a host leave out when cooking
  for Ana?": "I can't eat dairy at all");
- 5 adversarial: plausible questions about things never said (the other speaker's fact asked of this one, a pet or a
  trip never mentioned, a wish stated as something done); they carry ``adversarial_answer`` (a tempting wrong
  answer) and no ``answer``, and no evidence.

Layout (LoCoMo's, so that the same runner reads the public file): a list of samples, each
``{"sample_id", "conversation": {"speaker_a", "speaker_b", "session_N_date_time", "session_N": [{"speaker",
"dia_id", "text"}]}, "qa": [{"question", "answer" | "adversarial_answer", "evidence": ["D1:3"], "category"}]}``.
Dialogue ids are ``D<session>:<turn>``, 1-based. Every answer of an answerable question is stated in its evidence
turns (a temporal one resolves from the turn's relative date and its session's date); the tests check it.

Deterministic: the same seed gives the same samples (string seeds; no hash randomisation reaches the output).
Templates, names and vocabulary are drawn from wide pools so that no small set of phrasings carries the set.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from metaclaw_plugin.memory.dates import MONTHS, WEEKDAYS

MULTI_HOP, TEMPORAL, OPEN_DOMAIN, SINGLE_HOP, ADVERSARIAL = 1, 2, 3, 4, 5
CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _list(text: str) -> list[str]:
    """A vocabulary pool written as text: "|"-separated when it has a "|" (entries of several words), else words."""
    if "|" in text:
        return [x.strip() for x in text.replace("\n", "").split("|") if x.strip()]
    return text.split()


# Vocabulary ---------------------------------------------------------------------------------------------------------
FIRST_NAMES = _list(
    """
Caroline Melanie Priya Tomasz Aiko Mateo Nia Oluwaseun Ingrid Rafael Mei Dmitri Fatima Jonah Leilani Santiago Yara
Kwame Siobhan Arjun Hana Felix Amara Bruno Chiara Diego Elif Farah Gideon Hugo Imani Jasper Keiko Lars Maya Nadia
Omar Paloma Quentin Rosa Soren Tariq Uma Viktor Wren Ximena Yusuf Zara Abebe Beatriz Callum Daria Emeka Freya Gustavo
Halima Ines Joaquin Kaito Lucia Malik Noor Oskar Petra Rania Sven Thandiwe Ulrich Valentina Wanjiru Xavier Yoshiko
Zeynep Anouk Bilal Camille Dev Esme Finn Giulia Hamid Isla Jun Kalani Leon Mirela Nikhil Olga Pedro Qiu Rhea Stellan
Tamsin Ugo Vera Wade Yasmin Zoltan Adaeze Benedikt Cleo Dante Elena Faisal Greta Hiro Ilse Jorge Kasia Luca Marisol
Nkechi Orla Pilar Ruben Sana Teodor Ursula Vikram Willa Yael Zain Aurelio Bianca Cyrus Dilnoza Eitan Fiona Gael Hollis
Ivana Jiho Kofi Linnea Mads Nayeli Otto Perpetua Rashid Sigrid Tobias Una Vasco Wiremu Xiu Yannick Zuri Alba Bodhi
Carmen Darius Ebba Femi Gwen Hector Ilaria Jovan Kiri Lorenzo Mina Nils Odette Pavel Rosalind Saoirse Tuan Ulla
Vivek Wilhelmina Yara Zofia Arash Brigid Cosmo Delphine Eero Flora Gaspard Hollie Idris Juniper Kenji Laila Moritz
Nomvula Ottilie Priyanka Reza Solveig Thiago Uriel Verity Wei Yuki Zander Aoife Boris Cecile Dov Emilia Fabian Georgia
"""
)
SURNAMES = _list(
    """
Whitlock Okafor Lindqvist Moreau Castellanos Nakamura Brennan Haddad Kowalski Ferreira Abernathy Valdez Sorensen
Achebe Delacroix Halvorsen Marchetti Quiroga Tanaka Blackwood Oyelaran Petrakis Fairbanks Ishikawa Lachance Mbeki
Osei Rutherford Szabo Thornbury Underwood Vasquez Winslow Yamamoto Zielinski Ashworth Bellamy Carraway Drummond
Ellery Fitzroy Galloway Hartigan Ingram Jessop Kingsley Langford Merriweather Northcott Pemberton Quill Radcliffe
Sutherland Templeton Upton Vance Whitfield Yardley Ainsley Barlow Corbin Dempsey Everett Forsythe Granger Huxley
"""
)
ADJ = _list(
    """
Silver Golden Cedar Maple Willow Harbor Copper Misty Sunny Lone Red Blue Green Hidden Old North South East West
Crystal Iron Stone Pine Oak Bright Quiet Wild Little Grand Royal Rusty Velvet Lucky Amber Frost Hollow Summit River
Meadow Falcon Juniper Coral Indigo Saffron
"""
)
PLACE_NOUN = _list(
    "Ridge Creek Falls Hollow Canyon Peak Point Bluff Meadow Grove Pass Springs Valley Cove Hill Woods Basin Mesa"
)
PLURAL_NOUN = _list(
    """
Foxes Satellites Lanterns Echoes Wolves Pilots Tides Comets Ghosts Ravens Otters Owls Sparrows Strangers Rivers
Mirrors Orchids Engines Giants Pines Bandits Sailors Hornets Moths Marbles
"""
)
CITIES = _list(
    """
Denver|Austin|Seattle|Portland|Chicago|Boston|Atlanta|Nashville|Minneapolis|Pittsburgh|Phoenix|San Diego|Sacramento|
Toronto|Vancouver|Montreal|Halifax|Mexico City|Oaxaca|Bogota|Lima|Santiago|Buenos Aires|Sao Paulo|Lisbon|Porto|
Madrid|Seville|Barcelona|Valencia|Marseille|Lyon|Paris|Brussels|Amsterdam|Rotterdam|Hamburg|Berlin|Munich|Leipzig|
Copenhagen|Oslo|Bergen|Stockholm|Helsinki|Tallinn|Riga|Warsaw|Krakow|Prague|Vienna|Budapest|Ljubljana|Zagreb|
Athens|Istanbul|Izmir|Tbilisi|Cairo|Marrakesh|Lagos|Accra|Nairobi|Kigali|Cape Town|Durban|Dubai|Muscat|Mumbai|Pune|
Bangalore|Kochi|Colombo|Kathmandu|Bangkok|Chiang Mai|Hanoi|Da Nang|Singapore|Kuala Lumpur|Jakarta|Manila|Taipei|
Seoul|Busan|Osaka|Kyoto|Sapporo|Melbourne|Brisbane|Perth|Auckland|Wellington|Edinburgh|Glasgow|Dublin|Cork|Bristol|
Leeds|Manchester|Reykjavik
"""
)
JOBS = _list(
    """
nurse|software engineer|high school chemistry teacher|paramedic|graphic designer|accountant|electrician|pastry chef|
veterinarian|physical therapist|architect|social worker|journalist|data analyst|pharmacist|dental hygienist|
UX researcher|firefighter|librarian|carpenter|flight attendant|marine biologist|translator|barista|
landscape architect|speech therapist|real estate agent|wedding photographer|civil engineer|museum curator|
school counselor|car mechanic|dietitian|paralegal|sound engineer|occupational therapist|park ranger|tattoo artist|
urban planner|lab technician|event planner|bookkeeper|copywriter|midwife|structural engineer|florist|
personal trainer|game developer|radiologist|product manager|commercial pilot|line cook|tax advisor|
kindergarten teacher|court reporter|botanist|welder|optometrist|land surveyor|hotel manager|pediatrician|
video editor|zookeeper|bike mechanic|dentist|sign language interpreter|HR manager|plumber|baker|sommelier|
yoga instructor|police dispatcher|machinist|art therapist|respiratory therapist|wildlife photographer
"""
)
ORG_A = _list(
    """
Northwind Bluefin Brightwell Kestrel Ironbark Clearwater Redwood Lumen Harborview Silverline Tidewater Greenfield
Oakridge Meridian Cobalt Summit Pinecrest Riverside Foxglove Highland Starling Evergreen Lighthouse Westbrook
"""
)
ORG_B = _list(
    """
Analytics|Logistics|Hospital|Medical Center|Elementary|High School|Design Studio|Architects|Bakery|Dental|Labs|
Insurance|Credit Union|Public Library|Veterinary Clinic|Engineering|Media|Robotics|Pharmacy|Hotel|Fitness|Games|
Builders|Community College|Animal Hospital|Books|Energy
"""
)
RELATIONS_FAMILY = [
    "sister",
    "brother",
    "cousin",
    "mom",
    "dad",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "partner",
    "stepbrother",
    "sister-in-law",
    "brother-in-law",
    "niece",
    "nephew",
    "godmother",
    "roommate",
    "best friend",
]
FAMILY_STRICT = [r for r in RELATIONS_FAMILY if r not in ("roommate", "best friend", "partner")]
RELATIONS_LOOSE = ["friend", "coworker", "neighbor", "teammate", "old classmate", "friend from work", "buddy"]
DOG_BREEDS = _list(
    """
beagle|golden retriever|border collie|dachshund|corgi|greyhound|labradoodle|pug|husky|boxer|shiba inu|whippet|
Bernese mountain dog|cocker spaniel|Australian shepherd|basset hound|French bulldog|Great Dane|poodle|schnauzer|
Dalmatian|Jack Russell terrier|vizsla|Newfoundland|Chihuahua|Saint Bernard|Akita|Weimaraner
"""
)
CAT_BREEDS = _list("Maine Coon|Siamese|ragdoll|Bengal|Sphynx|Persian|British shorthair|Abyssinian|Scottish fold|tabby")
OTHER_PETS = {
    "rabbit": ["lop rabbit", "Netherland dwarf rabbit", "Rex rabbit", "lionhead rabbit"],
    "parrot": ["African grey", "cockatiel", "budgie", "sun conure"],
    "lizard": ["bearded dragon", "leopard gecko", "crested gecko", "blue-tongued skink"],
    "fish": ["betta", "goldfish", "axolotl", "neon tetras"],
}
PET_NAMES = _list(
    """
Biscuit Pip Luna Max Milo Olive Waffles Pepper Juniper Mochi Bean Clementine Ziggy Nacho Pickles Hazel Otis Maple
Tofu Noodle Bruno Ginger Pesto Koda Lemon Basil Roo Dumpling Sprout Fig Cinder Marble Comet Peanut Rocket Sushi Taco
Button Wally Ember Nori Crumpet Sox Quincy Tuna
"""
)
CUISINES = _list(
    """
Ethiopian|Peruvian|Georgian|Sichuan|Oaxacan|Lebanese|Korean barbecue|Neapolitan pizza|Vietnamese|Filipino|
Portuguese|Sri Lankan|Basque|Uyghur|Jamaican|Nepalese|Turkish|Malaysian|Cajun|Persian|Burmese|Brazilian|Moroccan|
Afghan|Hawaiian poke|ramen|dim sum|tapas
"""
)
DISHES = _list(
    """
lemon tart|banana bread|tiramisu|carrot cake|apple pie|chocolate souffle|pavlova|baklava|cinnamon rolls|
key lime pie|focaccia|empanadas|pierogi|pork dumplings|vegetable lasagna|seafood paella|shakshuka|chicken biryani|
tamales|sourdough|peach cobbler|matcha cheesecake|jollof rice|pad thai|mushroom risotto|lamb tagine|pumpkin pie|
churros|gingerbread cookies|red velvet cupcakes
"""
)
ITEMS = _list(
    """
a record player|a standing desk|a kayak|an espresso machine|a mountain bike|a telescope|a sewing machine|
a 3D printer|a drone|a mechanical keyboard|a vintage film camera|a hammock|a rowing machine|an air fryer|
a bread maker|a projector|an electric scooter|a pottery wheel|a ukulele|a paddleboard|a label maker|a rice cooker|
a weighted blanket|a tent|a metal detector|a sourdough starter kit|a drawing tablet|a pizza oven
"""
)
COLOURS = _list(
    """
sage green|navy blue|terracotta|mustard yellow|lavender|charcoal grey|burnt orange|teal|blush pink|off-white|
forest green|coral|midnight blue|olive|butter yellow|dusty rose
"""
)
ROOMS = ["kitchen", "bedroom", "living room", "bathroom", "home office", "hallway", "nursery", "garage", "porch"]
FISH = ["trout", "bass", "perch", "catfish", "pike", "salmon", "walleye", "carp", "bluegill", "mackerel"]
COURSES = _list(
    """
first aid|data science|sign language|photography|wine tasting|coding bootcamp|bookkeeping|pastry|
wilderness survival|beekeeping|improv|creative writing|astronomy|woodturning|CPR|welding|furniture restoration|
public speaking|digital illustration|Italian cooking
"""
)
EXAMS = _list(
    """
driving test|CPA exam|bar exam|nursing boards|real estate licence exam|scuba certification|motorcycle licence test|
PMP exam|citizenship test|private pilot written exam|sommelier exam|black belt grading|lifeguard certification
"""
)
TOPICS = _list(
    """
climate adaptation|supply chains|early childhood literacy|urban beekeeping|open source funding|accessible design|
sleep research|coral reef restoration|rural broadband|museum education|food waste|volunteer management|
bridge inspections|medieval textiles|soil health|esports coaching|remote teams|water rights
"""
)
PLAYS = _list(
    """
Hamlet|Our Town|Les Miserables|The Crucible|A Doll's House|Death of a Salesman|Into the Woods|Fiddler on the Roof|
Macbeth|The Glass Menagerie|Cabaret|Twelfth Night|Hadestown|The Seagull|Rent|Waiting for Godot
"""
)
ZOO_ANIMALS = _list(
    """
red pandas|giraffes|penguins|sea lions|snow leopards|a komodo dragon|an okapi|meerkats|flamingos|a tapir|
orangutans|a baby rhino|otters|lemurs
"""
)
PRODUCE = _list(
    """
heirloom tomatoes|peaches|honeycrisp apples|rhubarb|fresh figs|sweet corn|blueberries|purple carrots|
morel mushrooms|cherries|squash blossoms|plums|ramps|pea shoots
"""
)
PLANTS = _list(
    "tomatoes|basil|sunflowers|lavender|tulips|jalapenos|zucchini|strawberries|hydrangeas|roses|kale|dahlias"
)
SONGS = _list(
    """
Dancing Queen|Bohemian Rhapsody|Valerie|Total Eclipse of the Heart|I Will Survive|Mr. Brightside|Wonderwall|Jolene|
September|Don't Stop Believin'|Landslide|Hey Ya|Africa|Killing Me Softly|Rolling in the Deep|Take On Me
"""
)
INSTRUMENTS = _list(
    """
cello|violin|banjo|saxophone|drums|piano|bass guitar|trumpet|harp|mandolin|accordion|flute|clarinet|ukulele|
steel drum|electric guitar
"""
)
HOBBIES = _list(
    """
rock climbing|bouldering|birdwatching|pottery|knitting|woodworking|salsa dancing|fencing|archery|calligraphy|
sourdough baking|trail running|kayaking|chess|beekeeping|watercolor painting|skateboarding|fly fishing|juggling|
origami|roller skating|embroidery|geocaching|tai chi|stand-up paddleboarding|swing dancing|mountain biking|
crossword construction|bonsai|candle making
"""
)
SPORTS = _list(
    "volleyball|pickleball|ultimate frisbee|soccer|water polo|badminton|softball|rugby|netball|tennis|squash|curling"
)
LANGUAGES = _list(
    """
Portuguese|Japanese|Korean|Italian|Greek|Tagalog|Swahili|Polish|Turkish|Hindi|Vietnamese|Arabic|Dutch|Yoruba|
Cantonese|Hungarian|Welsh|Amharic
"""
)
CARS = _list(
    """
Honda Civic|Subaru Outback|Toyota RAV4|Mazda 3|Tesla Model 3|Kia Niro|Ford Maverick|Volkswagen Golf|
Hyundai Ioniq 5|Volvo XC40|Toyota Prius|Jeep Wrangler|Mini Cooper|Nissan Leaf|Chevy Bolt|Ford Bronco
"""
)
SHOWS = _list(
    """
Severance|The Bear|Slow Horses|Ted Lasso|Dark|Succession|Abbott Elementary|Shogun|The Great British Bake Off|
Only Murders in the Building|Reservation Dogs|Fleabag|Derry Girls|Mythic Quest|Poker Face|Blue Eyes Samurai
"""
)
AUTHORS = _list(
    """
Ursula K. Le Guin|Octavia Butler|Haruki Murakami|Tana French|Kazuo Ishiguro|N.K. Jemisin|Sally Rooney|
Terry Pratchett|Chimamanda Ngozi Adichie|Agatha Christie|Elena Ferrante|Brandon Sanderson|Toni Morrison|
Ann Patchett|Colson Whitehead|Becky Chambers
"""
)
BOOKS = _list(
    """
The Left Hand of Darkness|Kindred|Piranesi|The Remains of the Day|A Gentleman in Moscow|Circe|Project Hail Mary|
The Overstory|Pachinko|Station Eleven|The Name of the Wind|Middlemarch|Tomorrow, and Tomorrow, and Tomorrow|
The Secret History|Beloved|Klara and the Sun|Braiding Sweetgrass|The Goldfinch
"""
)
THINGS_COLLECTED = _list(
    """
vintage postcards|vinyl records|enamel pins|fountain pens|old maps|snow globes|mechanical watches|houseplants|
board games|cast iron pans|rare coins|vintage cameras|tea tins|comic books|seashells|matchbook covers
"""
)
SUBJECTS = _list(
    """
nursing|marine biology|computer science|art history|mechanical engineering|social work|linguistics|
veterinary medicine|architecture|public health|music therapy|environmental science|accounting|philosophy
"""
)
DIETS = ["dairy", "gluten", "peanuts", "shellfish", "eggs", "soy", "tree nuts", "sesame"]
FEARS = [
    ("heights", ["a rooftop bar", "a glass-floored observation deck", "a ferris wheel ride"]),
    ("flying", ["a long-haul trip abroad", "a weekend getaway by plane"]),
    ("deep water", ["a snorkeling trip", "a boat tour"]),
    ("spiders", ["a camping weekend", "cleaning out an old shed"]),
    ("crowds", ["a stadium concert", "a big music festival"]),
    ("dogs", ["a visit to a dog park", "house-sitting for a friend with a big dog"]),
    ("tight spaces", ["a cave tour", "an escape room"]),
]
CRAFTS = _list(
    """
pottery|woodworking|glassblowing|bookbinding|candle-making|screen printing|watercolor|calligraphy|bread baking|
cheese making|jewelry making|stained glass|weaving|leather crafting|macrame|soap making|embroidery|knife sharpening
"""
)
CAREERS = _list(
    """
midwife|park ranger|chef|counselor|architect|veterinarian|high school teacher|firefighter|nurse practitioner|
sound engineer|pilot|pastry chef|social worker|marine biologist
"""
)

GREETINGS = [
    "Hey {other}! How's it going?",
    "Hi {other}, long time no talk!",
    "Morning {other}! Hope your week's been okay.",
    "Hey! Sorry I went quiet for a bit, things have been hectic.",
    "{other}! Good to hear from you. How have you been?",
    "Hiya {other}, what's new with you?",
    "Hey you. Got a minute to catch up?",
    "Hello hello! How was your week, {other}?",
    "Evening {other}! Finally sat down after a long day.",
    "Hey {other}, it's been ages! What have you been up to?",
]
GREETING_REPLIES = [
    "Hey {other}! Pretty good, busy as usual. You?",
    "Hi! All good here, just tired. What about you?",
    "So good to hear from you! Things are fine, a bit chaotic.",
    "Hey! Can't complain. What's going on with you?",
    "Hi {other}! Honestly it's been a whirlwind, but good.",
    "Heyy. Doing alright! Tell me everything.",
    "Oh hi! I was just thinking about you. I'm well, thanks.",
    "Not bad at all! Been keeping busy. How about you?",
]
REACTIONS = [
    "That's amazing!",
    "Wow, congrats!",
    "Haha, love that.",
    "No way! Tell me more.",
    "That sounds so relaxing.",
    "I'm so happy for you!",
    "Ugh, I know that feeling.",
    "That's so cool, {other}.",
    "Wait, really? That's awesome.",
    "Oh nice, good for you!",
    "Honestly, that sounds like the best time.",
    "Aw, that's sweet.",
    "Ha! Classic.",
    "That's huge, well done!",
    "You deserve it.",
    "Okay, I'm jealous.",
    "I love hearing that.",
    "Sounds like a lot, but in a good way.",
]
FOLLOW_UPS = [  # (question, a fitting answer)
    ("How did it go?", "It went really well, better than I expected."),
    ("Was it fun?", "So much fun, honestly."),
    ("Who else was there?", "Just a few people, it was pretty low-key."),
    ("How are you feeling about it?", "Mostly excited, a little nervous."),
    ("Did you take pictures?", "A couple! I'll send them later."),
    ("Would you do it again?", "Definitely, I'm already thinking about the next time."),
    ("What was the best part?", "Honestly just being outside and not looking at a screen."),
    ("Was it as good as you hoped?", "Pretty much, yeah. No complaints."),
    ("How long have you been planning that?", "For a while now, it kept getting pushed back."),
    ("Is that something you want to keep doing?", "I think so, we'll see how life goes."),
    ("Wait, how did that happen?", "Honestly it just kind of fell into place."),
    ("Are you tired?", "Exhausted, but the good kind."),
]
SMALL_TALK = [
    "Work has been nonstop lately.",
    "I've been sleeping terribly this week.",
    "The weather here has been all over the place.",
    "I really need a vacation.",
    "Been trying to drink more water, ha.",
    "My phone screen cracked again, classic me.",
    "Traffic this morning was unreal.",
    "I finally cleaned out my inbox, it felt amazing.",
    "I've been cooking at home more to save money.",
    "Is it just me or has this month flown by?",
    "My allergies are acting up like crazy.",
    "I keep meaning to call more people back.",
    "Been listening to a lot of podcasts on my commute.",
    "I have so much laundry to do, it's embarrassing.",
    "My internet went down for a whole day, total chaos.",
    "I started going to bed earlier, trying to reset.",
    "Coffee is the only thing keeping me going right now.",
    "I had the weirdest dream last night.",
    "I'm trying to spend less time on my phone.",
    "Everyone at work seems to have a cold right now.",
    "I rearranged my furniture again, can't stop doing that.",
    "Honestly just happy it's almost the weekend.",
]
GOODBYES = [
    "Anyway, I should get going. Talk soon!",
    "Gotta run, catch you later!",
    "Take care, {other}!",
    "Bye! Let's chat again soon.",
    "I need to head out, but this was nice.",
    "Okay, dinner's calling. Talk later!",
    "Alright, going to try to get some sleep. Night!",
    "Good catching up, {other}. Speak soon.",
]
GOODBYE_REPLIES = [
    "Bye! Take care of yourself.",
    "Talk soon!",
    "See you, {other}!",
    "Have a good one!",
    "Night! Chat later.",
    "Same, this was lovely. Bye!",
]
OPENERS = [
    "",
    "",
    "",
    "Guess what, ",
    "So ",
    "Oh! ",
    "Big news: ",
    "Not sure if I mentioned it, but ",
    "Okay so ",
    "Funny story, ",
    "Update: ",
    "By the way, ",
    "Oh, before I forget, ",
    "Random, but ",
    "Honestly, ",
]
CLOSERS = [
    "",
    "",
    "",
    " It was so much fun!",
    " Honestly the best.",
    " Still thinking about it.",
    " Totally worth it.",
    " Kind of exhausting though.",
    " Would definitely do it again.",
    " Who knew?",
    " Pretty proud of that one.",
    " Long story.",
]


def fmt_day(d: date) -> str:
    """LoCoMo's answer form for a day: ``7 May 2023``."""
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def fmt_month(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def fmt_session(dt: datetime) -> str:
    """LoCoMo's ``session_N_date_time`` form: ``1:56 pm on 8 May, 2023``."""
    h = dt.hour % 12 or 12
    return f"{h}:{dt.minute:02d} {'am' if dt.hour < 12 else 'pm'} on {dt.day} {MONTHS[dt.month - 1]}, {dt.year}"


def _add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, 1)


# Time expressions: (phrase, answer) against the session's day -----------------------------------------------------
def past_when(rng: random.Random, day: date) -> tuple[str, str]:
    kind = rng.choice(["yesterday", "days", "weekday", "weekend", "week", "month", "explicit", "today", "before"])
    if kind == "yesterday":
        return "yesterday", fmt_day(day - timedelta(days=1))
    if kind == "before":
        return "the day before yesterday", fmt_day(day - timedelta(days=2))
    if kind == "days":
        n = rng.randint(2, 5)
        return f"{rng.choice([NUMBER_WORDS[n], str(n)])} days ago", fmt_day(day - timedelta(days=n))
    if kind == "weekday":
        wd = rng.randrange(7)
        back = (day.weekday() - wd) % 7 or 7
        return f"{rng.choice(['last', 'this past'])} {WEEKDAYS[wd]}", fmt_day(day - timedelta(days=back))
    if kind == "weekend":
        return rng.choice(["last weekend", "this past weekend"]), f"the weekend before {fmt_day(day)}"
    if kind == "week":
        return "last week", f"the week before {fmt_day(day)}"
    if kind == "month":
        return "last month", fmt_month(_add_months(day, -1))
    if kind == "today":
        return rng.choice(["earlier today", "this morning"]), fmt_day(day)
    d = day - timedelta(days=rng.randint(6, 20))
    if d.year != day.year:
        return f"on {MONTHS[d.month - 1]} {d.day}, {d.year}", fmt_day(d)
    return rng.choice(
        [f"on {MONTHS[d.month - 1]} {d.day}", f"on the {_ordinal(d.day)} of {MONTHS[d.month - 1]}"]
    ), fmt_day(d)


def future_when(rng: random.Random, day: date) -> tuple[str, str]:
    kind = rng.choice(["tomorrow", "weekday", "week", "month", "days"])
    if kind == "tomorrow":
        return "tomorrow", fmt_day(day + timedelta(days=1))
    if kind == "weekday":
        wd = rng.randrange(7)
        ahead = (wd - day.weekday()) % 7 or 7
        return f"this coming {WEEKDAYS[wd]}", fmt_day(day + timedelta(days=ahead))
    if kind == "week":
        return "next week", f"the week after {fmt_day(day)}"
    if kind == "month":
        return "next month", fmt_month(_add_months(day, 1))
    n = rng.randint(2, 6)
    return f"in {rng.choice([NUMBER_WORDS[n], str(n)])} days", fmt_day(day + timedelta(days=n))


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# The world of one conversation ---------------------------------------------------------------------------------------
@dataclass
class Person:
    name: str
    relatives: dict[str, str] = field(default_factory=dict)  # family relation -> name
    claimed: set[str] = field(default_factory=set)  # what has been said about this person (kinds of fact)
    values: dict[str, str] = field(default_factory=dict)  # kind -> the answer, for adversarial swaps


@dataclass
class Item:
    """One statement turn: its owner (0 = speaker_a), its session, its text; the dialogue id once laid out."""

    owner: int
    session: int
    text: str
    dia_id: str = ""


@dataclass
class QA:
    question: str
    category: int
    evidence: list[Item]
    answer: str | None = None
    adversarial_answer: str | None = None
    form: str | None = None  # an adversarial question's form: "swap", "wish" or "never"


@dataclass
class SwapCandidate:
    """A single-hop question of one speaker that, asked of the other, has no answer (the other never said it)."""

    owner: int
    kind: str
    template: str  # with {X}
    answer: str


class Conversation:
    """Builds one sample: the world, the statements by session, the questions, then the turns."""

    def __init__(self, rng: random.Random, sample_id: str, n_sessions: int, turns: tuple[int, int]):
        self.rng = rng
        self.sample_id = sample_id
        self.n_sessions = n_sessions
        self.turn_range = turns
        self.names = rng.sample(sorted(set(FIRST_NAMES)), 60)
        self.people = [Person(self.names.pop()), Person(self.names.pop())]
        start = datetime(2022, 1, 3) + timedelta(days=rng.randint(0, 900))
        self.dates: list[datetime] = []
        t = start
        for _ in range(n_sessions):
            t = t + timedelta(days=rng.randint(2, 14))
            self.dates.append(t.replace(hour=rng.randint(8, 21), minute=rng.randrange(60)))
        self.items: list[list[Item]] = [[] for _ in range(n_sessions)]
        self.distractors: list[list[tuple[int, str]]] = [[] for _ in range(n_sessions)]
        self.qas: list[QA] = []
        self.swaps: list[SwapCandidate] = []
        self.wishes: list[tuple[int, str, str]] = []  # (owner, question about a thing only wished for, tempting answer)
        self.used_values: set[str] = set()

    # helpers ---------------------------------------------------------------------------------------------
    def pick(self, pool: list[str]) -> str:
        """A value not yet used in this conversation (so that an answer names one thing), else any."""
        fresh = [v for v in pool if v not in self.used_values]
        v = self.rng.choice(fresh or pool)
        self.used_values.add(v)
        return v

    def new_name(self) -> str:
        return self.names.pop() if self.names else self.rng.choice(SURNAMES)

    def relative(self, owner: int, family: bool = True) -> tuple[str, str]:
        """(relation, name): a family member (one per relation and person, kept) or a loose acquaintance (new)."""
        p = self.people[owner]
        if family:
            rel = self.rng.choice(RELATIONS_FAMILY)
            if rel not in p.relatives:
                p.relatives[rel] = self.new_name()
            return rel, p.relatives[rel]
        return self.rng.choice(RELATIONS_LOOSE), self.new_name()

    def say(self, owner: int, session: int, body: str, lead: bool = True) -> Item:
        opener = self.rng.choice(OPENERS) if lead else ""
        text = _articles((opener + body).strip())
        text = text[0].upper() + text[1:]
        if not text.endswith((".", "!", "?")):
            text += self.rng.choice([".", ".", "!"])
        text += self.rng.choice(CLOSERS) if lead else ""
        it = Item(owner, session, text)
        self.items[session].append(it)
        return it

    def day(self, session: int) -> date:
        return self.dates[session].date()

    def ask(self, question: str, answer: str, category: int, evidence: list[Item]) -> None:
        self.qas.append(QA(question, category, evidence, answer=answer))

    def single(self, owner: int, kind: str, template: str, answer: str, item: Item) -> None:
        """A single-hop question (``{X}`` is the owner's name), remembered for a speaker swap."""
        p = self.people[owner]
        self.ask(template.format(X=p.name), answer, SINGLE_HOP, [item])
        self.swaps.append(SwapCandidate(owner, kind, template, answer))

    def claim(self, owner: int, kind: str, value: str = "") -> bool:
        p = self.people[owner]
        if kind in p.claimed:
            return False
        p.claimed.add(kind)
        p.values[kind] = value
        return True

    # Frames ---------------------------------------------------------------------------------------------
    # Each frame says one or two things in given sessions and asks about them; it returns False when it cannot
    # (what it would say was already said about that person), and the caller draws another.
    def activity(self, owner: int, s: int, temporal: bool) -> bool:
        act = self.rng.choice(ACTIVITIES)
        if not self.claim(owner, f"act:{act.key}"):
            return False
        r = self.rng
        slots = {k: gen(self, owner) for k, gen in act.slots.items()}
        answers = {k: _name_of(v) if k == "who" and v.startswith("my ") else _bare(v) for k, v in slots.items()}
        future = temporal and bool(act.future) and r.random() < 0.3
        when, answer = (future_when if future else past_when)(r, self.day(s))
        phrasing = r.choice(act.future if future else act.past)
        body = phrasing.format(**slots)
        body = f"{when} {body}" if r.random() < 0.5 else f"{body} {when}"
        item = self.say(owner, s, body)
        name = self.people[owner].name
        if temporal:
            vp = r.choice(act.vp).format(**slots)
            q = r.choice(FUTURE_WHEN_Q if future else PAST_WHEN_Q).format(X=name, vp=vp)
            self.ask(q, answer, TEMPORAL, [item])
        if future:
            return True
        said = [k for k in act.questions if "{" + k + "}" in phrasing]  # only what this phrasing states
        k = 1 if r.random() < 0.7 else 2
        for slot in r.sample(said, k=min(len(said), k)):
            template = r.choice(act.questions[slot]).format(X="{X}", **slots)
            self.single(owner, f"act:{act.key}:{slot}", template, answers[slot], item)
        return True

    def profile(self, owner: int, s: int) -> bool:
        frame = self.rng.choice(PROFILE_FRAMES)
        return frame(self, owner, s)

    def inference(self, owner: int, s: int) -> bool:
        frame = self.rng.choice(INFERENCE_FRAMES)
        return frame(self, owner, s)

    def multi(self, owner: int, s1: int, s2: int) -> bool:
        frame = self.rng.choice(MULTI_FRAMES)
        return frame(self, owner, s1, s2)

    def update(self, owner: int, s1: int, s2: int) -> bool:
        return _update(self, owner, s1, s2)

    def distractor(self, owner: int, s: int) -> None:
        r = self.rng
        kind = r.randrange(8)
        p = self.people[owner]
        if kind == 0:
            act = r.choice(WISHES)
            text = r.choice(
                [
                    f"I've always wanted to {act[0]} someday.",
                    f"One day I'm going to {act[0]}, I swear.",
                    f"Kind of tempted to {act[0]} at some point, who knows.",
                    f"My bucket list still has '{act[0]}' on it.",
                ]
            )
            self.wishes.append((owner, act[1].format(X=p.name), act[2]))
        elif kind == 1:
            text = r.choice(
                [
                    f"My neighbor just got a {r.choice(DOG_BREEDS)}, it barks all night.",
                    f"Saw the cutest {r.choice(DOG_BREEDS)} at the park today.",
                    f"A coworker keeps showing me photos of her {r.choice(CAT_BREEDS)}.",
                ]
            )
        elif kind == 2:
            text = r.choice(
                [
                    f"Someone at work just got back from {r.choice(CITIES)} and won't stop talking about it.",
                    f"I'd love to see {r.choice(CITIES)} one day.",
                    f"There was a documentary about {r.choice(CITIES)} on last night.",
                ]
            )
        elif kind == 3:
            text = r.choice(
                [
                    f"Everyone keeps telling me to watch {r.choice(SHOWS)}, I haven't started it.",
                    f"My brother-in-law's friend is obsessed with {r.choice(HOBBIES)}.",
                    f"Walked past a {r.choice(CUISINES)} place today, the smell was incredible.",
                ]
            )
        elif kind == 4:
            text = r.choice(
                [
                    f"Maybe I should learn the {r.choice(INSTRUMENTS)}, ha. Probably not.",
                    f"A friend of a friend is selling {r.choice(ITEMS)}, but I don't need one.",
                    f"I keep seeing ads for {r.choice(COURSES)} classes.",
                ]
            )
        else:
            text = r.choice(SMALL_TALK)
        self.distractors[s].append((owner, text))

    def adversarial(self, target: int) -> None:
        """Questions about things never said, ``target`` of them: swaps, never-mentioned things, wishes."""
        r = self.rng
        made = 0
        swaps = [c for c in self.swaps if "{X}" in c.template and _base(c.kind) not in self.people[1 - c.owner].claimed]
        r.shuffle(swaps)
        wishes = list(self.wishes)
        r.shuffle(wishes)
        seen: set[str] = set()
        tries = 0
        while made < target and tries < target * 20:
            tries += 1
            pick = r.random()
            if pick < 0.4 and swaps:
                c = swaps.pop()
                other = self.people[1 - c.owner]
                q = c.template.format(X=other.name)
                wrong, form = c.answer, "swap"
            elif pick < 0.6 and wishes:
                owner, q, wrong = wishes.pop()
                form = "wish"
            else:
                form = "never"
                owner = r.randrange(2)
                p = self.people[owner]
                q, kind, wrong = _never(self, p)
                if kind in p.claimed:
                    continue
            if q in seen:
                continue
            seen.add(q)
            self.qas.append(QA(q, ADVERSARIAL, [], adversarial_answer=wrong, form=form))
            made += 1

    # Layout --------------------------------------------------------------------------------------------------
    def layout(self) -> dict[str, Any]:
        r = self.rng
        a, b = self.people
        conv: dict[str, Any] = {"speaker_a": a.name, "speaker_b": b.name}
        for s in range(self.n_sessions):
            queue: list[list[Item | str]] = [[], []]
            for it in self.items[s]:
                queue[it.owner].append(it)
            for owner, text in self.distractors[s]:
                queue[owner].append(text)
            for q in queue:
                r.shuffle(q)
            lo, hi = self.turn_range
            target = r.randint(lo, hi)
            turns: list[dict[str, str]] = []
            spk = r.randrange(2)

            def emit(who: int, text: str, s: int = s, turns: list[dict[str, str]] = turns) -> dict[str, str]:
                other = self.people[1 - who].name
                turn = {
                    "speaker": self.people[who].name,
                    "dia_id": f"D{s + 1}:{len(turns) + 1}",
                    "text": text.replace("{other}", other),
                }
                turns.append(turn)
                return turn

            emit(spk, r.choice(GREETINGS))
            spk ^= 1
            emit(spk, r.choice(GREETING_REPLIES))
            spk ^= 1
            last_was_news = False
            asked = False
            reply = ""
            while queue[0] or queue[1] or len(turns) < target - 2:
                mine = queue[spk]
                left = len(queue[0]) + len(queue[1])
                room = target - 2 - len(turns)
                if asked:
                    emit(spk, reply)
                    asked, last_was_news = False, False
                elif mine and (r.random() < 0.55 or left >= room):
                    x = mine.pop(0)
                    if isinstance(x, Item):
                        prefix = r.choice(REACTIONS) + " " if last_was_news and r.random() < 0.5 else ""
                        turn = emit(spk, prefix + x.text)
                        x.dia_id = turn["dia_id"]
                        last_was_news = True
                    else:
                        emit(spk, x)
                        last_was_news = False
                elif last_was_news:
                    text = r.choice(REACTIONS)
                    if r.random() < 0.5:
                        follow, reply = r.choice(FOLLOW_UPS)
                        text += " " + follow
                        asked = True
                    emit(spk, text)
                    last_was_news = False
                else:
                    emit(spk, r.choice(SMALL_TALK))
                spk ^= 1
            emit(spk, r.choice(GOODBYES))
            spk ^= 1
            emit(spk, r.choice(GOODBYE_REPLIES))
            conv[f"session_{s + 1}_date_time"] = fmt_session(self.dates[s])
            conv[f"session_{s + 1}"] = turns
        qa = []
        counts: dict[str, int] = {}
        for one in self.qas:
            counts[one.question] = counts.get(one.question, 0) + 1
        for one in self.qas:
            if counts[one.question] > 1:  # asked twice (two facts of one shape): ambiguous, dropped
                continue
            d: dict[str, Any] = {"question": one.question}
            if one.answer is not None:
                d["answer"] = one.answer
            d["evidence"] = [it.dia_id for it in one.evidence]
            d["category"] = one.category
            if one.adversarial_answer is not None:
                d["adversarial_answer"] = one.adversarial_answer
            if one.form is not None:  # not in LoCoMo's layout: the generator's own label, for per-form figures
                d["form"] = one.form
            qa.append(d)
        return {"sample_id": self.sample_id, "conversation": conv, "qa": qa}


_AN = re.compile(r"\b([Aa]) (?=[aeioAEIO]|u(?!ni|s[eu])|U(?![A-Z]))")


def _articles(text: str) -> str:
    """ "a Akita" -> "an Akita" (not "a UX researcher", "a university")."""
    return _AN.sub(lambda m: m.group(1) + "n ", text)


def _base(kind: str) -> str:
    """The kind a fact claims for its person ("act:hike:place" -> "act:hike", "pet:dog:name" -> "pet:dog")."""
    parts = kind.split(":")
    return ":".join(parts[:2])


def _bare(v: str) -> str:
    """An answer without a leading article ("the Harbor Hall" -> "Harbor Hall"): LoCoMo's answers carry none."""
    for a in ("the ", "a ", "an "):
        if v.startswith(a):
            return v[len(a) :]
    return v


# Activities: a past (and maybe a future) phrasing, a verb phrase for "When did X ...?", slots and their questions.
@dataclass
class Activity:
    key: str
    past: list[str]
    vp: list[str]
    slots: dict[str, Callable[[Conversation, int], str]]
    questions: dict[str, list[str]]
    future: list[str] = field(default_factory=list)


def _with(c: Conversation, owner: int) -> str:
    rel, name = c.relative(owner, family=c.rng.random() < 0.5)
    return f"my {rel} {name}"


def _name_of(phrase: str) -> str:
    return phrase.rsplit(" ", 1)[-1]


def _trail(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [f"{a} {n} Trail" for a in r.sample(ADJ, 6) for n in r.sample(PLACE_NOUN, 3)]
        + [f"{s} {n}" for s in r.sample(SURNAMES, 4) for n in ("Canyon", "Ridge", "Falls")]
    )


def _venue(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"the {a} {k}" for a in r.sample(ADJ, 6) for k in ("Room", "Hall", "Lounge", "Ballroom", "Theater")])


def _band(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [f"the {a} {p}" for a in r.sample(ADJ, 5) for p in r.sample(PLURAL_NOUN, 3)]
        + [f"{n} and the {p}" for n in r.sample(FIRST_NAMES, 3) for p in r.sample(PLURAL_NOUN, 2)]
    )


def _museum(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [
            f"the {r.choice(CITIES + ADJ)} Museum of {k}"
            for k in ("Modern Art", "Natural History", "Science", "Photography", "Flight", "Design", "Textiles")
        ]
    )


def _restaurant(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [f"{s}'s" for s in r.sample(SURNAMES, 4)]
        + [f"the {a} {k}" for a in r.sample(ADJ, 4) for k in ("Fork", "Table", "Kitchen", "Lantern", "Spoon")]
    )


def _race(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [
            f"{r.choice(CITIES)} {k}"
            for k in ("Half Marathon", "10K", "Marathon", "Turkey Trot", "Trail Race", "Triathlon")
        ]
    )


def _park(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"{s} Park" for s in r.sample(SURNAMES, 5)] + [f"{a} Meadow Park" for a in r.sample(ADJ, 3)])


def _beach(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"{s} Beach" for s in r.sample(SURNAMES, 4)] + [f"{a} Cove" for a in r.sample(ADJ, 4)])


def _lake(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"Lake {s}" for s in r.sample(SURNAMES, 4)] + [f"{a} Lake" for a in r.sample(ADJ, 4)])


def _shelter(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [
            f"the {r.choice(CITIES)} Animal Shelter",
            f"the food bank on {r.choice(SURNAMES)} Street",
            f"the {r.choice(SURNAMES)} Community Garden",
            f"a soup kitchen in {r.choice(ADJ)} Heights",
            f"the {r.choice(ADJ)} Senior Center",
            f"a literacy nonprofit called {r.choice(ADJ)} Pages",
        ]
    )


def _theatre(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"the {r.choice(ADJ)} Playhouse", f"the {r.choice(SURNAMES)} Theater", "the community theater"])


def _festival(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [f"the {r.choice(CITIES)} {k} Festival" for k in ("Jazz", "Food", "Film", "Lantern", "Folk", "Kite", "Chili")]
    )


def _conf(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"{r.choice(ADJ)}Conf", f"the {r.choice(CITIES)} {r.choice(['Summit', 'Forum', 'Symposium'])}"])


def _team(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick([f"{r.choice(CITIES)} {p}" for p in r.sample(PLURAL_NOUN, 4)])


def _store(c: Conversation, _: int) -> str:
    r = c.rng
    return c.pick(
        [f"{r.choice(SURNAMES)} {k}" for k in ("Hardware", "Outfitters", "Home Goods", "Electronics", "Supply Co.")]
        + [f"the flea market on {r.choice(SURNAMES)} Avenue", "a garage sale down the street"]
    )


def _market(c: Conversation, _: int) -> str:
    return c.pick([f"the {c.rng.choice(ADJ)} farmers market", f"the {c.rng.choice(SURNAMES)} Street market"])


def _pool(pool: list[str]) -> Callable[[Conversation, int], str]:
    return lambda c, _: c.pick(pool)


def _city(c: Conversation, _: int) -> str:
    return c.pick(CITIES)


def _wedding_of(c: Conversation, owner: int) -> str:
    return c.new_name()


ACTIVITIES: list[Activity] = [
    Activity(
        "hike",
        ["I went hiking at {place} with {who}", "I did the whole {place} loop with {who}", "{who} and I hiked {place}"],
        ["go hiking", "go on a hike", "hike {place}"],
        {"place": _trail, "who": _with},
        {
            "place": ["Where did {X} go hiking?", "Which trail did {X} hike?", "What trail did {X} do?"],
            "who": ["Who went hiking with {X}?", "Who did {X} go on the hike with?"],
        },
        ["I'm going hiking at {place} with {who}", "{who} and I are hiking {place}"],
    ),
    Activity(
        "concert",
        ["I saw {band} live at {venue}", "I finally got to see {band} play at {venue}", "we caught {band} at {venue}"],
        ["see {band} live", "go to the {band} concert", "go to a concert"],
        {"band": _band, "venue": _venue},
        {
            "band": ["Which band did {X} see live?", "Who did {X} see in concert?"],
            "venue": ["Where did {X} see {band} play?", "What venue was the concert {X} went to at?"],
        },
        ["I've got tickets to see {band} at {venue}", "I'm seeing {band} at {venue}"],
    ),
    Activity(
        "museum",
        ["I spent the afternoon at {museum} with {who}", "{who} dragged me to {museum}", "I visited {museum}"],
        ["visit {museum}", "go to the museum"],
        {"museum": _museum, "who": _with},
        {
            "museum": ["Which museum did {X} visit?", "What museum did {X} go to?"],
            "who": ["Who went to the museum with {X}?"],
        },
    ),
    Activity(
        "restaurant",
        [
            "I tried {restaurant}, the new {cuisine} place downtown",
            "we had dinner at {restaurant}, it's a {cuisine} spot",
            "I finally ate at {restaurant}. It's {cuisine} and so good",
        ],
        ["try {restaurant}", "eat at {restaurant}", "try the new {cuisine} place"],
        {"restaurant": _restaurant, "cuisine": _pool(CUISINES)},
        {
            "restaurant": ["Which restaurant did {X} try?", "What's the name of the {cuisine} place {X} went to?"],
            "cuisine": ["What kind of food does {restaurant} serve?", "What cuisine did {X} try at {restaurant}?"],
        },
        ["I'm taking my parents to {restaurant}, the {cuisine} place"],
    ),
    Activity(
        "race",
        ["I ran the {race}", "I finished the {race} in one piece", "I did the {race} with {who}"],
        ["run the {race}", "do the {race}", "run a race"],
        {"race": _race, "who": _with},
        {"race": ["Which race did {X} run?", "What race did {X} take part in?"]},
        ["I'm running the {race}"],
    ),
    Activity(
        "volunteer",
        ["I volunteered at {org}", "I spent the day volunteering at {org} with {who}", "I helped out at {org}"],
        ["volunteer at {org}", "volunteer"],
        {"org": _shelter, "who": _with},
        {"org": ["Where did {X} volunteer?", "Which place did {X} help out at as a volunteer?"]},
        ["I signed up to volunteer at {org}"],
    ),
    Activity(
        "workshop",
        ["I took a {craft} workshop", "I did a {craft} class at {venue}", "{who} and I went to a {craft} workshop"],
        ["take the {craft} workshop", "go to a workshop", "do the {craft} class"],
        {"craft": _pool(CRAFTS), "venue": _venue, "who": _with},
        {"craft": ["What kind of workshop did {X} take?", "What did {X} learn at the workshop?"]},
        ["I'm taking a {craft} workshop"],
    ),
    Activity(
        "camping",
        ["I went camping at {lake} with {who}", "{who} and I camped by {lake}", "we pitched a tent at {lake}"],
        ["go camping", "camp at {lake}"],
        {"lake": _lake, "who": _with},
        {"lake": ["Where did {X} go camping?"], "who": ["Who went camping with {X}?"]},
        ["I'm going camping at {lake} with {who}"],
    ),
    Activity(
        "wedding",
        [
            "I went to {bride}'s wedding in {city}",
            "I flew to {city} for {bride}'s wedding",
            "{bride} got married in {city}",
        ],
        ["go to {bride}'s wedding", "attend the wedding in {city}"],
        {"bride": _wedding_of, "city": _city},
        {
            "city": ["Where was {bride}'s wedding?", "In which city did {X} attend a wedding?"],
            "bride": ["Whose wedding did {X} go to in {city}?"],
        },
        ["I'm flying to {city} for {bride}'s wedding"],
    ),
    Activity(
        "purchase",
        ["I bought {item} at {store}", "I picked up {item} from {store}", "I splurged on {item} at {store}"],
        ["buy {item}", "buy something at {store}"],
        {"item": _pool(ITEMS), "store": _store},
        {"item": ["What did {X} buy at {store}?", "What did {X} splurge on?"], "store": ["Where did {X} buy {item}?"]},
    ),
    Activity(
        "game",
        [
            "I went to the {team} game with {who}",
            "{who} took me to see the {team} play",
            "I watched the {team} win live",
        ],
        ["go to the {team} game", "see the {team} play"],
        {"team": _team, "who": _with},
        {"team": ["Which team's game did {X} go to?", "What team did {X} watch play live?"]},
        ["I'm going to the {team} game with {who}"],
    ),
    Activity(
        "beach",
        ["I spent the whole day at {beach}", "{who} and I drove out to {beach}", "I went swimming at {beach}"],
        ["go to the beach", "spend the day at {beach}"],
        {"beach": _beach, "who": _with},
        {"beach": ["Which beach did {X} go to?", "Where did {X} go swimming?"]},
        ["I'm spending the day at {beach}"],
    ),
    Activity(
        "picnic",
        ["I had a picnic at {park} with {who}", "{who} and I had lunch on the grass at {park}"],
        ["have a picnic", "have a picnic at {park}"],
        {"park": _park, "who": _with},
        {"park": ["Where did {X} have a picnic?"], "who": ["Who had a picnic with {X}?"]},
        ["I'm having a picnic at {park} with {who}"],
    ),
    Activity(
        "talk",
        ["I gave a talk at {conf} about {topic}", "I presented at {conf}, my talk was on {topic}"],
        ["give a talk at {conf}", "present at {conf}", "give the talk"],
        {"conf": _conf, "topic": _pool(TOPICS)},
        {
            "topic": ["What did {X} talk about at {conf}?", "What was the topic of {X}'s talk?"],
            "conf": ["Where did {X} give a talk about {topic}?"],
        },
        ["I'm giving a talk at {conf} about {topic}"],
    ),
    Activity(
        "play",
        ["I saw {play} at {theatre}", "{who} and I went to see {play} at {theatre}"],
        ["see {play}", "go to the theater"],
        {"play": _pool(PLAYS), "theatre": _theatre, "who": _with},
        {"play": ["Which play did {X} see?", "What show did {X} see at {theatre}?"]},
        ["I've got tickets for {play} at {theatre}"],
    ),
    Activity(
        "paint",
        ["I painted the {room} {colour}", "we repainted the {room}, it's {colour} now"],
        ["paint the {room}", "repaint the {room}"],
        {"room": _pool(ROOMS), "colour": _pool(COLOURS)},
        {"colour": ["What colour did {X} paint the {room}?", "What colour is {X}'s {room} now?"]},
        ["I'm painting the {room} {colour}"],
    ),
    Activity(
        "bake",
        ["I baked {dish} for {who}'s birthday", "I made {dish} for {who}'s birthday party"],
        ["bake for {who}'s birthday", "make {dish}"],
        {"dish": _pool(DISHES), "who": lambda c, o: c.relative(o, family=True)[1]},
        {"dish": ["What did {X} bake for {who}'s birthday?", "What did {X} make for the birthday party?"]},
        ["I'm baking {dish} for {who}'s birthday"],
    ),
    Activity(
        "roadtrip",
        ["I drove down to {city} for the weekend", "{who} and I did a road trip to {city}"],
        ["drive to {city}", "go on a road trip"],
        {"city": _city, "who": _with},
        {"city": ["Where did {X} go on a road trip?", "Which city did {X} drive to?"]},
        ["I'm driving to {city} with {who}"],
    ),
    Activity(
        "festival",
        ["I went to {festival} with {who}", "I spent the day at {festival}"],
        ["go to {festival}", "go to the festival"],
        {"festival": _festival, "who": _with},
        {"festival": ["Which festival did {X} go to?"], "who": ["Who went to the festival with {X}?"]},
        ["I'm going to {festival} with {who}"],
    ),
    Activity(
        "course",
        ["I finished my {course} course", "I got my certificate for the {course} course"],
        ["finish the {course} course", "finish a course"],
        {"course": _pool(COURSES)},
        {"course": ["What course did {X} finish?", "Which course did {X} complete?"]},
    ),
    Activity(
        "fishing",
        ["I went fishing at {lake} and caught a {fish}", "{who} and I fished {lake}, I caught a {fish}"],
        ["go fishing", "go fishing at {lake}"],
        {"lake": _lake, "fish": _pool(FISH), "who": _with},
        {"fish": ["What did {X} catch at {lake}?", "What fish did {X} catch?"], "lake": ["Where did {X} go fishing?"]},
        ["I'm going fishing at {lake} with {who}"],
    ),
    Activity(
        "exam",
        ["I passed my {exam}", "I took the {exam} and passed"],
        ["pass the {exam}", "take the {exam}"],
        {"exam": _pool(EXAMS)},
        {"exam": ["What exam did {X} pass?", "Which test did {X} pass?"]},
        ["I'm taking my {exam}"],
    ),
    Activity(
        "bookclub",
        ["I hosted book club and we talked about {book}", "my book club finally finished {book}"],
        ["host book club", "finish {book}"],
        {"book": _pool(BOOKS)},
        {"book": ["What book did {X}'s book club discuss?", "Which book did {X}'s book club read?"]},
        ["I'm hosting book club, we're doing {book}"],
    ),
    Activity(
        "zoo",
        ["I took {who} to the zoo and we saw {animal}", "{who} and I went to the zoo, the {animal} were the highlight"],
        ["go to the zoo", "take {who} to the zoo"],
        {"who": _with, "animal": _pool(ZOO_ANIMALS)},
        {"animal": ["What did {X} see at the zoo?"], "who": ["Who did {X} take to the zoo?"]},
        ["I'm taking {who} to the zoo"],
    ),
    Activity(
        "market",
        ["I went to {market} and came home with {produce}", "I bought {produce} at {market}"],
        ["go to {market}", "go to the market"],
        {"market": _market, "produce": _pool(PRODUCE)},
        {"produce": ["What did {X} buy at {market}?", "What did {X} bring home from the market?"]},
    ),
    Activity(
        "karaoke",
        ["I sang {song} at karaoke with {who}", "{who} talked me into singing {song} at karaoke"],
        ["sing karaoke", "go to karaoke"],
        {"song": _pool(SONGS), "who": _with},
        {"song": ["What song did {X} sing at karaoke?", "Which song did {X} perform at karaoke night?"]},
        ["I'm doing karaoke with {who}"],
    ),
    Activity(
        "garden",
        ["I planted {plant} in the backyard", "I put in a whole row of {plant} in the garden"],
        ["plant the garden", "plant {plant}"],
        {"plant": _pool(PLANTS)},
        {"plant": ["What did {X} plant in the garden?", "What did {X} put in the backyard?"]},
        ["I'm planting {plant} in the backyard"],
    ),
    Activity(
        "interview",
        ["I had an interview at {org} for a {job} role", "I interviewed with {org}, it's a {job} position"],
        ["interview at {org}", "have a job interview"],
        {"org": lambda c, o: c.pick([f"{a} {b}" for a in ORG_A for b in ORG_B[:6]]), "job": _pool(JOBS)},
        {"job": ["What role did {X} interview for at {org}?"], "org": ["Where did {X} interview for a {job} job?"]},
        ["I have an interview at {org} for a {job} role"],
    ),
    Activity(
        "escape",
        ["{who} and I did an escape room called {room}", "I did the {room} escape room with {who}"],
        ["do an escape room", "do the escape room"],
        {
            "room": lambda c, o: c.pick([f"The {a} {n}" for a in ADJ[:12] for n in ("Vault", "Tomb", "Lab", "Heist")]),
            "who": _with,
        },
        {"room": ["What escape room did {X} do?"], "who": ["Who did the escape room with {X}?"]},
        ["I'm doing the {room} escape room with {who}"],
    ),
    Activity(
        "sail",
        ["I went sailing on {lake} with {who}", "{who} took me out on a sailboat on {lake}"],
        ["go sailing", "go sailing on {lake}"],
        {"lake": _lake, "who": _with},
        {"who": ["Who took {X} sailing?", "Who went sailing with {X}?"], "lake": ["Where did {X} go sailing?"]},
        ["I'm going sailing on {lake} with {who}"],
    ),
]
for _a in ACTIVITIES:  # a slot named in the phrasings but not drawn would fail at .format
    assert _a.key and _a.past and _a.vp

PAST_WHEN_Q = ["When did {X} {vp}?", "When was it that {X} went to {vp}?", "On what date did {X} {vp}?"]
PAST_WHEN_Q = ["When did {X} {vp}?", "When did {X} {vp}?", "On what date did {X} {vp}?", "Around when did {X} {vp}?"]
FUTURE_WHEN_Q = ["When is {X} going to {vp}?", "When does {X} plan to {vp}?", "When was {X} planning to {vp}?"]


# Profile frames: one statement, one or two single-hop questions --------------------------------------------------------
def _job(c: Conversation, owner: int, s: int) -> bool:
    job, org = c.pick(JOBS), c.pick([f"{a} {b}" for a in c.rng.sample(ORG_A, 6) for b in c.rng.sample(ORG_B, 4)])
    if not c.claim(owner, "job", job):
        return False
    c.claim(owner, "employer", org)
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [
                f"I started my new job as a {job} at {org}",
                f"I've been working as a {job} at {org} for a while now, and it's finally clicking",
                f"I got hired at {org}! I'll be a {job} there",
                f"being a {job} at {org} is exhausting some weeks",
                f"my manager at {org} wants me to train the new {job}s, since I'm the senior {job} now",
            ]
        ),
    )
    c.single(
        owner,
        "job",
        c.rng.choice(["What does {X} do for work?", "What is {X}'s job?", "What line of work is {X} in?"]),
        job,
        it,
    )
    if c.rng.random() < 0.6:
        c.single(
            owner, "employer", c.rng.choice(["Where does {X} work?", "Which organisation does {X} work for?"]), org, it
        )
    return True


def _rel_city(c: Conversation, owner: int, s: int) -> bool:
    rel, name = c.relative(owner)
    city = c.pick(CITIES)
    if not c.claim(owner, f"city:{rel}", city):
        return False
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [
                f"my {rel} {name} just moved to {city}",
                f"my {rel} {name} lives in {city} now, I miss having them close",
                f"{name}, my {rel}, has been in {city} since the spring",
                f"I talked to my {rel} {name} on the phone, {city} is treating them well",
            ]
        ),
    )
    c.single(
        owner,
        f"city:{rel}",
        c.rng.choice([f"Where does {{X}}'s {rel} live?", f"Which city does {name} live in?"]),
        city,
        it,
    )
    return True


def _rel_job(c: Conversation, owner: int, s: int) -> bool:
    rel, name = c.relative(owner)
    job = c.pick(JOBS)
    if not c.claim(owner, f"job:{rel}", job):
        return False
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [
                f"my {rel} {name} just became a {job}",
                f"{name}, my {rel}, finally got a job as a {job}",
                f"my {rel} {name} works as a {job} and has the wildest stories",
            ]
        ),
    )
    c.single(owner, f"job:{rel}", c.rng.choice([f"What does {{X}}'s {rel} do?", f"What is {name}'s job?"]), job, it)
    return True


def _pet(c: Conversation, owner: int, s: int) -> bool:
    r = c.rng
    species = r.choice(["dog", "dog", "cat", *OTHER_PETS])
    breeds = DOG_BREEDS if species == "dog" else CAT_BREEDS if species == "cat" else OTHER_PETS[species]
    breed, pet = c.pick(breeds), c.pick(PET_NAMES)
    if r.random() < 0.5:
        if not c.claim(owner, f"pet:{species}", pet):
            return False
        it = c.say(
            owner,
            s,
            r.choice(
                [
                    f"I adopted a {breed}! Her name is {pet}",
                    f"we brought home a {breed} and named him {pet}",
                    f"meet {pet}, my new {breed}. Best decision ever",
                    f"I finally got a {species}, a little {breed} called {pet}",
                ]
            ),
        )
        c.single(owner, f"pet:{species}:name", f"What is the name of {{X}}'s {species}?", pet, it)
        c.single(owner, f"pet:{species}:breed", f"What breed is {{X}}'s {species}?", breed, it)
        return True
    rel, name = c.relative(owner)
    if not c.claim(owner, f"pet:{rel}", pet):
        return False
    it = c.say(
        owner,
        s,
        r.choice(
            [
                f"my {rel} {name} just adopted a {breed} named {pet}",
                f"{name} (my {rel}) got a {breed}, they called it {pet}",
                f"my {rel} {name} finally caved and got a {species}: a {breed} called {pet}",
            ]
        ),
    )
    c.single(
        owner,
        f"pet:{rel}:breed",
        r.choice([f"What kind of {species} did {name} adopt?", f"What breed is {name}'s {species}?"]),
        breed,
        it,
    )
    if r.random() < 0.5:
        c.single(owner, f"pet:{rel}:name", f"What did {{X}}'s {rel} name their {species}?", pet, it)
    return True


def _simple(
    kind: str, pool: list[str], statements: list[str], questions: list[str]
) -> Callable[[Conversation, int, int], bool]:
    def frame(c: Conversation, owner: int, s: int) -> bool:
        v = c.pick(pool)
        if not c.claim(owner, kind, v):
            return False
        it = c.say(owner, s, c.rng.choice(statements).format(v=v))
        c.single(owner, kind, c.rng.choice(questions), _bare(v), it)
        return True

    return frame


PROFILE_FRAMES: list[Callable[[Conversation, int, int], bool]] = [
    _job,
    _rel_city,
    _rel_job,
    _pet,
    _pet,
    _simple(
        "instrument",
        INSTRUMENTS,
        [
            "I've been learning the {v}, my neighbors must hate me",
            "I started {v} lessons on Thursdays",
            "I dug my old {v} out of the closet and I'm practicing again",
        ],
        ["What instrument is {X} learning?", "Which instrument has {X} been practicing?"],
    ),
    _simple(
        "car",
        CARS,
        ["I finally bought a car, a used {v}", "we traded in the old car for a {v}", "I'm driving a {v} now"],
        ["What car did {X} buy?", "What does {X} drive now?"],
    ),
    _simple(
        "show",
        SHOWS,
        ["I'm completely hooked on {v}", "I binged all of {v} this week", "{v} is the only thing I watch lately"],
        ["What show has {X} been watching?", "Which TV series is {X} hooked on?"],
    ),
    _simple(
        "book",
        BOOKS,
        ["I'm reading {v} right now and can't put it down", "I just finished {v}", "my nightstand book is {v}"],
        ["What book is {X} reading?", "Which book did {X} mention reading?"],
    ),
    _simple(
        "collect",
        THINGS_COLLECTED,
        ["I collect {v}, it's a bit of an obsession", "my collection of {v} is taking over the shelf"],
        ["What does {X} collect?", "What kind of collection does {X} have?"],
    ),
    _simple(
        "language",
        LANGUAGES,
        [
            "I'm learning {v} on my lunch breaks",
            "I signed up for an evening {v} class",
            "I'm trying to get better at {v}",
        ],
        ["Which language is {X} learning?", "What language class did {X} sign up for?"],
    ),
    _simple(
        "study",
        SUBJECTS,
        ["I got into the part-time {v} program", "I'm going back to school for {v}", "my {v} classes start soon"],
        ["What is {X} studying?", "What subject is {X} going back to school for?"],
    ),
    _simple(
        "sport",
        SPORTS,
        ["I joined a {v} league", "I play {v} every Tuesday night now", "my {v} team made the playoffs"],
        ["What sport does {X} play?", "Which league did {X} join?"],
    ),
    _simple(
        "hobby",
        HOBBIES,
        ["I've gotten really into {v}", "I picked up {v} as a new hobby", "{v} has become my weekend thing"],
        ["What hobby has {X} picked up?", "What has {X} gotten into lately?"],
    ),
    _simple(
        "team",
        [f"{c} {p}" for c in CITIES[:20] for p in PLURAL_NOUN[:6]],
        ["I'm a die-hard {v} fan", "I've had {v} season tickets for years"],
        ["Which team does {X} support?", "What team is {X} a fan of?"],
    ),
    _simple(
        "cuisine",
        CUISINES,
        ["{v} food is my absolute favorite", "I could eat {v} every single day"],
        ["What is {X}'s favorite kind of food?", "What cuisine does {X} love most?"],
    ),
]


def _kid(c: Conversation, owner: int, s: int) -> bool:
    name = c.new_name()
    rel = c.rng.choice(["daughter", "son", "kid"])
    if not c.claim(owner, "kid", name):
        return False
    age = c.rng.randint(3, 12)
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [
                f"my {rel} {name} turns {age} soon and wants a dinosaur party",
                f"I had to leave early to pick up my {rel} {name} from school",
                f"{name}, my {rel}, lost a tooth at dinner",
            ]
        ),
    )
    c.ask(
        c.rng.choice(
            [
                f"Who might {c.people[owner].name} be planning a party for?",
                f"Who does {c.people[owner].name} pick up after school?",
                f"What is the name of {c.people[owner].name}'s child?",
            ]
        ),
        name,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _diet(c: Conversation, owner: int, s: int) -> bool:
    v = c.pick(DIETS)
    if not c.claim(owner, "diet", v):
        return False
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [
                f"I can't eat {v} at all, my stomach hates me for it",
                f"turns out I'm allergic to {v}, so I'm reading every label now",
                f"the doctor told me to cut out {v} completely",
            ]
        ),
    )
    name = c.people[owner].name
    c.ask(
        c.rng.choice(
            [
                f"What should someone leave out when cooking for {name}?",
                f"If you were baking a cake for {name}, what ingredient should you skip?",
                f"What should {name} check for on a restaurant menu?",
            ]
        ),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _author(c: Conversation, owner: int, s: int) -> bool:
    v = c.pick(AUTHORS)
    if not c.claim(owner, "author", v):
        return False
    it = c.say(owner, s, c.rng.choice([f"I've been devouring everything by {v}", f"{v} might be my favorite writer"]))
    name = c.people[owner].name
    c.ask(
        c.rng.choice(
            [
                f"Whose new book would make a good present for {name}?",
                f"Which writer's books would {name} enjoy as a gift?",
            ]
        ),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _fear(c: Conversation, owner: int, s: int) -> bool:
    fear, contexts = c.rng.choice(FEARS)
    if not c.claim(owner, "fear", fear):
        return False
    it = c.say(
        owner, s, c.rng.choice([f"I've been scared of {fear} since I was a kid", f"I panic around {fear}, always have"])
    )
    name = c.people[owner].name
    ctx = c.rng.choice(contexts)
    c.ask(
        c.rng.choice([f"Why might {name} hesitate about {ctx}?", f"What could make {ctx} stressful for {name}?"]),
        fear,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _heritage(c: Conversation, owner: int, s: int) -> bool:
    v = c.pick(LANGUAGES)
    if not c.claim(owner, "heritage", v):
        return False
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [f"my grandparents only speak {v}, so family dinners are a workout", f"I grew up speaking {v} at home"]
        ),
    )
    name = c.people[owner].name
    c.ask(
        c.rng.choice(
            [
                f"What language would help someone at {name}'s family gatherings?",
                f"Which language might {name} speak with relatives?",
            ]
        ),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _career(c: Conversation, owner: int, s: int) -> bool:
    v = c.pick(CAREERS)
    if not c.claim(owner, "dream", v):
        return False
    it = c.say(
        owner, s, c.rng.choice([f"I really want to become a {v} one day", f"deep down I think I'd be happier as a {v}"])
    )
    name = c.people[owner].name
    c.ask(
        c.rng.choice(
            [
                f"What career might {name} switch to in the future?",
                f"What would {name} probably go back to school to become?",
            ]
        ),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _allergy(c: Conversation, owner: int, s: int) -> bool:
    v = c.rng.choice(["cats", "dogs", "horses", "rabbits"])
    if not c.claim(owner, "animal-allergy", v):
        return False
    it = c.say(owner, s, f"I'm so allergic to {v}, my eyes swell shut")
    name = c.people[owner].name
    c.ask(
        c.rng.choice(
            [f"Which animal should {name} keep away from?", f"What kind of pet would be a bad gift for {name}?"]
        ),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


def _routine(c: Conversation, owner: int, s: int) -> bool:
    place = c.rng.choice(["the pool", "the climbing gym", "the track", "the dojo", "the boxing gym", "the rowing club"])
    if not c.claim(owner, "routine", place):
        return False
    it = c.say(
        owner,
        s,
        c.rng.choice(
            [f"I'm at {place} at 6am every weekday before work", f"my mornings start at {place}, rain or shine"]
        ),
    )
    name = c.people[owner].name
    c.ask(
        c.rng.choice([f"Where might you find {name} early on a weekday?", f"Where does {name} go before work?"]),
        _bare(place),
        OPEN_DOMAIN,
        [it],
    )
    return True


def _saving(c: Conversation, owner: int, s: int) -> bool:
    v = c.pick(CITIES)
    if not c.claim(owner, "dream-city", v):
        return False
    it = c.say(
        owner, s, c.rng.choice([f"we're saving up to buy a place in {v}", f"the long-term plan is to move to {v}"])
    )
    name = c.people[owner].name
    c.ask(
        c.rng.choice([f"Where might {name} be living in a few years?", f"Which city is {name} hoping to settle in?"]),
        v,
        OPEN_DOMAIN,
        [it],
    )
    return True


INFERENCE_FRAMES: list[Callable[[Conversation, int, int], bool]] = [
    _kid,
    _diet,
    _author,
    _fear,
    _heritage,
    _career,
    _allergy,
    _routine,
    _saving,
]


# Multi-hop frames: two statements in two sessions (s1 < s2), one question that needs both -----------------------------
def _visit(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    rel, name = c.relative(owner)
    city = c.pick(CITIES)
    if not c.claim(owner, f"city:{rel}", city):
        return False
    a = c.say(owner, s1, c.rng.choice([f"my {rel} {name} moved to {city}", f"{name}, my {rel}, took a job in {city}"]))
    when, _ = future_when(c.rng, c.day(s2))
    b = c.say(
        owner, s2, c.rng.choice([f"I'm flying out to see {name} {when}", f"I booked a trip to visit my {rel} {when}"])
    )
    p = c.people[owner].name
    generic = f"Which city is {p} travelling to in order to see family?"
    specific = f"Where is {p} flying to visit {name}?"
    c.ask(
        generic if c.rng.random() < 0.5 and c.claim(owner, "visit-asked") else specific,
        city,
        MULTI_HOP,
        [a, b],
    )
    return True


def _two_hobbies(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    if not c.claim(owner, "hobbies"):
        return False
    h1, h2 = c.pick(HOBBIES), c.pick(HOBBIES)
    a = c.say(owner, s1, c.rng.choice([f"I signed up for a {h1} class", f"I started {h1} on weekends"]))
    b = c.say(
        owner,
        s2,
        c.rng.choice(
            [f"I picked up {h2} too, I need more hobbies like I need a hole in the head", f"new obsession: {h2}"]
        ),
    )
    p = c.people[owner].name
    c.ask(
        c.rng.choice([f"What new hobbies has {p} taken up?", f"Which two activities did {p} start?"]),
        f"{h1}, {h2}",
        MULTI_HOP,
        [a, b],
    )
    return True


def _shared_sport(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    other = 1 - owner
    v = c.pick(SPORTS)
    if "sport" in c.people[owner].claimed or "sport" in c.people[other].claimed:
        return False
    c.claim(owner, "sport", v)
    c.claim(other, "sport", v)
    a = c.say(owner, s1, c.rng.choice([f"I've been playing {v} on Sundays", f"I joined a {v} team at work"]))
    b = c.say(
        other, s2, c.rng.choice([f"you got me curious, I tried {v} too", f"I signed up for a {v} league as well"])
    )
    p, q = c.people[owner].name, c.people[other].name
    c.ask(
        c.rng.choice([f"Which sport do {p} and {q} both play?", f"What sport do both {q} and {p} play?"]),
        v,
        MULTI_HOP,
        [a, b],
    )
    return True


def _pet_moved(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    rel, name = c.relative(owner)
    breed, pet, city = c.pick(DOG_BREEDS), c.pick(PET_NAMES), c.pick(CITIES)
    if not c.claim(owner, f"pet:{rel}", pet) or not c.claim(owner, f"city:{rel}", city):
        return False
    a = c.say(owner, s1, f"my {rel} {name} adopted a {breed} named {pet}")
    b = c.say(
        owner, s2, c.rng.choice([f"{name} packed up and moved to {city}", f"{name} is relocating to {city} for work"])
    )
    c.ask(
        c.rng.choice([f"Which city does {pet} the {breed} live in now?", f"Where did the owner of {pet} move to?"]),
        city,
        MULTI_HOP,
        [a, b],
    )
    return True


def _friend_job(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    name, job = c.new_name(), c.pick(JOBS)
    task, their = c.rng.choice(
        [
            ("fix my leaky sink", "fix a leaky sink"),
            ("move my couch", "move a couch"),
            ("sort out my taxes", "sort out taxes"),
            ("build a bookshelf", "build a bookshelf"),
            ("repaint the fence", "repaint the fence"),
            ("set up my new router", "set up a router"),
            ("hang the shelves in my hallway", "hang some shelves"),
        ]
    )
    if not c.claim(owner, f"helped:{their}"):
        return False
    a = c.say(
        owner, s1, c.rng.choice([f"my friend {name} is a {job}", f"I met {name} at a party, a {job}, really funny"])
    )
    b = c.say(owner, s2, f"{name} came over to help me {task}")
    p = c.people[owner].name
    c.ask(f"What does the friend who helped {p} {their} do for a living?", job, MULTI_HOP, [a, b])
    return True


def _two_trips(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    if not c.claim(owner, "trips"):
        return False
    c1, c2 = c.pick(CITIES), c.pick(CITIES)
    a = c.say(owner, s1, c.rng.choice([f"I just got back from a work trip to {c1}", f"I spent a few days in {c1}"]))
    b = c.say(
        owner, s2, c.rng.choice([f"I'm writing this from {c2}, the trip has been great", f"I did a quick trip to {c2}"])
    )
    p = c.people[owner].name
    c.ask(
        c.rng.choice([f"Which cities has {p} travelled to?", f"What two cities did {p} visit?"]),
        f"{c1}, {c2}",
        MULTI_HOP,
        [a, b],
    )
    return True


def _gift(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    rel, name = c.relative(owner)
    thing, item = c.pick(THINGS_COLLECTED), c.pick(ITEMS)
    if not c.claim(owner, f"gift:{rel}"):
        return False
    a = c.say(
        owner,
        s1,
        c.rng.choice(
            [f"my {rel} {name} is obsessed with {thing} lately", f"{name}, my {rel}, has a room full of {thing}"]
        ),
    )
    b = c.say(
        owner,
        s2,
        c.rng.choice([f"I got {name} {item} for their birthday", f"for {name}'s birthday I went with {item}"]),
    )
    p = c.people[owner].name
    c.ask(f"What birthday present did {p} pick for the relative who loves {thing}?", _bare(item), MULTI_HOP, [a, b])
    return True


def _cook_teacher(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    name, city, dish = c.new_name(), c.pick(CITIES), c.pick(DISHES)
    a = c.say(
        owner,
        s1,
        c.rng.choice([f"my coworker {name} grew up in {city}", f"I met a guy from {city} at the gym, {name}"]),
    )
    b = c.say(
        owner,
        s2,
        c.rng.choice([f"{name} is teaching me to make {dish}", f"{name} showed me how to make proper {dish}"]),
    )
    p = c.people[owner].name
    c.ask(f"Where is the person teaching {p} to make {dish} from?", city, MULTI_HOP, [a, b])
    return True


def _vet(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    breed, pet = c.pick(DOG_BREEDS + CAT_BREEDS), c.pick(PET_NAMES)
    species = "dog" if breed in DOG_BREEDS else "cat"
    what = c.rng.choice(["had surgery on a paw", "swallowed a sock and needed the vet", "got stitches after a fight"])
    if f"pet:{species}" in c.people[owner].claimed or not c.claim(owner, f"vet:{what}"):
        return False
    c.claim(owner, f"pet:{species}", pet)
    a = c.say(
        owner, s1, c.rng.choice([f"I adopted a {breed} named {pet}", f"we have a new family member, {pet}, a {breed}"])
    )
    b = c.say(owner, s2, f"poor {pet} {what}, but is recovering")
    p = c.people[owner].name
    c.ask(f"What breed is {p}'s pet that {what}?", breed, MULTI_HOP, [a, b])
    return True


MULTI_FRAMES: list[Callable[[Conversation, int, int, int], bool]] = [
    _gift,
    _cook_teacher,
    _vet,
    _visit,
    _two_hobbies,
    _shared_sport,
    _pet_moved,
    _friend_job,
    _two_trips,
]

UPDATE_CLAIMS = {"car": "car", "trip": "trips", "paint": "act:paint", "major": "study", "puppy": "pet:dog"}
UPDATES = [
    (
        "car",
        CARS,
        "Which car did {X} end up choosing?",
        "I'm thinking about getting a {a}",
        "change of plans, I'm going with the {b} instead of the {a}",
    ),
    (
        "trip",
        CITIES,
        "Where did {X} finally decide to go on vacation?",
        "we're planning a vacation to {a}",
        "we scrapped {a}, the vacation is in {b} now",
    ),
    (
        "paint",
        COLOURS,
        "What colour did {X} decide on for the bedroom?",
        "I want to paint the bedroom {a}",
        "I changed my mind about the bedroom, it's going to be {b}, not {a}",
    ),
    (
        "major",
        SUBJECTS,
        "What did {X} finally decide to study?",
        "I'm leaning towards studying {a}",
        "I switched from {a} to {b}, it just fits me better",
    ),
    (
        "puppy",
        DOG_BREEDS,
        "What kind of dog did {X} decide to get?",
        "I've been reading up on {a}s, might get one",
        "no {a} after all, we're getting a {b}",
    ),
]


def _update(c: Conversation, owner: int, s1: int, s2: int) -> bool:
    kind, pool, q, first, second = c.rng.choice(UPDATES)
    if UPDATE_CLAIMS[kind] in c.people[owner].claimed or not c.claim(owner, f"update:{kind}"):
        return False
    c.claim(owner, UPDATE_CLAIMS[kind])
    a, b = c.pick(pool), c.pick(pool)
    c.say(owner, s1, first.format(a=a))
    it = c.say(owner, s2, second.format(a=a, b=b))
    c.single(owner, f"update:{kind}", q, b, it)
    return True


# Adversarial material ---------------------------------------------------------------------------------------------
WISHES = [
    ("go skydiving", "When did {X} go skydiving?", "last summer"),
    ("see the northern lights", "Where did {X} see the northern lights?", "Iceland"),
    ("learn to surf", "Where did {X} learn to surf?", "Bali"),
    ("run a marathon", "Which marathon did {X} run?", "the Boston Marathon"),
    ("open a little bakery", "What is the name of {X}'s bakery?", "Crumb & Co."),
    ("write a novel", "What is {X}'s novel about?", "a lighthouse keeper"),
    ("adopt a greyhound", "What did {X} name the greyhound?", "Rocket"),
    ("take a pottery class", "Where did {X} take a pottery class?", "the community center"),
    ("hike the Camino de Santiago", "When did {X} walk the Camino de Santiago?", "2021"),
    ("buy a sailboat", "What did {X} name the sailboat?", "Sea Biscuit"),
    ("visit Japan", "Which cities did {X} visit in Japan?", "Tokyo and Kyoto"),
    ("try scuba diving", "Where did {X} get scuba certified?", "Belize"),
]


def _never(c: Conversation, p: Person) -> tuple[str, str, str]:
    """A question about ``p`` on something never said: (question, the kind it would claim, a tempting answer)."""
    r = c.rng
    choice = r.randrange(8)
    if choice == 0:
        species = r.choice(["dog", "cat", "rabbit", "parrot", "lizard", "horse"])
        return f"What is the name of {p.name}'s {species}?", f"pet:{species}", r.choice(PET_NAMES)
    if choice == 1:
        rel = r.choice([x for x in FAMILY_STRICT if f"city:{x}" not in p.claimed] or ["godmother"])
        return f"Where does {p.name}'s {rel} live?", f"city:{rel}", r.choice(CITIES)
    if choice == 2:
        acts = [(a.key, v) for a in ACTIVITIES for v in a.vp if "{" not in v and f"act:{a.key}" not in p.claimed]
        key, vp = r.choice(acts) if acts else ("hike", "go hiking")
        return f"When did {p.name} {vp}?", f"act:{key}", fmt_day(c.day(r.randrange(c.n_sessions)))
    if choice == 3:
        return f"What instrument does {p.name} play?", "instrument", r.choice(INSTRUMENTS)
    if choice == 4:
        rel = r.choice([x for x in FAMILY_STRICT if f"job:{x}" not in p.claimed] or ["godmother"])
        return f"What does {p.name}'s {rel} do for a living?", f"job:{rel}", r.choice(JOBS)
    if choice == 5:
        return f"Which university did {p.name} graduate from?", "university", f"University of {r.choice(CITIES)}"
    if choice == 6:
        return f"What car does {p.name} drive?", "car", r.choice(CARS)
    return f"Which language is {p.name} learning?", "language", r.choice(LANGUAGES)


# The set ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Size:
    conversations: int = 10
    sessions: tuple[int, int] = (17, 24)
    turns: tuple[int, int] = (14, 26)  # the small-talk floor of a session; statements come on top


DEFAULT = Size()
QUICK = Size(conversations=2, sessions=(6, 7), turns=(12, 18))


def conversation(seed: int | str, index: int, size: Size = DEFAULT) -> dict[str, Any]:
    """Sample ``index`` of the set of ``seed`` (the same for every size with the same session range)."""
    rng = random.Random(f"metaclaw-multisession/{seed}/{index}")
    n_sessions = rng.randint(*size.sessions)
    c = Conversation(rng, f"gen-{seed}-{index + 1:02d}", n_sessions, size.turns)
    for s in range(n_sessions):
        plan: list[tuple[str, int]] = []
        for _ in range(rng.randint(1, 2)):
            plan.append(("activity", 0))
        for _ in range(rng.randint(1, 2)):
            plan.append(("temporal", 0))
        plan.append(("profile", 0))
        if rng.random() < 0.3:
            plan.append(("profile", 0))
        if rng.random() < 0.55:
            plan.append(("inference", 0))
        if s + 1 < n_sessions:
            for _ in range(rng.randint(1, 2)):
                plan.append(("multi", rng.randint(s + 1, n_sessions - 1)))
            if rng.random() < 0.25:
                plan.append(("update", rng.randint(s + 1, n_sessions - 1)))
        for _ in range(rng.randint(1, 3)):
            plan.append(("distractor", 0))
        for kind, later in plan:
            owner = rng.randrange(2)
            for _attempt in range(6):
                if kind == "activity":
                    ok = c.activity(owner, s, temporal=False)
                elif kind == "temporal":
                    ok = c.activity(owner, s, temporal=True)
                elif kind == "profile":
                    ok = c.profile(owner, s)
                elif kind == "inference":
                    ok = c.inference(owner, s)
                elif kind == "multi":
                    ok = c.multi(owner, s, later)
                elif kind == "update":
                    ok = c.update(owner, s, later)
                else:
                    c.distractor(owner, s)
                    ok = True
                if ok:
                    break
    answerable = sum(1 for q in c.qas if q.category != ADVERSARIAL)
    c.adversarial(max(1, round(answerable * 0.3)))
    return c.layout()


def generate(seed: int | str = 0, size: Size = DEFAULT) -> list[dict[str, Any]]:
    """The whole set: ``size.conversations`` samples in LoCoMo's layout."""
    return [conversation(seed, i, size) for i in range(size.conversations)]
