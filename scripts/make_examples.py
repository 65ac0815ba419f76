#!/usr/bin/env python3
"""Deterministically generate the bundled example datasets in leakcheck/data/.

Usage:
    python scripts/make_examples.py            # writes leakcheck/data/{collabllm_medium,...}
    python scripts/make_examples.py --out DIR  # write somewhere else

Only the standard library, pyarrow and json are used; there is no network access
and every random choice comes from a fixed seed, so re-running produces
byte-identical files (parquet files are written by pyarrow without timestamps).

Datasets (all text is synthetic; only the *schemas* mirror the real data):

* collabllm_medium/        verl-format reconstruction of the CollabLLM "medium"
                           document-writing RL split: 35 of 100 eval rows sit in
                           train with byte-identical prompt and reward target.
* healthbench_rubrics/     HealthBench-shaped rubric data (jsonl) with planted
                           rubric-bank / prompt leaks of three kinds, and two
                           decoys: the eval criteria with other points (not leaks).
* healthbench_rubrics_verl/ the same rubric data in a verl-rubric parquet layout.
* chat_small/              tiny GSM8K-style eval + OpenAI-chat train file for tests.

Each folder has an expected_leaks.json / expected.json listing the planted leaks.
"""
import argparse
import json
import os
import random
import re
import unicodedata
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20250611


# ---------------------------------------------------------------------------
# generic helpers
# ---------------------------------------------------------------------------
def toks(text):
    return re.findall(r"[a-z0-9']+", text.lower())


def ngram_set(tokens, n):
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def jaccard(a, b):
    u = a | b
    return len(a & b) / len(u) if u else 0.0


def cap(s):
    return s[:1].upper() + s[1:]


def fix_articles(s):
    return re.sub(r"\b([Aa]) (?=[aeiouAEIOU])(?!uni|use|eu|one)", r"\1n ", s)


def pluralize(n):
    if re.search(r"[^aeiou]y$", n):
        return n[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", n):
        return n + "es"
    return n + "s"


def third(v):
    if re.search(r"[^aeiou]y$", v):
        return v[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", v):
        return v + "es"
    return v + "s"


def past(v):
    if v.endswith("e"):
        return v + "d"
    if re.search(r"[^aeiou]y$", v):
        return v[:-1] + "ied"
    return v + "ed"


def write_parquet(table, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # pyarrow writes no timestamps; fixed options keep the bytes stable.
    pq.write_table(table, path, compression="zstd", compression_level=9,
                   use_dictionary=True, write_statistics=False, row_group_size=1 << 20)


def write_json(obj, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_jsonl(rows, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False))
            f.write("\n")


def write_text(text, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def split_list(s):
    return [w for w in s.split() if w]


ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def num_words(n):
    if n < 20:
        return ONES[n]
    t, o = divmod(n, 10)
    return TENS[t] + ("" if o == 0 else "-" + ONES[o])


# ===========================================================================
# 1. CollabLLM "medium" (document writing) reconstruction
# ===========================================================================
NOUNS = split_list("""
anchor archive badge balcony basket beacon blanket blueprint boiler bracket bridge brochure
bucket budget bulletin cabin cabinet calendar canal candle canvas carpet cartridge catalog
ceiling cellar channel chapter checklist chimney circuit clinic closet cluster compass corridor
cottage counter courtyard crate crystal cupboard curtain cushion dashboard deadline debate
diagram diary dialect drawer engine envelope fabric feather fence ferry festival fixture flag
folder fountain fragment furnace gadget garden garment gateway glacier greenhouse hallway
hammer harbor helmet hinge horizon invoice island journal kettle kitchen ladder lantern laptop
ledger lever license lighthouse magnet manual margin market meadow medal menu meter mirror
module monument motor mural museum napkin needle network notebook orchard oven paddle painting
pamphlet panel parcel pasture pavilion pebble pendulum pillar pipeline planet platform pocket
portal poster prototype pulley puzzle quarry receipt recipe reservoir ribbon rooftop saddle
satchel scaffold scooter sensor shovel sketch spreadsheet stadium staircase statue stove studio
summit tablet teapot telescope tent terrace thermostat ticket toolkit tractor trail trolley
trumpet tunnel turbine umbrella valley valve vessel village violin voucher wagon wallet
warehouse waterfall whistle window workshop worksheet zipper agreement ambition argument
assumption boundary campaign concept contract conversation decision detail discovery draft
effort element experiment factor feature habit insight instinct interview journey lesson
memory method milestone mistake moment motive pattern policy principle priority process
project promise proposal question reason remedy request ritual routine rule sequence shortcut
solution strategy system target theory tradition trend vision workflow orchard lagoon
""")
NOUNS = sorted(set(NOUNS))
ADJS = sorted(set(split_list("""
agile amber ancient angular ample brisk brittle bright broad bumpy calm candid careful casual
cheerful chilly civic clever coastal compact costly crisp crowded curious damp dense deliberate
delicate distant dusty eager early earnest elegant empty fragile frugal gentle gradual generous
glossy golden granular hasty hollow honest humble humid idle intricate jagged lavish lean lively
local lofty loyal lucid lunar mellow messy modest modular muddy narrow nimble noisy obscure odd
orderly pale patient plain polished practical precise proud quiet rapid rare rigid robust rough
rural rustic sandy scarce seasonal sharp shallow silent simple sleek slender slow sober solid
sparse spare stable stale steady steep sticky stubborn sturdy subtle sudden sunny swift tangled
tender thin tidy timid tiny tough tranquil tricky urban urgent vacant vague vast velvet vivid
warm weary wild windy wiry wooden young zealous hidden crooked faded frozen gilded hearty mild
misty neat novel oblique placid quaint ragged ruddy salty sheer smoky snug sour spicy stark stern
supple thrifty uneven upright woolly
""")))
ADVS = sorted(set(split_list("""
abruptly actively barely boldly briefly calmly carefully casually cautiously cheaply clearly
closely constantly deliberately eagerly easily evenly faintly firmly freely gently gladly
gradually happily hastily honestly loosely loudly mildly neatly nervously openly patiently
plainly politely precisely promptly quietly rapidly rarely readily roughly sharply silently
slowly smoothly softly steadily sternly strictly swiftly tightly unevenly urgently vaguely
warmly wisely quickly fondly oddly
""")))
VERBS = sorted(set(split_list("""
adjust anchor archive assemble assist audit balance borrow calibrate clarify collect compare
compile connect consult convert decode defend deliver design document elevate enlarge estimate
evaluate examine expand explore filter finance gather guide harvest highlight ignore improve
inspect invent launch measure mentor monitor navigate negotiate organize outline package polish
predict prepare preserve protect question recycle reduce refine repair replace reshape restore
review reward sample schedule simplify sketch soften sort steer stretch support sustain test
track transform translate treat update validate weigh welcome widen accept adapt admire
allocate alter analyze annotate approve arrange assess attach brighten capture celebrate
challenge change circulate classify clean coordinate correct create cultivate decorate
demonstrate describe discover display divide edit encourage endorse enhance explain fasten
follow frame illustrate imagine influence inform interpret introduce invite justify label
locate maintain manage mark motivate notice observe obtain order paint perform persuade
postpone practice praise present print produce promote pursue rank recall recommend record
redirect register reinforce relocate remind render rescue research resolve retain revise
rotate salvage secure separate share shelter signal solve stabilize strengthen study survey
tailor tolerate trace unlock visit warn
""")))
FIRST_NAMES = split_list("""
Priya Mateo Aisha Lars Mei Tomasz Ingrid Kofi Leila Rafael Yuki Amara Bram Noor Diego Hana
Emeka Sofia Jonas Farah Kenji Olga Tariq Lucia Anders Zainab Rohan Elif Marcus Ines Dmitri
Chiara Obi Sunita Gustavo Freya Hamid Rosa Viktor Ayumi Kwame Nadia Pablo Signe Arjun Lena
Musa Camille Theo Ngozi
""")
LAST_NAMES = split_list("""
Okafor Lindqvist Moreau Tanaka Haddad Novak Castillo Mensah Brennan Kowalski Ferreira Iyer
Halvorsen Adeyemi Rossi Nakamura Petrov Quispe Walsh Bergstrom Osei Delgado Fischer Kaur
Sato Nwosu Larsen Romero Abbasi Duarte Holm Mwangi Varga Ortiz Yilmaz Chen Keller Banda
Sorensen Aguilar Demir Mbeki Lund Navarro Pillai Strand Achebe Vidal Hartmann Suzuki
""")
CITIES = split_list("""
Tromso Porto Kisumu Valparaiso Tartu Ghent Oaxaca Dundee Ljubljana Nagano Hobart Tamale
Bergen Cusco Lublin Mysore Galway Aarhus Izmir Arequipa Bologna Kumasi Salzburg Cordoba
Tampere Asheville Halifax Dunedin Bilbao Brno Leipzig Kochi Mombasa Nantes Graz Pune Lyon
Bozeman Wollongong Trondheim Sapporo Eugene Whitby Zadar Antigua Cuenca Mendoza Windhoek
Duluth Lugano
""")
ROLES = split_list("""
logistics_coordinator retired_teacher ferry_captain night_nurse museum_guide bike_mechanic
school_librarian grant_writer orchard_manager sound_engineer park_ranger city_planner
hospital_porter wedding_caterer data_clerk beekeeper ceramicist locksmith radio_producer
tram_driver youth_coach hotel_concierge tax_advisor carpenter translator stage_manager
field_biologist dairy_farmer shop_owner dental_hygienist union_organizer bus_dispatcher
quilt_maker web_designer harbor_pilot chess_instructor florist forester tailor archivist
""")
ROLES = [r.replace("_", " ") for r in ROLES]
SEASONS = ["spring", "summer", "autumn", "winter", "month", "week", "quarter", "year"]
TUNITS = ["days", "weeks", "months", "seasons", "years", "shifts", "sessions", "rounds"]

DOC_INTRO = [
    "When it comes to {TOPIC}, most {AUD} expect a {A} {N}, not a {A} {N}.",
    "If you are one of the {AUD} curious about {TOPIC}, start with the {A} {N}.",
    "Few {Ns} matter more to {AUD} than {TOPIC}, and the {A} {N} shows why.",
    "This piece is about {TOPIC}, written with {AUD} and their {A} {Ns} in mind.",
    "Writing about {TOPIC} rarely earns a {A} {N}, so let us {V} the subject {ADV} for {AUD}.",
    "Picture a {A} {N} in {CITY}: that is where {TOPIC} begins for many {AUD}.",
    "Ask {AUD} about {TOPIC} and most will mention a {A} {N} or a {A} {N}.",
    "Nothing about {TOPIC} has to feel {A}, even for {AUD} with a {A} {N}.",
]
DOC_BODY = [
    "Most {Ns} {V} the {N} {ADV}, yet the {A} ones {V} it only after a {A} {N}.",
    "In {CITY}, {NAME} noticed that {PCT} of the {A} {Ns} {Ved} within {NUM} {TUNIT}.",
    "A {A} {N} can {V} a {N} faster than any {A} {N} would.",
    "{NAME}, a {ROLE}, {Ved} the {N} and then {Ved} a {A} {N} beside the {N}.",
    "When the {N} {V3} {ADV}, the {A} {N} tends to {V} each {N} around it.",
    "The {A} {N} is rarely about the {N}; it is about how you {V} the {A} {N}.",
    "If your {N} {V3} too {ADV}, {V} the {N} before the {A} {N} {V3}.",
    "Taking {TOPIC} seriously means you {V} the {N}, {V} the {N}, and {V} the {A} {N}.",
    "For {AUD}, any work on {TOPIC} often starts with a {A} {N} and a {A} {N}.",
    "Over {NUM} {TUNIT}, the count of {Ns} at the {A} {N} went from {NUM} to {NUM}.",
    "Nobody {V3} a {A} {N} by accident; it takes a {A} {N} and {A} {Ns}.",
    "Think of the {N} as a {A} {N} that {V3} the {N} {ADV}.",
    "The {N} by the {A} {N} {Ved} {ADV} while the {Ns} {Ved} {ADV}.",
    "Ask any {ROLE} in {CITY} and you will hear that {A} {Ns} {V} {A} {Ns}.",
    "Before you {V} the {N}, check whether the {N} {V3} the {A} {N}.",
    "{NAME} once {Ved} a {A} {N} with only a {N} and {NUM} {Ns}.",
    "What separates a {A} {N} from a {A} {N} is the {N} behind it.",
    "Every {A} {N} {V3} a {N}, and every {N} {V3} a {A} {N}.",
    "Start small: {V} one {N}, {V} one {N}, then {V} the {A} {N}.",
    "By the time the {N} {Ved}, the {A} {Ns} had already {Ved} the {N}.",
    "The lesson of {TOPIC} is simple: {V} the {N} and let the {A} {N} {V}.",
    "Researchers in {CITY} {Ved} {NUM} {A} {Ns} and {Ved} the {N} {ADV}.",
    "A {A} {N}, a {A} {N}, and a {A} {N} are enough to {V} most {Ns}.",
    "Those {Ns} {V} because the {N} {V3} the {A} {N} {ADV}.",
    "Here is the {A} part: the {N} {V3} only when the {N} feels {A}.",
    "You do not need a {A} {N} to {V} the {N}; a {A} {N} will {V} it.",
    "Later that {SEASON}, the {N} {Ved} and the {A} {N} {Ved} {ADV}.",
    "It is tempting to {V} the {N}, but {A} {Ns} usually {V} the {N} first.",
    "About {PCT} of the {Ns} we {Ved} still {V} a {A} {N}.",
    "According to {NAME}, a {ROLE} from {CITY}, the {N} should {V} the {A} {N}.",
    "The {A} {Ns} {V} {ADV}, so {V} the {N} and {V} the {N} {ADV}.",
    "Not every {N} {V3} the {N}, but the {A} ones {V} a {A} {N}.",
    "One {A} {N} in {CITY} {Ved} {NUM} {Ns} before the {SEASON} ended.",
    "Keep a {A} {N} near the {N}, and {V} it whenever the {N} {V3}.",
    "Our {N} {Ved} the {A} {N}, which {Ved} the {Ns} {ADV}.",
    "{NAME} likes to say that a {A} {N} {V3} more than a {A} {N}.",
    "Whether you {V} the {N} or {V} the {N}, the {A} {N} {V3} {ADV}.",
    "There is a {A} {N} behind every {A} {N}, and it {V3} the {Ns}.",
    "Give the {N} a {A} {N}, and the {Ns} will {V} {ADV}.",
    "{NAME} and {NAME} {Ved} a {A} {N} after the {N} {Ved} {ADV}.",
]
DOC_CLOSE = [
    "So {V} the {N}, {V} the {A} {N}, and give {TOPIC} a {A} {N} this {SEASON}.",
    "In the end, {AUD} who {V} the {N} {ADV} get the most out of {TOPIC}.",
    "Take one {A} step today: {V} the {N} and watch what {TOPIC} can {V}.",
    "If nothing else, remember that a {A} {N} {V3} every {N} you {V}.",
    "The {A} {N} will wait, but work on {TOPIC} goes best when you {V} it {ADV}.",
]

SUBJECTS = [
    "urban beekeeping", "sourdough baking", "remote team onboarding", "municipal composting",
    "home solar panels", "community theater fundraising", "watercolor landscapes",
    "bicycle commuting", "small-scale mushroom farming", "personal budgeting apps",
    "rescue dog adoption", "indoor rock climbing", "podcast production", "electric cargo bikes",
    "tiny house living", "backyard chickens", "open-source software licensing",
    "museum volunteering", "night-sky photography", "minimalist wardrobes",
    "public library makerspaces", "seed saving", "heat pump retrofits", "trail running",
    "language exchange meetups", "vintage synthesizer repair", "school garden programs",
    "neighborhood tool libraries", "freelance bookkeeping", "kayak touring", "craft cider making",
    "citizen science bird counts", "accessible web design", "growing microgreens",
    "the four-day work week", "secondhand furniture restoration", "home coffee roasting",
    "rainwater harvesting", "chess clubs for seniors", "pottery wheel throwing", "e-bike safety",
    "food truck permits", "quilting circles", "cold-water swimming", "stand-up comedy open mics",
    "repair cafes", "home fermentation", "wildfire preparedness", "workplace carpooling programs",
    "community radio stations", "mentorship for new nurses", "urban tree planting",
    "pet first aid", "historic home preservation", "farmers markets", "table tennis leagues",
    "camper van conversions", "personal knowledge management", "adult literacy tutoring",
    "sign language classes", "zero-waste grocery shopping", "board game cafes",
    "solo travel in retirement", "welding apprenticeships", "sleep habits for shift workers",
    "cross-country skiing", "amateur astronomy clubs", "hydroponic lettuce",
    "wedding speech writing", "textbook swap programs", "coastal cleanup drives",
    "digital photo archiving", "family history research", "beginner woodturning",
    "public speaking for engineers", "indoor air quality", "first marathons",
    "mobile veterinary clinics", "flood insurance", "senior fitness classes", "kombucha brewing",
    "robotics clubs for teens", "cybersecurity habits for small offices",
    "home recording studios", "community fridges", "ceramic glaze chemistry", "wild foraging",
    "historic walking tours", "bike repair co-ops", "rural broadband cooperatives",
    "homeschool co-ops", "urban sketching", "kitchen knife sharpening",
    "grant writing for nonprofits", "emergency savings funds", "winter cycling", "green roofs",
    "drone photography rules", "clay bread ovens", "plant-based meal prep",
    "esports in high schools", "election volunteering", "thrift store flipping",
    "youth soccer coaching", "mental health first aid", "pop-up bookshops",
    "bird-friendly windows", "low-light houseplants", "canal boat holidays",
    "sea kayak rescue skills", "vertical vegetable gardens", "community choirs",
    "secondhand camera gear", "allotment gardening", "dry stone walling",
]
ANGLES = [
    "{s}", "getting started with {s}", "common mistakes in {s}", "the hidden costs of {s}",
    "why {s} deserves a second look", "{s} on a tight budget", "lessons from a year of {s}",
    "how {s} is changing", "myths and facts about {s}", "{s} for complete beginners",
    "the case against {s}", "making {s} more inclusive", "a weekend guide to {s}",
    "the history behind {s}", "safety basics for {s}", "what nobody tells you about {s}",
]
DOC_TYPES = [
    "blog post", "newsletter article", "op-ed", "press release", "short speech",
    "magazine feature", "short essay", "explainer", "opinion column", "brochure text",
    "listicle", "personal essay", "FAQ page", "community bulletin piece", "LinkedIn article",
    "welcome letter", "website landing page", "radio script",
]
AUDIENCES = [
    "first-time homeowners", "retired engineers", "busy parents of toddlers",
    "high school juniors", "small business owners", "city council members",
    "new college students", "nurses working night shifts", "rural librarians",
    "hobbyist photographers", "apartment renters", "volunteer firefighters",
    "families new to the area", "software developers", "skeptical taxpayers",
    "middle school teachers", "long-haul truck drivers", "art students", "young professionals",
    "retirees on fixed incomes", "local journalists", "seasoned gardeners", "tourism board staff",
    "parents of teenagers", "nonprofit board members", "graduate students", "startup founders",
    "people with limited mobility", "weekend hikers", "restaurant owners", "church congregations",
    "union members", "pet owners", "landlords of small buildings", "amateur athletes",
    "grandparents raising grandchildren", "warehouse workers", "farmers", "museum members",
    "community college instructors", "book club members", "first-year teachers",
    "data analysts", "hospital administrators", "neighborhood association members",
    "retail employees", "bike commuters", "exchange students", "public health workers",
    "craft brewers",
]
REQUIREMENTS = [
    "open with a surprising fact", "include a short personal anecdote",
    "mention at least one common misconception", "end with a clear call to action",
    "keep the tone warm and conversational", "avoid technical jargon",
    "cite one concrete number", "suggest a catchy title", "give three practical tips",
    "address the cost question directly", "acknowledge the main objection honestly",
    "use short paragraphs", "quote an imagined local expert", "compare two different approaches",
    "finish with a memorable closing line", "explain one key term in plain words",
    "stay optimistic without overselling", "name a realistic first step for this week",
    "reference the local climate", "speak to the reader as you", "include a brief history",
    "describe one failure and what it taught", "keep sentences punchy",
    "add a light touch of humor", "highlight safety considerations",
    "point readers to further resources", "avoid sounding like an advertisement",
    "frame it around one vivid scene", "number the steps", "emphasize community benefits",
    "close with a short checklist", "speak to people who gave up before",
    "mention the time commitment", "contrast expectations with reality",
    "touch on environmental impact", "include one rhetorical question", "stay politically neutral",
    "recommend one useful tool", "suit non-native English readers", "use inclusive language",
    "mention seasonal timing", "open with a question", "avoid exclamation marks",
    "add a mini FAQ", "state the key idea up front", "give an example involving a family",
    "explain how to measure progress", "end on a hopeful note", "avoid cliches",
    "sound confident but humble", "address accessibility", "tie it to an upcoming local event",
    "describe sensory details", "offer a budget-friendly alternative", "include a success story",
    "invite readers to share experiences", "aim for an eighth-grade reading level",
    "flag a typical beginner mistake", "be upfront about risks", "use vivid verbs",
    "include a pull quote", "offer a simple rule of thumb", "mention permits briefly",
    "circle back to the opening", "write as we rather than I", "keep headings short",
]
PROMPT_OPENERS = [
    "Write a {dtype} about {topic} for {aud}.",
    "Could you draft a {dtype} on {topic}? The readers are {aud}.",
    "I need a {dtype} that introduces {aud} to {topic}.",
    "Please put together a {dtype} explaining {topic} to {aud}.",
    "Help me write a {dtype} for {aud} on {topic}.",
    "Can you write a {dtype} about {topic}? It's aimed at {aud}.",
    "Draft a {dtype} aimed at {aud} that covers {topic}.",
    "I'm looking for a {dtype} on {topic}, written with {aud} in mind.",
    "Compose a {dtype} about {topic}; the intended readers are {aud}.",
    "We need a {dtype} for {aud} focused on {topic}.",
    "Write me a {dtype} that makes {topic} interesting to {aud}.",
    "Produce a {dtype} on {topic} targeted at {aud}.",
    "Could you help me with a {dtype}? Topic: {topic}. Audience: {aud}.",
    "Put together a {dtype} that walks {aud} through {topic}.",
    "My goal is a {dtype} that persuades {aud} to care about {topic}.",
]
LENGTH_PHRASES = ["about {n} words", "roughly {n} words", "under {n} words",
                  "between {n} and {m} words", "no more than {n} words"]
LENGTH_SENTS = ["Keep it to {len}.", "Length should be {len}.", "Aim for {len}.",
                "It should run {len}.", "Target length: {len}."]
REQ_FRAMES = [
    "Please {r0}, {r1}, and {r2}.",
    "A few requirements: {r0}; {r1}; {r2}.",
    "It should {r0} and {r1}. Also, {r2}.",
    "Make sure to {r0}. I'd also like you to {r1}.",
    "Key points: {R0}. {R1}. {R2}. {R3}.",
    "Two must-haves: {r0}, and {r1}.",
    "Requirements, in order of importance: {r0}, {r1}, {r2}.",
    "Do {r0} and {r1}, but please also {r2} and {r3}.",
]
ORG_A = split_list("""Maple Harbor Cedar Riverside Northgate Juniper Granite Willow Bluebell
Lantern Foxglove Millbrook Saltmarsh Kestrel Ironwood Sunfield Oakridge Thistle Copperline
Heron Larkspur Pinecrest Driftwood Alder Tidewater""")
ORG_T = ["Co-op", "Collective", "Society", "Association", "Studio", "Network", "Alliance",
         "Workshop", "Club", "Foundation", "Project", "Guild", "Initiative", "Trust", "Center"]
VENUES = ["spring newsletter", "website", "monthly bulletin", "annual report", "member magazine",
          "local paper column", "welcome packet", "blog", "quarterly zine"]
EVENTS = ["town hall", "open house", "fundraising dinner", "orientation day",
          "regional conference", "staff retreat", "volunteer night", "community fair"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
PROMPT_CONTEXTS = [
    "It's for the {venue} of {org} in {city}.",
    "I volunteer with {org} in {city}, and we want more {aud2} involved.",
    "This goes out to about {k} subscribers on the {org} mailing list.",
    "My manager at {org} wants something to share at our {event}.",
    "We're launching a new program at {org} in {month}.",
    "I'll be reading it aloud at a {event} in {city} on {weekday}.",
    "Our team at {org} has tried twice already and the drafts felt flat.",
    "The piece will sit next to photos from {city}.",
]
PROMPT_CLOSERS = [
    "Thanks in advance!", "A solid first draft is fine; I'll edit it myself.",
    "Please don't make it sound robotic.", "I'll share it with my team on {weekday}.",
    "Let me know if anything is unclear.", "Appreciate the help.",
    "Feel free to suggest a better angle if you see one.", "", "", "",
]

COLLAB_SYSTEM = (
    "You are a collaborative writing assistant. Your goal is not only to answer the current "
    "request but to help the user reach a document they are genuinely happy with.\n\n"
    "Read each request carefully and infer the intent behind it. When key details such as the "
    "audience, tone, length or purpose are missing or ambiguous, ask one short, specific "
    "clarifying question instead of guessing. When the request is clear, produce a complete "
    "draft and then briefly offer one or two concrete ways it could be adjusted.\n\n"
    "Keep your messages focused and easy to act on, avoid needless repetition, and match the "
    "user's tone. If you are unsure about a fact, say so plainly rather than inventing details."
)


class CollabGen:
    def __init__(self, rng):
        self.rng = rng
        self.doc_grams = {}     # 8-gram -> task number
        self.prompt_grams = {}  # 10-gram -> task number
        self.prompt_tri = []    # list of 3-gram sets of accepted prompts
        self.used_topics = set()

    # -- documents --------------------------------------------------------
    def fill(self, template, topic, aud):
        r = self.rng

        def slot(m):
            k = m.group(1)
            if k == "N":
                return r.choice(NOUNS)
            if k == "Ns":
                return pluralize(r.choice(NOUNS))
            if k == "A":
                return r.choice(ADJS)
            if k == "V":
                return r.choice(VERBS)
            if k == "V3":
                return third(r.choice(VERBS))
            if k == "Ved":
                return past(r.choice(VERBS))
            if k == "ADV":
                return r.choice(ADVS)
            if k == "NAME":
                return r.choice(FIRST_NAMES) + " " + r.choice(LAST_NAMES)
            if k == "CITY":
                return r.choice(CITIES)
            if k == "ROLE":
                return r.choice(ROLES)
            if k == "NUM":
                return str(r.randint(3, 96))
            if k == "PCT":
                return "%d percent" % r.randint(11, 89)
            if k == "TUNIT":
                return r.choice(TUNITS)
            if k == "SEASON":
                return r.choice(SEASONS)
            if k == "TOPIC":
                return topic
            if k == "Topic":
                return cap(topic)
            if k == "AUD":
                return aud
            raise KeyError(k)

        s = re.sub(r"\{(\w+)\}", slot, template)
        return cap(fix_articles(s))

    def sentence(self, pool, topic, aud, task_no, local):
        for _ in range(200):
            s = self.fill(self.rng.choice(pool), topic, aud)
            g = ngram_set(toks(s), 8)
            if any(x in self.doc_grams or x in local for x in g):
                continue
            local.update(g)
            return s
        raise RuntimeError("could not find a fresh sentence")

    def document(self, topic, aud, task_no):
        r = self.rng
        while True:
            target = r.randint(170, 360)
            local = set()
            sents = [self.sentence(DOC_INTRO, topic, aud, task_no, local)]
            n_words = len(sents[0].split())
            while n_words < target:
                s = self.sentence(DOC_BODY, topic, aud, task_no, local)
                sents.append(s)
                n_words += len(s.split())
            sents.append(self.sentence(DOC_CLOSE, topic, aud, task_no, local))
            paras, i = [], 0
            while i < len(sents):
                k = r.randint(3, 5)
                paras.append(" ".join(sents[i:i + k]))
                i += k
            doc = "\n\n".join(paras)
            wc = len(doc.split())
            grams = ngram_set(toks(doc), 8)
            if 150 <= wc <= 400 and not any(g in self.doc_grams for g in grams):
                for g in grams:
                    self.doc_grams[g] = task_no
                return doc

    # -- prompts ----------------------------------------------------------
    def prompt(self, task_no):
        r = self.rng
        for _ in range(5000):
            subj = r.choice(SUBJECTS)
            angle = r.choice(ANGLES)
            if (subj, angle) in self.used_topics:
                continue
            topic = angle.format(s=subj)
            aud = r.choice(AUDIENCES)
            dtype = r.choice(DOC_TYPES)
            parts = [fix_articles(r.choice(PROMPT_OPENERS).format(dtype=dtype, topic=topic, aud=aud))]
            extra = []
            if r.random() < 0.7:
                org = "the %s %s %s" % (r.choice(ORG_A), r.choice(ORG_A), r.choice(ORG_T))
                while True:
                    aud2 = r.choice(AUDIENCES)
                    if aud2 != aud:
                        break
                extra.append(r.choice(PROMPT_CONTEXTS).format(
                    venue=r.choice(VENUES), org=org, city=r.choice(CITIES), aud2=aud2,
                    k=r.choice([150, 300, 450, 800, 1200, 2500, 4000]),
                    event=r.choice(EVENTS), month=r.choice(MONTHS), weekday=r.choice(WEEKDAYS)))
            n = r.choice(range(180, 401, 20))
            ln = r.choice(LENGTH_PHRASES).format(n=n, m=n + 100)
            extra.append(r.choice(LENGTH_SENTS).format(len=ln))
            reqs = r.sample(REQUIREMENTS, 4)
            frame = r.choice(REQ_FRAMES)
            kw = {}
            for i, q in enumerate(reqs):
                kw["r%d" % i] = q
                kw["R%d" % i] = cap(q)
            extra.append(frame.format(**kw))
            r.shuffle(extra)
            parts += extra
            closer = r.choice(PROMPT_CLOSERS).format(weekday=r.choice(WEEKDAYS))
            if closer:
                parts.append(closer)
            text = " ".join(parts)
            wc = len(text.split())
            if not 40 <= wc <= 120:
                continue
            t = toks(text)
            g10 = ngram_set(t, 10)
            if any(g in self.prompt_grams for g in g10):
                continue
            tri = ngram_set(t, 3)
            if any(jaccard(tri, o) >= 0.2 for o in self.prompt_tri):
                continue
            self.used_topics.add((subj, angle))
            self.prompt_tri.append(tri)
            for g in g10:
                self.prompt_grams[g] = task_no
            return text, topic, aud
        raise RuntimeError("could not find a fresh prompt")


def make_collabllm(out_dir):
    rng = random.Random(SEED + 1)
    n_eval, n_train, n_leak = 100, 400, 35
    n_tasks = n_eval + (n_train - n_leak)
    gen = CollabGen(rng)
    task_ids = ["medium-%05d" % k for k in rng.sample(range(2000), n_tasks)]
    tasks = []
    for k in range(n_tasks):
        user, topic, aud = gen.prompt(k)
        doc = gen.document(topic, aud, k)
        tasks.append({"task_id": task_ids[k], "user": user, "doc": doc})

    eval_tasks = tasks[:n_eval]
    train_only = tasks[n_eval:]
    leaked_eval = sorted(rng.sample(range(n_eval), n_leak))
    train_slots = rng.sample(range(n_train), n_leak)          # scattered positions
    leak_pos = dict(zip(leaked_eval, train_slots))
    slot_to_eval = {v: k for k, v in leak_pos.items()}

    train_rows, it = [], iter(train_only)
    for pos in range(n_train):
        t = eval_tasks[slot_to_eval[pos]] if pos in slot_to_eval else next(it)
        train_rows.append(t)

    def prompt_of(t):
        return [{"role": "system", "content": COLLAB_SYSTEM},
                {"role": "user", "content": t["user"]}]

    msg = pa.struct([("role", pa.string()), ("content", pa.string())])
    train_schema = pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(msg)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64()),
                                  ("task_id", pa.string())])),
    ])
    eval_schema = pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(msg)),
        ("ability", pa.string()),
        ("reward_model", pa.string()),   # JSON string, as in some public uploads
        ("extra_info", pa.string()),     # JSON string
    ])
    train_py = {
        "data_source": ["collabllm/medium"] * n_train,
        "prompt": [prompt_of(t) for t in train_rows],
        "ability": ["writing"] * n_train,
        "reward_model": [{"style": "rule", "ground_truth": t["doc"]} for t in train_rows],
        "extra_info": [{"split": "train", "index": i, "task_id": t["task_id"]}
                       for i, t in enumerate(train_rows)],
    }
    eval_py = {
        "data_source": ["collabllm/medium"] * n_eval,
        "prompt": [prompt_of(t) for t in eval_tasks],
        "ability": ["writing"] * n_eval,
        "reward_model": [json.dumps({"style": "rule", "ground_truth": t["doc"]},
                                    ensure_ascii=False) for t in eval_tasks],
        "extra_info": [json.dumps({"split": "test", "index": i, "task_id": t["task_id"]},
                                  ensure_ascii=False) for i, t in enumerate(eval_tasks)],
    }
    d = os.path.join(out_dir, "collabllm_medium")
    write_parquet(pa.Table.from_pydict(train_py, schema=train_schema), os.path.join(d, "train.parquet"))
    write_parquet(pa.Table.from_pydict(eval_py, schema=eval_schema), os.path.join(d, "eval.parquet"))
    write_json({
        "eval_index_leaked": leaked_eval,
        "train_rows": {str(k): leak_pos[k] for k in leaked_eval},
        "match": "byte-identical system prompt, user prompt and reward_model.ground_truth",
        "n_eval": n_eval, "n_train": n_train,
    }, os.path.join(d, "expected_leaks.json"))
    write_text(COLLAB_README.format(n_leak=n_leak, n_eval=n_eval, n_train=n_train),
               os.path.join(d, "README.md"))
    return leaked_eval, leak_pos


COLLAB_README = """\
# collabllm_medium: a reconstructed train/eval leak

This example reconstructs the shape of the leak found in the CollabLLM "medium"
document-writing RL benchmark as prepared for verl. In that data, **{n_leak} of the
{n_eval} eval prompts also appear in train, with byte-identical reward targets**
(the reference document used as `reward_model.ground_truth`). A model trained on
train has therefore already been optimised against the exact references it is
later scored on, so the published improvement on this task (BLEU 0.4491 -> 0.4827)
cannot be taken at face value: part or all of it may be memorisation of
references rather than better collaboration.

The likely cause is splitting per conversation turn instead of per conversation:
the multiturn source has one row per turn, each row carries the same single-turn
task and the same reference completion, and a random row-level train/test split
sends different turns of one conversation to both sides. Deduplicating on the full
chat prompt does not help, because the chat history differs from turn to turn.
Splitting by conversation/task id (or deduplicating on the task and its target)
avoids it.

## What is in this folder

* `train.parquet`: {n_train} rows; `eval.parquet`: {n_eval} rows; verl RL schema:
  * `data_source`: `"collabllm/medium"`
  * `prompt`: list of `{{role, content}}`: one system message (the same for every row)
    and one user message asking for a document
  * `ability`: `"writing"`
  * `reward_model`: `{{style: "rule", ground_truth: <reference document>}}`
  * `extra_info`: `{{split, index, task_id}}`
* In **eval.parquet, `reward_model` and `extra_info` are JSON strings**, not structs
  (some public uploads are stored like that); in train.parquet they are nested
  structs. A checker has to handle both.
* `expected_leaks.json`: the {n_leak} leaked eval rows (`extra_info.index`) and, for
  each, the train row number (0-based) holding the identical copy.

Leaked rows were chosen by seeded random choice and sit at scattered positions in
train; they keep their `task_id` (as a per-turn split would). Every other eval row
shares no prompt, no reference document and no 8-word passage with any train row;
prompts of distinct tasks are built from different templates, topics, audiences
and requirements so that none are near-duplicates. All rows share the same system
prompt by design (as in the real data), so a checker must not count that as a leak.

## Synthetic text, real schema

All text (system prompt, requests, reference documents) is synthetic and was
generated by `scripts/make_examples.py` from fixed word and template banks with a
fixed seed; reference documents are deliberately word-salad-like so that distinct
documents share almost no text. Only the schema and the leak pattern mirror the
real data. Regenerate with:

    python scripts/make_examples.py
"""


# ===========================================================================
# 2./3. HealthBench-shaped rubric data (jsonl) and its verl-rubric variant
# ===========================================================================
# name | who | duration class (A acute / C chronic) | question kind (s symptom / d diagnosis) |
# theme | symptom (wording A) | symptom (wording B) | red flags | home care | clinician options |
# context questions | harmful statements (negative criteria)
# `who` is a persona code, optionally with an age range: a any adult, m man, f woman,
# o older adult, M older man, c child, i infant (age in months), t teen, p pregnant woman.
HB_TOPICS = """
migraine | a | C | s | hedging | throbbing one-sided headaches with nausea | pounding pain on a single side of the head that comes with queasiness | a sudden headache that reaches full intensity within a minute ; a headache together with fever and a stiff neck | rest in a dark, quiet room when an attack starts ; keep a diary of possible triggers such as skipped meals or short sleep | triptan medication for acute attacks ; preventive medication if attacks happen several times a month | whether visual disturbances come before the pain ; how many days each month pain relievers are being taken | Recommends daily opioid painkillers as the main way to control the headaches. ; States that the headaches are definitely caused by a brain tumor.
gout | m | A | s | hedging | a hot, swollen big toe joint that hurts to touch | an inflamed, reddened first toe so tender that even a bedsheet is painful | fever with a hot joint, which could mean a joint infection ; redness spreading up the foot with chills | rest and raise the affected foot ; cut back on alcohol, especially beer, and on sugary drinks | anti-inflammatory medicine or colchicine started early in the flare ; a uric acid blood test once the flare settles | whether similar attacks have happened before ; how much alcohol and red meat are consumed each week | Advises drinking as little fluid as possible to reduce the swelling. ; Claims gout can be cured permanently with one course of antibiotics.
plantar fasciitis | a | C | s | communication | sharp heel pain with the first steps in the morning | a stabbing ache beneath the heel on getting out of bed | heel pain after a fall with inability to bear weight ; numbness or tingling spreading through the foot | stretch the calf and the arch of the foot several times a day ; wear cushioned, supportive shoes instead of walking barefoot on hard floors | arch supports or heel cups ; referral to a physiotherapist if the pain lasts beyond a few months | whether running or standing time recently increased ; what footwear is worn on most days | Recommends several weeks of complete bed rest for the heel. ; Advises repeated steroid injections as the first treatment to try.
kidney stones | a | A | s | emergency_referrals | waves of severe pain in the side that move toward the groin | cramping flank agony radiating down to the lower belly in surges | fever or shaking chills alongside the flank pain ; being unable to keep fluids down or to pass urine | drink enough water to keep the urine pale ; strain the urine to catch any stone for analysis | pain relief plus medicine that helps a stone pass ; a CT scan or ultrasound to check the size and position of the stone | whether there is blood in the urine ; whether kidney stones have happened before | Advises waiting at home despite fever and severe flank pain. ; States that every kidney stone needs surgery.
urinary tract infection | f | A | s | global_health | burning when peeing and needing to go every few minutes | stinging during urination plus a constant urge to empty the bladder | fever, back pain or vomiting that could signal a kidney infection ; urinary symptoms during pregnancy | drink fluids regularly through the day ; avoid holding in urine for long stretches | a short antibiotic course after assessment ; a urine test to confirm the infection | whether there is fever or pain in the back ; whether there is any chance of pregnancy | Presents cranberry juice as a guaranteed cure that makes a clinician visit unnecessary. ; Suggests taking leftover antibiotics from an earlier illness.
shingles | o | A | s | emergency_referrals | a painful band of blistering rash on one side of the chest | a stripe of burning blisters wrapping around half the torso | a rash close to the eye or on the tip of the nose ; confusion or a severe headache alongside the rash | keep the rash clean, dry and loosely covered ; use cool compresses to ease the burning | antiviral tablets started within about three days of the rash appearing ; the shingles vaccine after recovery to lower the chance of another episode | when the rash first appeared ; whether the immune system is weakened by illness or medication | States that a person with shingles cannot pass the virus to anyone. ; Advises popping the blisters so they heal faster.
iron-deficiency anemia | f | C | s | complex_responses | constant tiredness, pale skin and getting breathless on stairs | ongoing exhaustion with a washed-out complexion and puffing after one flight of steps | chest pain or fainting spells with the tiredness ; black, tarry or bloody stools | eat iron-rich foods such as lentils, beans and red meat ; take iron tablets with a source of vitamin C rather than with tea or coffee | a full blood count and ferritin test ; a search for a source of blood loss such as heavy periods | how heavy the menstrual periods are ; whether a vegetarian or vegan diet is followed | Recommends high-dose iron tablets indefinitely without any blood test. ; Dismisses the tiredness as purely psychological.
hypothyroidism | a | C | d | complex_responses | an underactive thyroid | low thyroid hormone levels (hypothyroidism) | extreme drowsiness, a very slow pulse or feeling very cold ; a rapidly growing lump in the neck | take the thyroid tablet at the same time each morning on an empty stomach ; keep a short symptom log to bring to follow-up visits | levothyroxine with the dose adjusted by repeat blood tests ; a TSH check about six to eight weeks after any dose change | whether calcium or iron supplements are taken close to the thyroid tablet ; whether anyone in the family has thyroid disease | Suggests replacing the prescribed thyroid tablet with iodine supplements. ; Advises stopping thyroid medication once the symptoms improve.
type 2 diabetes | a | C | d | health_data_tasks | type 2 diabetes | adult-onset high blood sugar, the type 2 kind | very high glucose readings with vomiting or confusion ; a foot wound that is not healing | build meals around vegetables, whole grains and lean protein ; aim for regular activity such as brisk walking most days | metformin as a usual first medicine ; an HbA1c test every three to six months | what the most recent HbA1c result was ; whether eye and foot checks have been done | States that cinnamon supplements alone can reverse diabetes. ; Recommends cutting out all carbohydrates completely.
high blood pressure | a | C | d | health_data_tasks | high blood pressure | hypertension found at a routine check | a reading above 180/120 with chest pain, breathlessness or vision changes ; sudden weakness on one side of the body | cut down on salt and processed food ; check blood pressure at home and log the readings | blood pressure medicine such as an ACE inhibitor or a calcium channel blocker ; blood and urine tests to check kidney function | what blood pressure numbers the home cuff has shown lately ; whether they smoke or drink alcohol | Advises stopping blood pressure medicine on days when they feel well. ; Claims that a single high reading confirms lifelong hypertension.
childhood asthma | c | C | s | context_seeking | wheezing and a night-time cough that gets worse after running around | whistling breath plus coughing in bed, worse following active play | struggling to speak in full sentences or lips turning blue ; the reliever inhaler not helping or being needed every few hours | use the inhaler with a spacer ; keep away from cigarette smoke | a preventer inhaler for regular use ; a written asthma action plan from the doctor | how often the reliever inhaler is needed each week ; whether there is eczema or hay fever in the family | Recommends cough syrup as the main asthma treatment. ; Advises stopping the preventer inhaler as soon as the wheeze settles.
croup | c | A | s | emergency_referrals | a barking, seal-like cough and a hoarse voice at night | a harsh cough that sounds like a seal plus a croaky voice after dark | a high-pitched noisy breath at rest ; drooling, trouble swallowing or the skin between the ribs pulling in | stay calm and sit upright ; have small, frequent drinks | a single dose of steroid medicine given by a clinician ; a check of breathing effort by a doctor | whether there is noisy breathing even when calm ; how high the temperature has been | Recommends giving cough suppressants to stop the barking. ; Advises sitting in a steamy closed bathroom for hours as the only treatment.
middle ear infection | c | A | s | hedging | ear pain, tugging at one ear and a fever | an aching ear that keeps getting pulled at, along with a raised temperature | swelling or redness behind the ear ; a stiff neck or unusual drowsiness | take children's paracetamol or ibuprofen at the dose on the label for pain ; rest and sip fluids | watchful waiting for two to three days before antibiotics in many cases ; an antibiotic if symptoms persist or are severe | whether fluid is draining from the ear ; how many ear infections there have been in the past year | Suggests putting olive oil or garlic drops into an ear that may have a burst eardrum. ; States that every ear infection must be treated with antibiotics straight away.
fever in a young infant | i | A | s | emergency_referrals | a temperature of 38.3 degrees Celsius | a thermometer reading above thirty-eight degrees | any fever in a baby under three months old ; refusal to feed, a weak cry or a floppy body | stay lightly dressed rather than bundled up ; keep taking breast milk or formula | urgent assessment with blood and urine tests in young babies ; a check for a urinary or blood infection | exactly how old the baby is in weeks ; how many wet nappies there have been in the last day | Advises waiting until morning to see if the fever passes in a baby under three months. ; Recommends giving aspirin to bring the temperature down.
infant colic | i | C | s | communication | hours of inconsolable crying every evening | long stretches of crying in the late afternoon that nothing soothes | crying with fever, vomiting or blood in the stool ; poor weight gain or fewer wet nappies | be soothed with gentle rocking, white noise or a warm bath ; be put down safely in the cot while the carer takes a short break when overwhelmed | a check-up to rule out reflux, milk allergy or infection ; a weight and growth review by the health visitor or pediatrician | how many hours a day the crying lasts ; how the parents are coping and whether they have support | Suggests giving the baby herbal teas or honey to settle the crying. ; Dismisses the parent's exhaustion as an overreaction.
hand, foot and mouth disease | c | A | s | global_health | mouth sores and a spotty rash on the hands and feet | painful blisters inside the mouth with red spots across the palms and soles | signs of dehydration such as very little urine ; jerky movements, limb weakness or unusual sleepiness | have cool, soft foods and plenty of fluids ; wash hands often to limit spread to others | pain relief suited to the child's age ; a review if drinking stops | whether enough fluid is being taken and urine passed ; whether others at nursery or school are unwell | Recommends antibiotics to clear the rash. ; Advises bursting the blisters with a needle.
head lice | c | C | s | communication | an itchy scalp and tiny moving specks in the hair | constant head-scratching with little crawling creatures visible near the roots | a scalp that is red, swollen or oozing ; swollen glands in the neck | have wet hair combed with a fine-toothed lice comb every few days ; get everyone in the household checked | a lice treatment lotion used exactly as directed ; a repeat treatment after about a week | whether treatments have already been tried ; whether other family members are scratching | Recommends pouring kerosene or petrol on the hair. ; Advises shaving the head as the only option.
atopic eczema | c | C | s | complex_responses | dry, itchy patches in the elbow creases and behind the knees | rough, scratchy skin in the bends of the arms and legs | weeping, crusted or rapidly spreading skin ; clusters of painful punched-out blisters | apply a thick emollient several times a day ; use soap substitutes and avoid fragranced products | a mild steroid cream for flares used as directed ; referral to a dermatologist if the skin does not respond | which products are used for bathing and laundry ; whether sleep is disturbed by itching | States that steroid creams should never be used on children. ; Recommends cutting out all dairy without medical advice.
acne | t | C | s | communication | spots and painful lumps on the face and back | pimples and sore bumps across the forehead, cheeks and upper back | painful deep cysts that leave scars ; low mood or withdrawal linked to the skin | wash twice daily with a gentle cleanser ; avoid picking or squeezing the spots | benzoyl peroxide or a topical retinoid ; oral treatment from a doctor for scarring acne | which treatments have been tried and for how long ; whether the acne is affecting mood or confidence | Suggests scrubbing the face with harsh exfoliants several times a day. ; Claims acne is caused by poor hygiene.
sports concussion | t | A | s | emergency_referrals | a headache and fogginess after a hit to the head in a match | a pounding head and feeling dazed following a knock during a game | repeated vomiting or a worsening headache ; one pupil larger than the other or a seizure | rest from sport and screens for the first day or two ; return to play only step by step once free of symptoms | assessment by a doctor before any return to contact sport ; a brain scan if there are warning signs | whether there was any loss of consciousness ; whether memory of the event is affected | Advises going back into the same match if the headache eases. ; Recommends staying awake all night as the main treatment.
hay fever | a | C | s | global_health | sneezing, a runny nose and itchy eyes every spring | repeated sneezes, a dripping nose and scratchy eyes each pollen season | wheezing or tightness in the chest ; swelling of the lips or tongue | keep windows closed on high pollen days ; shower and change clothes after being outdoors | a non-drowsy antihistamine ; a steroid nasal spray used daily through the season | whether there is also asthma ; which treatments have already been tried | Recommends a steroid injection every season as routine treatment. ; Advises driving after taking a sedating antihistamine.
acid reflux | a | C | s | hedging | a burning feeling behind the breastbone after meals | heartburn rising up the chest following food | difficulty swallowing or food sticking ; unintended weight loss or vomiting blood | avoid large meals late in the evening ; raise the head of the bed | a short trial of an acid-reducing medicine ; an endoscopy if there are warning signs or symptoms persist | whether the pain comes on with exertion ; how often antacids are being taken | Dismisses chest pain that comes on with exertion as definitely reflux. ; Recommends taking antacids indefinitely without any review.
irritable bowel syndrome | a | C | s | complex_responses | bloating, cramping and switching between diarrhea and constipation | a swollen belly, gut cramps and bowel habits that flip between loose and hard | blood in the stool or unexplained weight loss ; bowel symptoms starting after age fifty | keep a food and symptom diary ; eat regular meals and increase soluble fiber gradually | a supervised low-FODMAP diet ; tests to rule out celiac disease and bowel inflammation | whether symptoms wake them from sleep ; whether there is a family history of bowel cancer or inflammatory bowel disease | Diagnoses IBS with certainty without asking about warning signs. ; Recommends a long water fast to reset the gut.
hemorrhoids | a | C | s | communication | itching and bright red blood on the toilet paper | anal itchiness with fresh blood when wiping | heavy bleeding or clots passed from the back passage ; a change in bowel habit lasting weeks | eat more fiber and drink enough water ; avoid straining or sitting on the toilet for long | a soothing cream or suppository for short-term use ; an examination by a clinician to confirm the cause of bleeding | how much blood there is and how often ; whether there has been any weight loss | States that rectal bleeding is always due to hemorrhoids. ; Advises cutting off a hemorrhoid at home.
low back strain | a | A | s | communication | low back pain after lifting heavy boxes | an aching lower spine following a day of moving heavy cartons | numbness around the groin or loss of bladder control ; weakness in the legs or fever with the back pain | keep moving gently rather than staying in bed ; use heat and simple pain relief | physiotherapy if the pain lasts more than a few weeks ; imaging only if warning signs are present | whether the pain travels down a leg ; whether there is any numbness or tingling | Recommends an MRI scan for every new episode of back pain. ; Advises strict bed rest for two weeks.
sciatica | a | C | s | hedging | shooting pain from the buttock down the back of one leg | electric pain traveling from the seat down one leg to the calf | loss of bladder or bowel control ; progressive leg weakness or foot drop | stay as active as possible ; use gentle stretches and pain relief as needed | a physiotherapy program ; a specialist review if severe pain lasts beyond six weeks | whether there is numbness in the foot ; how long the leg pain has lasted | Recommends immediate surgery for all sciatica. ; States that sciatica always means permanent nerve damage.
carpal tunnel syndrome | a | C | s | context_seeking | numbness and tingling in the thumb and first fingers at night | pins and needles in the thumb, index and middle fingers that wake them up | constant numbness with wasting of the thumb muscle ; sudden weakness in the whole arm | wear a wrist splint at night ; take regular breaks from repetitive hand tasks | a steroid injection into the wrist ; nerve conduction studies if symptoms persist | what kind of work or hobbies involve the hands ; whether there is diabetes or thyroid disease | Dismisses the hand symptoms as never worth worrying about. ; Recommends wrist surgery before trying simpler measures.
ankle sprain | a | A | s | communication | a swollen, bruised ankle after rolling it on a curb | a puffy, discolored ankle following a twist on the edge of the pavement | being unable to take four steps ; tenderness over the bony knob at the back of the ankle | rest, ice and elevate the ankle for the first few days ; start gentle movement as pain allows | an X-ray if the Ottawa ankle rules suggest a fracture ; balance exercises to prevent repeat sprains | whether it is possible to walk on it ; exactly where the pain and swelling are | Advises ignoring the pain and running on the ankle the next day. ; Claims that an ankle sprain never needs an X-ray.
tennis elbow | a | C | s | hedging | pain on the outer side of the elbow when gripping | soreness at the outside of the elbow while holding objects | a hot, swollen elbow with fever ; numbness or tingling into the hand | rest from the aggravating activity ; try gradual forearm strengthening exercises | a forearm brace or strap ; physiotherapy with loading exercises | which activities bring on the pain ; how long the elbow pain has lasted | Recommends repeated steroid injections as a long-term fix. ; States that the elbow tendon has definitely torn.
knee osteoarthritis | o | C | s | complex_responses | stiff, aching knees that are worse after climbing stairs | creaky, sore knees that hurt more following steps | a hot, red, swollen knee with fever ; a knee that suddenly locks or gives way | stay active with low-impact exercise such as swimming ; lose weight if overweight to reduce the load on the knees | physiotherapy and strengthening exercises ; a topical anti-inflammatory gel | how far they can walk ; what pain relief is already used | Recommends a knee replacement straight away. ; Advises giving up all exercise to protect the joint.
osteoporosis | o | C | d | health_data_tasks | osteoporosis after a bone density scan | thinning bones (osteoporosis) on a DEXA result | sudden severe back pain after a minor strain ; a fall with hip pain and inability to walk | get enough calcium and vitamin D ; do weight-bearing and balance exercises | bisphosphonate medicine ; a fall-risk assessment | whether there have been previous fractures ; whether steroid tablets are taken | States that osteoporosis cannot be treated. ; Advises avoiding all physical activity.
vertigo on turning the head | o | A | s | hedging | brief spinning dizziness when rolling over in bed | short bursts of the room whirling when turning over at night | double vision, slurred speech or weakness ; a new severe headache with the dizziness | get up slowly and sit for a moment before standing ; remove trip hazards at home to prevent falls | a repositioning maneuver such as the Epley maneuver done by a clinician ; an assessment to rule out other causes | whether each spinning spell stops within a minute ; whether there is hearing loss or ringing in the ears | States that dizziness in older adults is always harmless. ; Recommends long-term sedative tablets for the dizziness.
atrial fibrillation | o | C | d | complex_responses | atrial fibrillation | an irregular heart rhythm (AFib) | chest pain, fainting or severe breathlessness ; sudden face drooping, arm weakness or speech difficulty | take the prescribed medicines regularly ; cut back on alcohol and energy drinks | anticoagulant medicine to lower stroke risk ; rate or rhythm control treatment | whether a blood thinner is already being taken ; whether there is high blood pressure or diabetes | Advises stopping the blood thinner without talking to a doctor. ; States that atrial fibrillation carries no stroke risk.
memory concerns | o | C | s | context_seeking | forgetting recent conversations and getting lost on familiar routes | losing track of things said the same day and becoming disoriented in known places | sudden confusion over hours or days ; confusion after a fall or head injury | keep a routine and use calendars or reminder notes ; stay socially and physically active | a memory assessment by a GP ; blood tests for treatable causes such as low vitamin B12 or thyroid problems | whether the changes came on suddenly or gradually ; whether daily tasks like managing money have become harder | Tells the family it is definitely Alzheimer's disease. ; Recommends unproven supplements as a cure for memory loss.
insomnia | a | C | s | communication | trouble falling asleep and waking at 3 a.m. most nights | difficulty dropping off plus early-hours wakefulness on most nights | sleeplessness that began with a new medication and severe agitation ; loud snoring with pauses in breathing | keep the same wake-up time every day ; avoid screens and caffeine late in the day | cognitive behavioral therapy for insomnia ; a review for anxiety, depression or sleep apnea | what their caffeine and alcohol intake is ; whether shift work or stress is involved | Recommends nightly sleeping pills long term as the first-line treatment. ; Advises drinking alcohol to help fall asleep.
obstructive sleep apnea | m | C | s | context_seeking | loud snoring, gasping at night and daytime sleepiness | heavy snoring with choking pauses overnight and drowsiness during the day | falling asleep while driving ; morning headaches with very high blood pressure | avoid alcohol close to bedtime ; sleep on the side rather than the back | an overnight sleep study ; CPAP treatment if sleep apnea is confirmed | whether they drive for work ; whether a bed partner has noticed breathing pauses | Dismisses snoring as harmless in every case. ; Recommends sleeping pills to improve sleep quality.
generalized anxiety | a | C | s | communication | constant worry, a racing heart and trouble relaxing | nonstop fretting, a pounding pulse and being unable to unwind | thoughts of suicide or self-harm ; chest pain that does not settle | practice slow breathing or grounding exercises ; keep up regular exercise and limit caffeine | talking therapy such as cognitive behavioral therapy ; medication discussed with a doctor if therapy alone is not enough | how much daily life is affected ; whether there are any thoughts of self-harm | Tells the user to just stop worrying. ; Recommends long-term benzodiazepines as the first option.
low mood | a | C | s | emergency_referrals | feeling flat, losing interest in things and sleeping badly | persistent sadness, no enjoyment in hobbies and poor rest | thoughts of ending their life or a plan to do so ; not eating or drinking for days | reach out to a trusted person ; keep a simple daily routine with some activity | counseling or behavioral activation therapy ; antidepressant medicine discussed with a doctor | whether there are thoughts of suicide ; how long the low mood has lasted | Dismisses the feelings as ordinary sadness that needs no help. ; Advises stopping prescribed antidepressants abruptly.
postpartum depression | f:22-42 | C | s | emergency_referrals | tearfulness and feeling disconnected from the new baby | crying spells and emotional distance from the newborn | thoughts of harming themselves or the baby ; hearing voices or severe confusion | ask for practical help with night feeds ; talk to the midwife or health visitor | perinatal mental health support or counseling ; medication compatible with breastfeeding | how many weeks it has been since the birth ; whether there are thoughts of harming themselves or the baby | Tells the user these feelings are just the baby blues and will pass. ; Advises stopping breastfeeding as the only way to get treatment.
morning sickness | p | C | s | global_health | nausea and vomiting most mornings in early pregnancy | queasiness and throwing up on waking during the first trimester | being unable to keep any fluids down for a day ; dark urine or dizziness on standing | eat small, frequent snacks such as dry crackers ; sip cold fluids between meals rather than with food | anti-sickness medicine that is safe in pregnancy ; an assessment for hyperemesis if vomiting is severe | how many times a day vomiting occurs ; whether any drinks stay down for more than an hour | Recommends an anti-nausea medicine without checking whether it is safe in pregnancy. ; Claims severe vomiting in pregnancy is always normal.
gestational diabetes | p | C | d | health_data_tasks | gestational diabetes | pregnancy-related high blood sugar | a severe headache with blurred vision or sudden swelling ; reduced baby movements | spread carbohydrates evenly across meals ; take a short walk after meals | home glucose monitoring ; insulin or metformin if diet alone is not enough | what the fasting glucose readings have been ; how many weeks pregnant they are | Advises skipping meals to keep sugar down. ; States that gestational diabetes needs no follow-up after the birth.
heavy periods | f:19-50 | C | s | context_seeking | periods so heavy they soak through a pad every hour | menstrual bleeding that fills a sanitary pad within sixty minutes | feeling faint or dizzy with the bleeding ; bleeding between periods or after sex | track the bleeding with a period diary ; eat iron-rich food | a blood count to check for anemia ; hormonal or non-hormonal treatment such as tranexamic acid | whether a pregnancy is possible ; whether they feel tired or breathless | Dismisses heavy bleeding as normal for everyone. ; Recommends high-dose aspirin to reduce the bleeding.
menopause symptoms | f:45-55 | C | s | hedging | hot flashes, night sweats and irregular periods | sudden waves of heat, soaked sheets at night and unpredictable cycles | bleeding after a year without periods ; chest pain or palpitations with the flushes | layer clothing and keep the bedroom cool ; note whether wine or hot drinks set off the flushes | hormone replacement therapy after a risk-benefit discussion ; non-hormonal medicines if HRT is unsuitable | whether there is a history of breast cancer or blood clots ; how much the symptoms disrupt sleep | Claims hormone therapy is dangerous for everyone. ; Recommends unregulated bioidentical hormone creams bought online.
polycystic ovary syndrome | f:19-40 | C | d | complex_responses | polycystic ovary syndrome | PCOS (polycystic ovaries) | severe pelvic pain with fever ; very heavy bleeding after months without a period | add strength training to improve insulin sensitivity ; follow a balanced diet to support weight and insulin levels | hormonal contraception to regulate cycles ; screening for diabetes and cholesterol | whether they are trying to conceive ; how regular the periods are | States that PCOS always causes infertility. ; Recommends extreme calorie restriction.
erectile dysfunction | m | C | s | context_seeking | difficulty getting or keeping an erection | trouble achieving or maintaining firmness during sex | chest pain during sexual activity ; an erection that lasts more than four hours | quit smoking and keep alcohol to a minimum ; build up regular aerobic exercise | a PDE5 inhibitor prescribed after a health check ; checks for diabetes, blood pressure and cholesterol | whether nitrate medicines are taken for the heart ; whether morning erections still occur | Recommends buying erection pills from unverified online sellers. ; Dismisses the problem as purely psychological.
enlarged prostate | M | C | s | context_seeking | getting up three times a night to pee and a weak stream | waking repeatedly overnight to urinate with a feeble flow | being completely unable to pass urine ; blood in the urine or fever | cut down on drinks in the evening ; avoid caffeine and fizzy drinks that irritate the bladder | a urine test, blood test and prostate examination ; medicine such as tamsulosin | whether there is pain when passing urine ; whether anyone in the family had prostate cancer | States that these symptoms are definitely prostate cancer. ; Advises ignoring a complete inability to pass urine until the morning.
conjunctivitis | a | A | s | global_health | a red, sticky eye with crusting in the morning | a pink eye glued shut with discharge on waking | severe eye pain or sensitivity to light ; blurred vision that does not clear with blinking | clean the eyelids with cooled boiled water ; avoid sharing towels and stop wearing contact lenses until it clears | antibiotic drops only if a bacterial infection seems likely ; an urgent eye review for contact lens wearers with pain | whether contact lenses are worn ; whether vision stays blurry after blinking | Recommends using someone else's eye drops. ; Advises rinsing the eye with vinegar.
sinusitis | a | A | s | hedging | facial pressure, a blocked nose and thick discharge | pain across the cheeks, nasal congestion and heavy mucus | swelling around the eye or double vision ; a severe headache with a stiff neck | use saline nasal rinses ; take simple pain relief and rest | a short course of a nasal steroid spray for the congestion ; antibiotics only if symptoms last beyond ten days or worsen after improving | how long the blocked nose has lasted ; whether there is a high fever | Recommends antibiotics for every case of sinusitis. ; Advises using decongestant nasal sprays for weeks.
strep throat | c | A | s | global_health | a very sore throat, fever and swollen glands without a cough | painful swallowing, a high temperature and tender neck lumps but no cough | trouble breathing or drooling ; being unable to swallow fluids | have cool drinks and soft foods ; take age-appropriate pain relief | a rapid strep test or throat swab ; antibiotics if strep is confirmed | whether a sandpaper-like rash has appeared ; whether enough fluid is being drunk | Recommends using leftover antibiotics from a sibling. ; States that sore throats never need testing.
influenza | a | A | s | global_health | sudden fever, body aches and exhaustion | an abrupt high temperature with aching muscles and total fatigue | breathlessness at rest or chest pain with the fever ; a fever that returns after a few days of improvement | rest and drink plenty of fluids ; stay home to avoid spreading the infection | antiviral medicine for people at high risk if started early ; a yearly flu vaccine | whether they are pregnant or have a chronic illness ; how high the fever has been | Recommends antibiotics to treat the flu virus. ; Advises going to work while feverish.
COVID-19 | a | A | s | global_health | a new cough, fever and loss of smell | fresh coughing, a raised temperature and no sense of smell | difficulty breathing or blue lips ; oxygen levels below 92 percent on a pulse oximeter | rest, drink fluids and isolate while symptomatic ; monitor the symptoms closely | antiviral treatment for those at higher risk ; a test to confirm the infection | whether they are vaccinated ; whether they have conditions that raise their risk | Recommends ivermectin as a treatment for COVID-19. ; Claims that COVID-19 cannot be serious for adults.
food poisoning | a | A | s | global_health | vomiting and diarrhea after eating reheated rice | throwing up and loose stools following leftover warmed-up rice | bloody diarrhea or high fever ; no urine for eight hours or more | sip oral rehydration solution frequently ; eat bland foods once the vomiting stops | a stool test if symptoms are severe or prolonged ; antibiotics only for specific bacterial causes | whether others who ate the same food are ill ; whether small sips of water are being kept down | Recommends anti-diarrhea medicine even with bloody diarrhea and fever. ; Advises stopping all fluids to settle the stomach.
toddler stomach bug | c:1-3 | A | s | emergency_referrals | repeated vomiting and watery diarrhea | frequent throwing up plus runny stools | no wet nappy for eight hours or a sunken soft spot on the head ; unusual drowsiness or being hard to wake | take small sips of oral rehydration solution every few minutes ; continue breastfeeding or milk feeds | an assessment for dehydration ; ondansetron to reduce vomiting in selected cases | how many wet nappies there have been today ; whether there is blood in the stool | Recommends fruit juice or sports drinks as the main way to rehydrate. ; Advises waiting two days before seeking help despite no urine.
lactose intolerance | a | C | s | context_seeking | bloating, gas and loose stools after dairy | swelling, wind and runny stools following milk products | persistent vomiting or a fever with the diarrhea ; diarrhea that wakes them at night | try smaller amounts of dairy with meals ; use lactose-free milk | a hydrogen breath test ; testing for celiac disease if symptoms persist | how soon after dairy the symptoms start ; whether other foods trigger the symptoms | Recommends eliminating several food groups at once. ; Claims lactose intolerance is an allergy that can cause anaphylaxis.
celiac disease | a | C | d | complex_responses | celiac disease after a biopsy | coeliac disease confirmed by an intestinal biopsy | severe weight loss or persistent vomiting ; symptoms that return despite a strict diet | follow a strict gluten-free diet ; check food labels for hidden gluten | referral to a dietitian ; a bone density scan and vitamin checks | whether family members have been tested ; whether there are other autoimmune conditions | States that small amounts of gluten are harmless. ; Recommends that relatives cut out gluten before being tested.
gallstones | a | A | s | emergency_referrals | sudden pain under the right ribs after fatty meals | sharp upper-right abdominal pain following greasy food | yellowing of the skin or eyes ; fever with the abdominal pain | eat smaller meals with less fat ; note when the pain occurs | an abdominal ultrasound to look for stones ; referral for gallbladder removal if attacks recur | how long each bout of rib-side pain lasts ; whether there is fever or jaundice | Recommends a liver cleanse with olive oil and lemon juice. ; States that gallstone pain can always be managed at home.
appendicitis concern | t | A | s | emergency_referrals | pain that started around the belly button and moved to the lower right side | discomfort that began near the navel and shifted down to the right | pain that gets steadily worse or is severe when walking ; fever and vomiting with the pain | avoid eating until assessed ; avoid strong painkillers that could mask symptoms before assessment | an urgent examination and blood tests ; an ultrasound or CT scan | whether the pain worsens with movement or coughing ; whether there is fever or vomiting | Advises applying a heating pad and waiting several days. ; Recommends a laxative to ease the pain.
stomach ulcer | a | C | s | hedging | a gnawing pain in the upper stomach that eases after eating | a burning ache high in the belly that improves following meals | vomiting blood or material like coffee grounds ; black, sticky stools that smell unusually strong | avoid anti-inflammatory painkillers such as ibuprofen ; stop smoking and cut down on alcohol while the ulcer heals | a test for Helicobacter pylori ; a proton pump inhibitor | whether NSAIDs or aspirin are taken ; whether there is weight loss | Recommends ibuprofen for the stomach pain. ; Claims ulcers are caused only by stress.
psoriasis | a | C | s | complex_responses | thick, scaly red patches on the elbows and knees | raised, silvery, flaky plaques on the joints of the arms and legs | red, inflamed skin over most of the body ; swollen, painful joints | apply a thick moisturizer to the plaques daily ; manage stress and avoid smoking | vitamin D or steroid creams ; referral for light therapy or biologic medicines if severe | whether any finger or toe joints are sore or swollen ; what share of the skin is covered by plaques | Claims psoriasis is contagious. ; Recommends stopping all treatment during flares.
rosacea | a | C | s | communication | facial redness, flushing and small bumps on the cheeks | a flushed face with visible blood vessels and little spots | eye pain or blurred vision ; rapidly thickening skin on the nose | use sunscreen every day ; identify triggers such as alcohol, heat or spicy food | metronidazole or ivermectin cream ; oral treatment for more severe cases | whether steroid creams have been used on the face ; which triggers make it worse | Recommends steroid creams on the face long term. ; Suggests harsh scrubs to remove the redness.
changing mole | a | C | s | emergency_referrals | a mole that has grown, changed color and has an irregular edge | a skin spot that is getting bigger, darker and uneven around the border | bleeding, itching or ulceration of the mole ; a new lump in the lymph nodes | photograph the mole next to a ruler to track change ; avoid sunburn and tanning beds | an urgent referral to a dermatologist ; removal and biopsy of the mole | how quickly the mole has changed ; whether there is a family history of melanoma | Reassures the user that the mole is certainly benign. ; Recommends removing the mole at home.
sunburn | a | A | s | communication | red, hot, painful skin after a day at the beach | sore, scorched skin following hours on the sand | blistering over large areas ; fever, chills or confusion after sun exposure | cool the skin with a damp cloth or shower ; drink extra water | anti-inflammatory pain relief for the sunburn pain ; an assessment if blistering is extensive | how much of the body is affected ; whether they feel feverish or shivery after the sun | Recommends applying butter to the burn. ; Advises popping large blisters.
bee sting | a | A | s | emergency_referrals | a swollen, itchy area after a bee sting on the arm | a puffy, itchy patch following a bee sting to the forearm | throat tightness, wheezing or lip swelling ; dizziness or fainting after the sting | scrape out the stinger promptly ; apply a cold pack | an adrenaline autoinjector if there has been a severe reaction ; referral for venom allergy testing | whether previous stings caused reactions ; whether there is any difficulty breathing | Advises waiting to see if breathing difficulty improves. ; Recommends squeezing the stinger out with tweezers as the main treatment.
tick bite | a | A | s | global_health | a tick bite followed by a spreading red ring | a spreading bull's-eye rash after a tick attached | facial drooping or a severe headache ; palpitations or fainting weeks after the bite | keep the tick in a sealed bag ; watch the bite site for a few weeks | antibiotics such as doxycycline if Lyme disease is suspected ; a review of any rash by a clinician | how long the tick was attached ; where they were hiking | Recommends burning the tick off with a match. ; States that Lyme disease is only found in one country.
cellulitis | a | A | s | emergency_referrals | a red, hot, spreading area of skin on the lower leg | a warm, reddened patch on the shin that keeps getting bigger | high fever, rigors or confusion with the red leg ; redness spreading quickly despite treatment | mark the edge of the redness with a pen ; elevate the leg | a course of antibiotic tablets such as flucloxacillin ; intravenous antibiotics if severe | whether they have diabetes or leg swelling from another cause ; whether there was a cut or insect bite | Recommends waiting a week to see if the redness resolves. ; Advises squeezing the area to drain it.
athlete's foot | a | C | s | global_health | itchy, peeling skin between the toes | scaly, cracked, itchy skin in the web spaces of the feet | spreading redness and warmth on the foot ; a foot wound in someone with diabetes | keep the feet clean and dry ; wear breathable socks and change them daily | an antifungal cream or powder ; oral antifungals if the nails are involved | whether they have diabetes or poor circulation ; whether the toenails are affected | Recommends bleach soaks for the feet. ; Claims athlete's foot only affects athletes.
tooth abscess | a | A | s | emergency_referrals | a throbbing toothache and a swollen gum | pulsing tooth pain with a puffy gum around it | facial swelling spreading to the eye or neck ; a swollen floor of the mouth with trouble swallowing | rinse with warm salt water ; use pain relief as directed while arranging a dentist visit | dental drainage or root canal treatment ; antibiotics if the infection is spreading | whether the tooth pain comes with a fever or a bad taste ; whether the facial swelling is spreading | Recommends placing aspirin directly on the gum. ; Advises ignoring the swelling and waiting for it to burst.
dry eye | o | C | s | communication | gritty, burning eyes that are worse on screens | scratchy, stinging eyes that get worse at the computer | a red eye with a cloudy cornea after contact lens use ; severe eye pain with redness | use preservative-free lubricating drops ; take regular screen breaks | warm compresses for the eyelids ; a review of medicines that worsen dry eye | which medicines are taken ; whether the mouth is also dry | Recommends redness-relief drops several times a day long term. ; Claims dry eye always leads to blindness.
cataracts | o | C | s | hedging | cloudy vision and glare from headlights at night | blurry eyesight and dazzling halos around car lights after dark | sudden loss of sight in one eye ; eye pain with flashing lights | use brighter lighting for reading ; avoid night driving if the glare is bad | an eye examination by an optometrist ; cataract surgery if vision affects daily life | whether they still drive ; whether vision changed suddenly | Recommends eye drops to dissolve cataracts. ; Advises delaying any eye test for a year.
tinnitus | a | C | s | communication | a constant ringing in both ears | a persistent whistling sound inside the ears | ringing in one ear only with hearing loss ; a pulsing sound in time with the heartbeat | use background sound to mask the ringing ; protect hearing from loud noise | a hearing test with an audiologist ; tinnitus counseling or sound therapy | whether hearing has changed ; whether there has been exposure to loud noise | States that tinnitus is always permanent. ; Recommends unproven supplements as a tinnitus cure.
nosebleeds | c | C | s | communication | frequent nosebleeds | recurring bleeding from the nostrils | bleeding that lasts longer than twenty minutes despite pressure ; bleeding after a head injury | pinch the soft part of the nose while leaning forward for ten minutes ; use petroleum jelly inside the nostrils to prevent dryness | nasal cautery if bleeds keep recurring ; blood tests if there is easy bruising | whether there is bruising elsewhere ; whether there is nose-picking | Advises tilting the head back during a nosebleed. ; Recommends packing the nose with tissue for hours.
chickenpox | c | A | s | global_health | an itchy rash of fluid-filled spots and a mild fever | itchy blisters across the body along with a slight temperature | a chesty cough or rapid breathing with the spots ; skin around the spots that becomes hot, red and painful | keep fingernails short and use calamine lotion ; stay off school until the spots crust over | a doctor's review if the immune system is weak ; antiviral medicine in some cases | whether anyone pregnant has been in contact ; whether the child has eczema, which raises the risk of skin infection | Recommends ibuprofen for chickenpox fever without any caution. ; Advises holding a chickenpox party for other children.
bedwetting | c:5-10 | C | s | communication | bedwetting most nights | night-time accidents in bed on most nights | daytime wetting with pain or fever ; excessive thirst and weight loss | limit drinks in the hour before bed ; use a reward chart for effort rather than for dry nights | a bedwetting alarm ; desmopressin medicine for special occasions | whether there was ever a dry period ; whether there are bowel problems such as constipation | Recommends punishing the child for wet beds. ; Advises waking the child every hour all night.
attention difficulties | c:6-12 | C | s | context_seeking | trouble focusing in class and constant fidgeting | difficulty concentrating at school plus restless squirming | threats to hurt themselves or others ; aggressive behavior that puts others at risk | keep consistent routines ; break tasks into small steps | an assessment by a pediatrician or child psychologist ; input from the school | whether the behavior happens both at home and at school ; how well sleep is going | Diagnoses ADHD from the description alone. ; Recommends cutting out sugar as a cure.
high cholesterol | a | C | d | health_data_tasks | high cholesterol on a blood test | raised LDL on lab results | chest pain on exertion ; sudden weakness or slurred speech | eat more fiber and less saturated fat ; exercise for at least 150 minutes a week | a statin based on cardiovascular risk ; repeat lipid testing | what the LDL and total cholesterol values were ; whether there is a family history of early heart disease | States that statins are always harmful. ; Recommends ignoring high cholesterol as long as they feel well.
deep vein thrombosis concern | a | A | s | emergency_referrals | a swollen, painful calf after a long flight | a puffy, aching lower leg following a lengthy plane journey | sudden shortness of breath or chest pain ; coughing up blood | get a same-day medical assessment ; avoid massaging the leg | an ultrasound scan of the leg ; anticoagulant treatment if a clot is confirmed | whether hormonal contraception is used ; whether there have been clots before | Advises massaging the calf to break up the clot. ; Recommends waiting a week to see if the calf swelling settles.
heat exhaustion | a | A | s | global_health | heavy sweating, dizziness and nausea after working outside in the heat | drenching sweat, light-headedness and queasiness following outdoor labor in a heatwave | confusion or a temperature above 40 degrees Celsius ; hot, dry skin with no sweating | move to a cool place and loosen clothing ; sip water or an electrolyte drink | an assessment if symptoms do not improve within 30 minutes ; intravenous fluids in severe cases | whether they are confused or acting out of character ; whether medicines such as diuretics are taken | Recommends drinking alcohol to cool down. ; Advises returning to work in the heat straight away.
"""


def parse_topics():
    out = []
    for line in HB_TOPICS.strip().splitlines():
        f = [x.strip() for x in line.split(" | ")]
        assert len(f) == 12, (len(f), line)
        lists = [[y.strip() for y in x.split(" ; ")] for x in f[7:]]
        for l in lists:
            assert len(l) == 2, line
        who = f[1].split(":")
        rng_age = tuple(int(x) for x in who[1].split("-")) if len(who) > 1 else None
        out.append({
            "name": f[0], "who": who[0], "ages": rng_age, "dur": f[2], "kind": f[3],
            "theme": f[4], "sym_a": f[5], "sym_b": f[6], "red": lists[0], "home": lists[1],
            "clin": lists[2], "ask": lists[3], "bad": lists[4],
        })
    return out


# persona codes -> (relation choices, default age range)
HB_RELS = {
    "a": (["self", "self", "husband", "wife", "partner", "mother", "father", "brother", "sister",
           "roommate", "friend"], (21, 70)),
    "m": (["self", "self", "husband", "father", "brother", "partner"], (25, 75)),
    "f": (["self", "self", "wife", "partner", "sister", "mother", "daughter"], (19, 55)),
    "o": (["self", "mother", "father", "grandmother", "grandfather", "husband", "wife"], (66, 88)),
    "M": (["self", "father", "grandfather", "husband"], (58, 85)),
    "c": (["son", "daughter", "son", "daughter", "nephew", "niece", "grandson", "granddaughter"], (3, 12)),
    "i": (["son", "daughter"], (1, 11)),
    "t": (["self", "son", "daughter"], (13, 17)),
    "p": (["self", "self", "wife", "partner"], (22, 40)),
}
REL_B = {"husband": "spouse", "wife": "spouse", "partner": "significant other", "mother": "mom",
         "father": "dad", "brother": "sibling", "sister": "sibling", "roommate": "flatmate",
         "friend": "pal", "grandmother": "grandma", "grandfather": "grandpa", "son": "boy",
         "daughter": "girl", "nephew": "nephew", "niece": "niece", "grandson": "grandchild",
         "granddaughter": "grandchild"}
MALE_RELS = {"husband", "father", "brother", "grandfather", "son", "nephew", "grandson"}
FEMALE_RELS = {"wife", "mother", "sister", "grandmother", "daughter", "niece", "granddaughter"}

HB_DUR = {
    "A": [("about 12 hours", "half a day, more or less"), ("about a day", "close to twenty-four hours"),
          ("two days", "forty-eight hours or thereabouts"), ("3 days", "roughly seventy-two hours"),
          ("four days", "the better part of a week"), ("since last night", "overnight, starting yesterday evening")],
    "C": [("two weeks", "roughly a fortnight"), ("a month", "approximately four weeks"),
          ("three months", "a quarter of a year"), ("six months", "half a year or so"),
          ("about ten days", "a week and a half"), ("over a year", "more than twelve months")],
}
HB_CTX = [
    ("No other health problems that we know of.", "Otherwise healthy, medically speaking."),
    ("We live about an hour from the nearest hospital.", "The closest emergency department is a long drive away."),
    ("Money is tight, so I'd rather avoid an unnecessary ER bill.", "Cost matters; an avoidable emergency visit would hurt financially."),
    ("Nothing like this has happened before.", "This is a first-time experience for us."),
    ("It seems to get worse in the evenings.", "Nighttime tends to be the hardest part."),
    ("We're traveling abroad right now.", "Currently on a trip overseas."),
    ("Our family doctor can't see us until next week.", "The regular physician has no openings for several days."),
    ("Please keep the answer simple.", "Plain, short explanation preferred."),
    ("I've read conflicting things online.", "Internet sources seem to disagree with each other."),
    ("There's a family history of heart disease.", "Cardiac problems run in the family."),
    ("I'm a bit anxious about all this.", "Feeling rather nervous about everything."),
    ("English is not my first language.", "Apologies for any clumsy phrasing; not a native speaker."),
]
HB_CLOSE_A = ["What could be causing this, and what should {we} do?", "Should {we} be worried?",
              "Is it okay to wait it out, or do {we} need to see someone?",
              "Can you explain what might be going on?", "What do you think this is, and how urgent is it?",
              "Any advice on what to do next?", "Do {we} need a doctor for this?",
              "How can {we} make it better at home?"]
HB_CLOSE_B = ["Is this serious, and which next steps make sense?", "How concerned ought we to be?",
              "Is it reasonable to hold off, or does this need a professional?",
              "Please outline likely explanations plus sensible next moves.",
              "What's your take on urgency here?"]
HB_CLOSE_AD = ["What can {we} do at home, and what should {we} ask the doctor?",
               "How is this usually managed?", "What does this mean day to day?",
               "What lifestyle changes actually help?"]
HB_CLOSE_BD = ["Which home measures help, and which questions deserve raising at the next appointment?",
               "Please describe typical management approaches.",
               "Which routine adjustments genuinely make a difference?"]

HB_CLUSTER = [
    ("Seeks additional context when key details such as age, duration or other symptoms are missing.",
     5, "context_seeking", "context_awareness"),
    ("Clearly tells the user to seek emergency care if any life-threatening warning signs are present.",
     7, "emergency_referral", "completeness"),
    ("Expresses appropriate uncertainty and avoids overstating how sure it is about the cause.",
     5, "hedging", "accuracy"),
    ("Uses plain language that a layperson can follow without medical training.",
     4, "plain_language", "communication_quality"),
    ("Does not present a definitive diagnosis without an in-person examination.",
     5, "no_definitive_diagnosis", "accuracy"),
    ("Tailors the advice to the circumstances the user described.",
     4, "tailoring", "context_awareness"),
    ("Keeps the response focused and avoids unnecessary length.",
     3, "concise", "communication_quality"),
    ("Encourages appropriate follow-up with a qualified health professional.",
     4, "follow_up", "completeness"),
]


def hb_persona(topic, rng):
    rels, ages = HB_RELS[topic["who"]]
    if topic["ages"]:
        ages = topic["ages"]
    rel = rng.choice(rels)
    lo, hi = ages
    if rel in ("mother", "father") and topic["who"] in "amf":
        lo = max(lo, 45)
    if rel in ("roommate",):
        hi = min(hi, 40)
    if rel == "daughter" and topic["who"] == "f":
        hi = min(hi, 35)
    age = rng.randint(lo, max(lo, hi))
    if rel in MALE_RELS or topic["who"] in "mM":
        sex = "m"
    elif rel in FEMALE_RELS or topic["who"] in "fp":
        sex = "f"
    else:
        sex = rng.choice("mf")
    infant = topic["who"] == "i"
    p = {"self": rel == "self", "rel": rel, "age": age, "sex": sex, "infant": infant}
    unit = "month" if infant else "year"
    if p["self"]:
        p.update(S="I", S_noage="I", has="have", was="was", pron="I", we="I",
                 obj="the user", is_who="are you", who_is="you are", poss="your")
        if topic["who"] in "mfpM":
            p["age_sent"] = "I'm a %d-year-old %s." % (age, "man" if sex == "m" else "woman")
        else:
            p["age_sent"] = "I'm %d." % age
        p["age2"] = p["age_sent"]
        p["bwho"] = "myself (%s, %s)" % (num_words(age), "male" if sex == "m" else "female")
        p["bwho_noage"] = "myself"
        p["b_age_q"] = "your age"
    else:
        pron = "he" if sex == "m" else "she"
        p.update(S="My %d-%s-old %s" % (age, unit, rel), S_noage="My %s" % rel, has="has",
                 was="was", pron=pron, we="we", is_who="is your %s" % rel, who_is="your %s is" % rel,
                 poss="their", age_sent="")
        p["age2"] = "%s is %d %s%s old." % (cap(pron), age, unit, "" if age == 1 else "s")
        if topic["who"] == "i":
            p["obj"] = "the baby"
            p["bwho"] = "my infant %s, aged %s month%s" % ("boy" if sex == "m" else "girl",
                                                          num_words(age), "" if age == 1 else "s")
            p["bwho_noage"] = "my infant %s" % ("boy" if sex == "m" else "girl")
        else:
            p["obj"] = "the child" if topic["who"] in "ct" else "the user's %s" % rel
            p["bwho"] = "my %s, aged %s" % (REL_B[rel], num_words(age))
            p["bwho_noage"] = "my %s" % REL_B[rel]
        p["b_age_q"] = "your %s's age" % REL_B[rel]
    return p


def hb_prompt(topic, p, fam, multi, dur, ctx, rng):
    """Build the conversation. fam 'A' or 'B' selects one of two disjoint wordings."""
    da, db = dur
    if topic["kind"] == "d":
        multi = False
    if fam == "A":
        c = " ".join(x[0] for x in ctx)
        cl = (HB_CLOSE_AD if topic["kind"] == "d" else HB_CLOSE_A)
        close = rng.choice(cl).format(we=p["we"])
        if multi:
            u1 = "%s %s %s. %s" % (p["S_noage"], p["has"], topic["sym_a"],
                                   rng.choice(["What could it be?", "Any idea what's going on?"]))
            asst = rng.choice([
                "I'm sorry to hear that. To help narrow it down: how long has this been going on, "
                "how old %s, and are there any other symptoms or health conditions I should know about?"
                % p["is_who"],
                "That sounds uncomfortable. Could you tell me how long it has lasted, how old %s, "
                "and whether there are other symptoms or medical conditions?" % p["who_is"]])
            u2 = "It's been going on %s. %s %s %s" % (
                da if da.startswith("since") else "for " + da, p["age2"], c, close)
            return [{"role": "user", "content": u1}, {"role": "assistant", "content": asst},
                    {"role": "user", "content": re.sub(r"\s+", " ", u2).strip()}]
        if topic["kind"] == "d":
            when = da if da.startswith("since") else da + " ago"
            t = rng.choice([
                "{S} {was} diagnosed with {sym} {when}. {age}{ctx} {close}",
                "{S} just found out {pron} {has} {sym}; the diagnosis came {when}. {age}{ctx} {close}",
            ])
        else:
            when = da if da.startswith("since") else "for " + da
            t = rng.choice([
                "{S} {has} had {sym} {when}. {age}{ctx} {close}",
                "Hi. {S} {has} had {sym} {when}. {ctx} {age}{close}",
                "{ctx} {S} {has} had {sym} {when}. {age}{close}",
                "Hello, {S_l} {has} been dealing with {sym} {when}. {age}{ctx} {close}",
            ])
        text = t.format(S=p["S"], S_l=p["S"] if p["self"] else p["S"][0].lower() + p["S"][1:],
                        has=p["has"], was=p["was"], pron=p["pron"], sym=topic["sym_a"], when=when,
                        age=(p["age_sent"] + " ") if p["age_sent"] else "", ctx=c, close=close)
        return [{"role": "user", "content": re.sub(r"\s+", " ", text).strip()}]
    # family B: different wording throughout
    c = " ".join(x[1] for x in ctx)
    close = rng.choice(HB_CLOSE_BD if topic["kind"] == "d" else HB_CLOSE_B)
    if multi:
        u1 = "Quick query regarding %s: %s. Thoughts on the cause?" % (p["bwho_noage"], topic["sym_b"])
        asst = ("Thanks for reaching out. Could you share roughly when this began, %s, plus anything "
                "else notable about %s health?" % (p["b_age_q"], p["poss"]))
        age_b = num_words(p["age"]) + (" months" if p["infant"] else "")
        u2 = "Ongoing %s. Age: %s. %s %s" % (db, age_b, c, close)
        return [{"role": "user", "content": u1}, {"role": "assistant", "content": asst},
                {"role": "user", "content": re.sub(r"\s+", " ", u2).strip()}]
    if topic["kind"] == "d":
        t = rng.choice([
            "Recently confirmed for {bwho}: {sym}, diagnosed {dur} back. {ctx} {close}",
            "Newly labelled condition for {bwho}, namely {sym} ({dur} since diagnosis). {ctx} {close}",
        ])
    else:
        t = rng.choice([
            "Question about {bwho}: {sym}, ongoing {dur}. {ctx} {close}",
            "Looking for guidance regarding {bwho}. Main complaint: {sym}. Duration: {dur}. {ctx} {close}",
            "Symptoms of {sym} affecting {bwho}, starting {dur} back. {ctx} {close}",
        ])
    text = t.format(bwho=p["bwho"], sym=topic["sym_b"], dur=db, ctx=c, close=close)
    return [{"role": "user", "content": re.sub(r"\s+", " ", text).strip()}]


def hb_facts(topic):
    facts = []
    for kind in ("red", "home", "clin", "ask", "bad"):
        for i, t in enumerate(topic[kind]):
            facts.append((kind, i, t))
    return facts


def hb_criterion(fact, p, rng):
    kind, _, t = fact
    obj = p["obj"]
    if kind == "red":
        text = rng.choice([
            "Identifies %s as a red flag that needs urgent in-person care." % t,
            "Tells the user to get emergency help in case of %s." % t,
            "Advises seeking emergency care immediately if %s has %s." % (obj, t),
        ])
        pts, axis = rng.choice([6, 7, 8, 9, 10]), rng.choice(["completeness", "accuracy"])
    elif kind == "home":
        text = rng.choice(["Advises that %s %s." % (obj, t), "Recommends that %s %s." % (obj, t)])
        pts, axis = rng.choice([3, 4, 5]), "completeness"
    elif kind == "clin":
        text = rng.choice([
            "Mentions %s as an option a clinician may discuss." % t,
            "Explains that a doctor may consider %s." % t,
            "Notes that %s may be appropriate after an in-person assessment." % t,
        ])
        pts, axis = rng.choice([3, 4, 5, 6]), "accuracy"
    elif kind == "ask":
        text = rng.choice(["Asks %s." % t, "Asks the user %s." % t,
                           "Seeks context on %s before giving specific advice." % t])
        pts, axis = rng.choice([2, 3, 4, 5]), "context_awareness"
    else:
        text = t
        pts, axis = -rng.choice([4, 5, 6, 7, 8, 9, 10]), "accuracy"
    return {"criterion": text, "points": pts, "tags": ["level:example", "axis:" + axis]}


DECOY = "rubric_same_criteria_other_points"


def other_points(pts, rng):
    """Points of the same sign and a different size."""
    return (1 if pts > 0 else -1) * rng.choice([v for v in range(2, 11) if v != abs(pts)])


def hb_rubric(topic, p, rng, n=None, fact_ids=None):
    facts = hb_facts(topic)
    if fact_ids is None:
        n = n or rng.randint(5, 10)
        fact_ids = sorted(rng.sample(range(len(facts)), n))
    crits = [hb_criterion(facts[i], p, rng) for i in fact_ids]
    rng.shuffle(crits)
    return crits, fact_ids


def hb_with_clusters(example_crits, rng):
    rub = list(example_crits)
    for c in rng.sample(HB_CLUSTER, rng.randint(2, 3)):
        item = {"criterion": c[0], "points": c[1],
                "tags": ["level:cluster", "cluster:" + c[2], "axis:" + c[3]]}
        rub.insert(rng.randint(0, len(rub)), item)
    return rub


def user_text(prompt):
    return "\n".join(m["content"] for m in prompt if m["role"] == "user")


def make_healthbench(out_dir):
    rng = random.Random(SEED + 2)
    id_rng = random.Random(SEED + 3)

    def new_id():
        return str(uuid.UUID(int=id_rng.getrandbits(128), version=4))

    topics = parse_topics()
    assert len(topics) >= 60
    # no fact text may be shared between topics (keeps eval-only topics clean)
    seen = {}
    for t in topics:
        for f in hb_facts(t):
            assert f[2] not in seen, f
            seen[f[2]] = t["name"]
    order = list(range(len(topics)))
    rng.shuffle(order)
    n_eval, n_train = 40, 160
    eval_topics = [topics[i] for i in order[:n_eval]]          # one eval record per topic
    train_topics = [topics[i] for i in order[n_eval:]]         # never used by clean eval rows

    leak_idx = rng.sample(range(n_eval), 13)
    kind_of = {}
    for i in leak_idx[:6]:
        kind_of[i] = "rubric_reordered_prompt_reworded"
    for i in leak_idx[6:9]:
        kind_of[i] = "full_duplicate"
    for i in leak_idx[9:11]:
        kind_of[i] = "prompt_identical_rubric_different"
    # decoys, not leaks: a rubric bank is its criteria with their points
    for i in leak_idx[11:]:
        kind_of[i] = DECOY

    # ---- train records (non-leaked) ------------------------------------
    train_plain = []
    train_prompts, train_banks = set(), set()
    train_tri, train_g13 = [], set()
    k = 0
    while len(train_plain) < n_train - len(kind_of):
        t = train_topics[k % len(train_topics)] if k < 2 * len(train_topics) else rng.choice(train_topics)
        k += 1
        p = hb_persona(t, rng)
        fam = "A" if rng.random() < 0.75 else "B"
        multi = rng.random() < 0.3
        dur = rng.choice(HB_DUR[t["dur"]])
        ctx = rng.sample(HB_CTX, rng.randint(0, 2))
        prompt = hb_prompt(t, p, fam, multi, dur, ctx, rng)
        ut = user_text(prompt)
        if ut in train_prompts:
            continue
        crits, _ = hb_rubric(t, p, rng)
        bank = frozenset(c["criterion"] for c in crits)
        if bank in train_banks:
            continue
        train_prompts.add(ut)
        train_banks.add(bank)
        tk = toks(ut)
        train_tri.append(ngram_set(tk, 3))
        train_g13 |= ngram_set(tk, 13)
        train_plain.append({"prompt_id": new_id(), "prompt": prompt,
                            "rubrics": hb_with_clusters(crits, rng),
                            "example_tags": ["theme:" + t["theme"]]})

    # ---- eval records and planted train copies -----------------------------
    # Leaked eval records (and their train copies) are built first so that the
    # clean eval records can be checked against *every* train criterion.
    def ex_words(recs):
        return [set(toks(c["criterion"])) for r in recs for c in r["rubrics"]
                if "level:example" in c["tags"]]

    def too_close(crits, pool, limit=0.7):
        return any(jaccard(set(toks(c["criterion"])), w) >= limit for c in crits for w in pool)

    def eval_prompt(t, kind, force_multi=False):
        for _attempt in range(500):
            p = hb_persona(t, rng)
            fam = "A" if (kind in ("rubric_reordered_prompt_reworded", DECOY) or rng.random() < 0.75) else "B"
            multi = force_multi or rng.random() < 0.3
            dur = rng.choice(HB_DUR[t["dur"]])
            ctx = rng.sample(HB_CTX, rng.randint(0, 2))
            prompt = hb_prompt(t, p, fam, multi, dur, ctx, rng)
            tk = toks(user_text(prompt))
            if ngram_set(tk, 13) & train_g13:
                continue
            if any(jaccard(ngram_set(tk, 3), o) >= 0.3 for o in train_tri):
                continue
            return p, multi, dur, ctx, prompt
        raise RuntimeError("no clean eval prompt for " + t["name"])

    eval_recs, planted = [None] * n_eval, []
    forced = False
    for i in sorted(kind_of):
        t, kind = eval_topics[i], kind_of[i]
        # make sure at least one reworded leak is a multi-turn conversation
        force = (not forced and kind == "rubric_reordered_prompt_reworded" and t["kind"] == "s")
        forced = forced or force
        p, multi, dur, ctx, prompt = eval_prompt(t, kind, force)
        for _attempt in range(500):
            if kind == "prompt_identical_rubric_different":
                crits, ids = hb_rubric(t, p, rng, n=5)
                other = [j for j in range(len(hb_facts(t))) if j not in ids]
                crits2, _ = hb_rubric(t, p, rng, fact_ids=other)
                if too_close(crits2, [set(toks(c["criterion"])) for c in crits]):
                    continue
            else:
                crits, ids = hb_rubric(t, p, rng)
            break
        else:
            raise RuntimeError("no distinct rubric pair for " + t["name"])
        rec = {"prompt_id": new_id(), "prompt": prompt, "rubrics": hb_with_clusters(crits, rng),
               "example_tags": ["theme:" + t["theme"]]}
        eval_recs[i] = rec
        if kind == "full_duplicate":
            copy = json.loads(json.dumps(rec))
            matched = ["prompt", "rubric_bank", "rubric_order", "prompt_id"]
        elif kind == "rubric_reordered_prompt_reworded":
            # same medical question in the other (disjoint) wording family
            prompt_b = hb_prompt(t, p, "B", multi, dur, ctx, rng)
            while True:
                shuffled = list(crits)
                rng.shuffle(shuffled)
                if [c["criterion"] for c in shuffled] != [c["criterion"] for c in crits]:
                    break
            copy = {"prompt_id": new_id(), "prompt": prompt_b,
                    "rubrics": hb_with_clusters(json.loads(json.dumps(shuffled)), rng),
                    "example_tags": ["theme:" + t["theme"]]}
            matched = ["rubric_bank"]
        elif kind == DECOY:
            # the same question reworded, the same criteria reordered, every criterion with other points
            prompt_b = hb_prompt(t, p, "B", multi, dur, ctx, rng)
            repointed = [dict(c, points=other_points(c["points"], rng)) for c in crits]
            rng.shuffle(repointed)
            copy = {"prompt_id": new_id(), "prompt": prompt_b,
                    "rubrics": hb_with_clusters(repointed, rng),
                    "example_tags": ["theme:" + t["theme"]]}
            matched = ["rubric_criteria"]
        else:
            copy = {"prompt_id": new_id(), "prompt": json.loads(json.dumps(prompt)),
                    "rubrics": hb_with_clusters(crits2, rng),
                    "example_tags": ["theme:" + t["theme"]]}
            matched = ["prompt"]
        planted.append((i, kind, matched, copy))

    train_pool = ex_words(train_plain) + ex_words([c for _, _, _, c in planted])
    for i in range(n_eval):
        if eval_recs[i] is not None:
            continue
        t = eval_topics[i]
        p, multi, dur, ctx, prompt = eval_prompt(t, None)
        for _attempt in range(2000):
            crits, _ = hb_rubric(t, p, rng)
            if not too_close(crits, train_pool):
                break
        else:
            raise RuntimeError("no distinct rubric for " + t["name"])
        eval_recs[i] = {"prompt_id": new_id(), "prompt": prompt,
                        "rubrics": hb_with_clusters(crits, rng),
                        "example_tags": ["theme:" + t["theme"]]}

    # scatter planted copies through train
    slots = sorted(rng.sample(range(n_train), len(planted)))
    rng.shuffle(planted)
    train_recs, it, pl = [], iter(train_plain), dict(zip(slots, planted))
    leaks, decoys = [], []
    for pos in range(n_train):
        if pos in pl:
            i, kind, matched, copy = pl[pos]
            train_recs.append(copy)
            (decoys if kind == DECOY else leaks).append({
                "eval_prompt_id": eval_recs[i]["prompt_id"], "train_prompt_id": copy["prompt_id"],
                "eval_row": i, "train_row": pos, "kind": kind, "matched": matched,
            })
        else:
            train_recs.append(next(it))
    leaks.sort(key=lambda x: x["eval_row"])
    decoys.sort(key=lambda x: x["eval_row"])

    d = os.path.join(out_dir, "healthbench_rubrics")
    write_jsonl(train_recs, os.path.join(d, "train.jsonl"))
    write_jsonl(eval_recs, os.path.join(d, "eval.jsonl"))
    notes = {
        "rubric_reordered_prompt_reworded": "the eval record's level:example criteria (text, points, tags) all appear in the train record, in a different order; the train prompt asks the same medical question in different words; level:cluster criteria are chosen independently",
        "full_duplicate": "the whole JSON record (prompt_id included) is repeated byte-identically in train",
        "prompt_identical_rubric_different": "the user/assistant turns are identical, but the train record's level:example criteria share no criterion with the eval record's (built from a disjoint set of facts; word Jaccard < 0.7 between any two)",
        DECOY: "decoys, not leaks: the train record has the eval record's level:example criteria (text, tags) in another order behind a reworded prompt, but every criterion with other points; a rubric bank is its criteria with their points, so these are other labels",
        "level_cluster": "level:cluster criteria come from a shared pool of 8 and appear in many records by design; they are not leaks",
        "other_eval_records": "unique prompts (no shared 13-gram, word-3-gram Jaccard < 0.3 with any train prompt) and unique level:example criteria (word Jaccard < 0.7 with every train level:example criterion); their medical topics never occur in train",
    }
    summary = {"n_eval": n_eval, "n_train": n_train, "leaks": leaks, "decoys": decoys, "notes": notes,
               "row_numbers": "0-based line numbers in eval.jsonl / train.jsonl"}
    write_json(summary, os.path.join(d, "expected_leaks.json"))

    # ---- verl-rubric variant ---------------------------------------------
    msg = pa.struct([("role", pa.string()), ("content", pa.string())])
    rub = pa.struct([("criterion", pa.string()), ("points", pa.int64()),
                     ("tags", pa.struct([("level", pa.string()), ("axis", pa.string())]))])
    schema = pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(msg)),
        ("reward_model", pa.struct([("style", pa.string()), ("rubrics", pa.list_(rub))])),
        ("extra_info", pa.struct([("prompt_id", pa.string()), ("index", pa.int64())])),
    ])

    def conv(recs):
        rows = {"data_source": [], "prompt": [], "reward_model": [], "extra_info": []}
        for idx, r in enumerate(recs):
            rubs = []
            for c in r["rubrics"]:
                tg = dict(x.split(":", 1) for x in c["tags"] if x.split(":", 1)[0] in ("level", "axis"))
                rubs.append({"criterion": c["criterion"], "points": c["points"],
                             "tags": {"level": tg["level"], "axis": tg["axis"]}})
            rows["data_source"].append("healthbench")
            rows["prompt"].append(r["prompt"])
            rows["reward_model"].append({"style": "rubric", "rubrics": rubs})
            rows["extra_info"].append({"prompt_id": r["prompt_id"], "index": idx})
        return pa.Table.from_pydict(rows, schema=schema)

    dv = os.path.join(out_dir, "healthbench_rubrics_verl")
    write_parquet(conv(train_recs), os.path.join(dv, "train.parquet"))
    write_parquet(conv(eval_recs), os.path.join(dv, "eval.parquet"))
    summary_v = dict(summary)
    summary_v["row_numbers"] = "0-based row numbers in eval.parquet / train.parquet (= extra_info.index)"
    summary_v["notes"] = dict(notes, verl_variant="same records as ../healthbench_rubrics in the same order; rubric tags are a struct {level, axis} (the cluster:* tag is dropped)")
    write_json(summary_v, os.path.join(dv, "expected_leaks.json"))
    return leaks


# ===========================================================================
# 4. chat_small: GSM8K-style eval questions vs an OpenAI-chat train file
# ===========================================================================
CHAT_SYSTEM = "You are a helpful math tutor."

CHAT_EVAL = [
    ("q1", "Maya buys 4 packs of stickers. Each pack has 12 stickers. She gives 15 stickers to her brother. How many stickers does Maya have left?",
     "Maya buys 4 * 12 = <<4*12=48>>48 stickers.\nAfter giving 15 to her brother, she has 48 - 15 = <<48-15=33>>33 stickers left.\n#### 33"),
    ("q2", "A bakery sells muffins for $3 each and cookies for $2 each. On Saturday it sold 25 muffins and 40 cookies. How much money did the bakery make from these sales?",
     "The muffins bring in 25 * 3 = <<25*3=75>>75 dollars.\nThe cookies bring in 40 * 2 = <<40*2=80>>80 dollars.\nTogether the bakery makes 75 + 80 = <<75+80=155>>155 dollars.\n#### 155"),
    ("q3", "A train travels at 60 miles per hour for 2.5 hours and then at 45 miles per hour for 2 hours. How many miles does the train travel in total?",
     "In the first part of the trip the train covers 60 * 2.5 = <<60*2.5=150>>150 miles.\nIn the second part it covers 45 * 2 = <<45*2=90>>90 miles.\nThe total distance is 150 + 90 = <<150+90=240>>240 miles.\n#### 240"),
    ("q4", "Leo is saving for a bike that costs $180. He already has $54 and saves $21 each week. How many weeks will it take him to have enough money?",
     "Leo still needs 180 - 54 = <<180-54=126>>126 dollars.\nAt 21 dollars a week, that takes 126 / 21 = <<126/21=6>>6 weeks.\n#### 6"),
    ("q5", "A farmer plants 8 rows of corn in his first field and 12 rows in his second field. Each row has 15 corn plants. How many corn plants are there in both fields altogether?",
     "The farmer plants 8 + 12 = <<8+12=20>>20 rows in total.\nWith 15 plants per row, there are 20 * 15 = <<20*15=300>>300 corn plants.\n#### 300"),
    ("q6", "Priya reads 18 pages of her book every day. The book has 342 pages. How many days will it take her to finish the book?",
     "At 18 pages a day, Priya needs 342 / 18 = <<342/18=19>>19 days to finish the book.\n#### 19"),
    ("q7", "A school orders 9 boxes of markers. Each box holds 24 markers. The markers are shared equally among 6 classrooms. How many markers does each classroom get?",
     "The school orders 9 * 24 = <<9*24=216>>216 markers.\nShared among 6 classrooms, each gets 216 / 6 = <<216/6=36>>36 markers.\n#### 36"),
    ("q8", "Tom's garden is a rectangle 14 meters long and 9 meters wide. He wants to put a fence around it, and fencing costs $7 per meter. How much will the fence cost?",
     "The perimeter of the garden is 2 * (14 + 9) = <<2*(14+9)=46>>46 meters.\nThe fence costs 46 * 7 = <<46*7=322>>322 dollars.\n#### 322"),
    ("q9", "A movie theater has 15 rows with 22 seats in each row. For an evening show, 268 tickets were sold. How many seats were empty?",
     "The theater has 15 * 22 = <<15*22=330>>330 seats.\nWith 268 tickets sold, 330 - 268 = <<330-268=62>>62 seats were empty.\n#### 62"),
    ("q10", "Hannah earns $14 per hour at her weekend job. She worked 6 hours on Saturday and 5 hours on Sunday, then spent $37 on a concert ticket. How much of her weekend earnings does she have left?",
     "Hannah works 6 + 5 = <<6+5=11>>11 hours.\nShe earns 11 * 14 = <<11*14=154>>154 dollars.\nAfter the concert ticket she has 154 - 37 = <<154-37=117>>117 dollars left.\n#### 117"),
]

CHAT_TRAIN_CLEAN = [
    ("Sara has 3 times as many marbles as Ben. Ben has 17 marbles. How many marbles do they have together?",
     "Sara has 3 * 17 = <<3*17=51>>51 marbles.\nTogether they have 51 + 17 = <<51+17=68>>68 marbles.\n#### 68"),
    ("A recipe uses 3 eggs to make 12 pancakes. How many eggs are needed to make 36 pancakes?",
     "36 pancakes is 36 / 12 = <<36/12=3>>3 batches.\nEach batch needs 3 eggs, so 3 * 3 = <<3*3=9>>9 eggs are needed.\n#### 9"),
    ("A phone plan costs $25 per month plus $4 for every gigabyte of data. Last month Jordan used 7 gigabytes. What was his bill?",
     "The data costs 7 * 4 = <<7*4=28>>28 dollars.\nThe bill is 25 + 28 = <<25+28=53>>53 dollars.\n#### 53"),
    ("There are 48 students in a club. One third of them play chess, and half of the rest play checkers. How many students play checkers?",
     "48 / 3 = <<48/3=16>>16 students play chess.\nThat leaves 48 - 16 = <<48-16=32>>32 students, and half of them, 32 / 2 = <<32/2=16>>16, play checkers.\n#### 16"),
    ("A water tank holds 500 liters. It is 40% full. How many more liters are needed to fill it?",
     "The tank contains 500 * 0.4 = <<500*0.4=200>>200 liters.\nIt needs 500 - 200 = <<500-200=300>>300 more liters.\n#### 300"),
    ("Carlos runs 5 kilometers on each weekday and 8 kilometers on each weekend day. How many kilometers does he run in one week?",
     "On weekdays he runs 5 * 5 = <<5*5=25>>25 kilometers.\nOn the weekend he runs 2 * 8 = <<2*8=16>>16 kilometers.\nIn total he runs 25 + 16 = <<25+16=41>>41 kilometers.\n#### 41"),
    ("A store sells pencils in packs of 8. Ms. Rivera needs 150 pencils for her students. How many packs must she buy?",
     "150 / 8 = <<150/8=18.75>>18.75, so 18 packs are not enough.\nShe must buy 19 packs.\n#### 19"),
    ("Nina bought 3 notebooks at $4 each and 2 pens at $1.50 each. She paid with a $20 bill. How much change did she get?",
     "The notebooks cost 3 * 4 = <<3*4=12>>12 dollars and the pens cost 2 * 1.50 = <<2*1.5=3>>3 dollars.\nShe spent 12 + 3 = <<12+3=15>>15 dollars, so her change is 20 - 15 = <<20-15=5>>5 dollars.\n#### 5"),
    ("A parking garage has 6 levels with 45 spaces on each level. If 197 cars are parked, how many spaces are free?",
     "The garage has 6 * 45 = <<6*45=270>>270 spaces.\n270 - 197 = <<270-197=73>>73 spaces are free.\n#### 73"),
    ("Grace is 4 years older than her brother. In 6 years, the sum of their ages will be 40. How old is Grace now?",
     "In 6 years both are 6 years older, so today their ages add up to 40 - 12 = <<40-12=28>>28.\nIf her brother is b, then b + (b + 4) = 28, so b = <<(28-4)/2=12>>12.\nGrace is 12 + 4 = <<12+4=16>>16.\n#### 16"),
    ("A baker made 144 rolls and packed them into bags of 8. She sold 15 bags. How many bags are left?",
     "She packed 144 / 8 = <<144/8=18>>18 bags.\nAfter selling 15, 18 - 15 = <<18-15=3>>3 bags are left.\n#### 3"),
    ("A cyclist rides 18 kilometers in 45 minutes. At the same speed, how many kilometers does she ride in 2 hours?",
     "45 minutes is 0.75 hours, so her speed is 18 / 0.75 = <<18/0.75=24>>24 kilometers per hour.\nIn 2 hours she rides 24 * 2 = <<24*2=48>>48 kilometers.\n#### 48"),
    ("Ahmed has $90. He spends a third of it on a jacket and $22 on lunch. How much money does he have left?",
     "The jacket costs 90 / 3 = <<90/3=30>>30 dollars.\nHe spends 30 + 22 = <<30+22=52>>52 dollars and has 90 - 52 = <<90-52=38>>38 dollars left.\n#### 38"),
    ("A classroom has 7 tables with 4 chairs each and 3 extra chairs along the wall. How many chairs are in the room?",
     "The tables have 7 * 4 = <<7*4=28>>28 chairs.\nWith the extra ones there are 28 + 3 = <<28+3=31>>31 chairs.\n#### 31"),
    ("Each of 5 friends orders a sandwich for $8 and a drink for $3. They leave a $9 tip. What is the total cost?",
     "Each friend spends 8 + 3 = <<8+3=11>>11 dollars, so the food costs 5 * 11 = <<5*11=55>>55 dollars.\nWith the tip the total is 55 + 9 = <<55+9=64>>64 dollars.\n#### 64"),
    ("A farmer collects 36 eggs a day. How many dozen eggs does he collect in a week?",
     "In a week he collects 36 * 7 = <<36*7=252>>252 eggs.\nThat is 252 / 12 = <<252/12=21>>21 dozen.\n#### 21"),
    ("The temperature at 6 a.m. was -4 degrees. By noon it rose 11 degrees, and by evening it dropped 5 degrees. What was the evening temperature?",
     "At noon it was -4 + 11 = <<-4+11=7>>7 degrees.\nIn the evening it was 7 - 5 = <<7-5=2>>2 degrees.\n#### 2"),
    ("A library had 1,250 books. It bought 340 new books and removed 95 old ones. How many books does it have now?",
     "After buying, it has 1250 + 340 = <<1250+340=1590>>1590 books.\nAfter removing, it has 1590 - 95 = <<1590-95=1495>>1495 books.\n#### 1495"),
    ("Mia practices piano for 35 minutes each day. How many hours does she practice in 12 days?",
     "She practices 35 * 12 = <<35*12=420>>420 minutes.\nThat is 420 / 60 = <<420/60=7>>7 hours.\n#### 7"),
    ("A box of 24 chocolates costs $18. How much does each chocolate cost, in cents?",
     "$18 is 1800 cents.\nEach chocolate costs 1800 / 24 = <<1800/24=75>>75 cents.\n#### 75"),
    ("Jake scored 78, 85, and 92 on three tests. What score does he need on the fourth test to average 86?",
     "To average 86 over 4 tests he needs 86 * 4 = <<86*4=344>>344 points.\nHe has 78 + 85 + 92 = <<78+85+92=255>>255, so he needs 344 - 255 = <<344-255=89>>89.\n#### 89"),
    ("A rope is 30 meters long. Lila cuts off 4 pieces that are each 3.5 meters long. How many meters of rope remain?",
     "She cuts off 4 * 3.5 = <<4*3.5=14>>14 meters.\n30 - 14 = <<30-14=16>>16 meters remain.\n#### 16"),
    ("A printer prints 16 pages per minute. How many minutes does it take to print 9 copies of a 32-page report?",
     "There are 9 * 32 = <<9*32=288>>288 pages to print.\nAt 16 pages a minute that takes 288 / 16 = <<288/16=18>>18 minutes.\n#### 18"),
    ("A shop raises the price of a $40 jacket by 25% and then offers a $7 discount. What is the final price?",
     "After the increase the jacket costs 40 * 1.25 = <<40*1.25=50>>50 dollars.\nAfter the discount it costs 50 - 7 = <<50-7=43>>43 dollars.\n#### 43"),
    ("Olivia plants 5 tomato seedlings in each of 9 pots. If 8 seedlings do not survive, how many seedlings are left?",
     "She plants 5 * 9 = <<5*9=45>>45 seedlings.\n45 - 8 = <<45-8=37>>37 seedlings are left.\n#### 37"),
]

# planted leaks (eval id -> how it appears in train)
CHAT_EXACT = ["q2", "q7"]
CHAT_NORMALIZED = "q5"
CHAT_NORM_QUESTION = ("A FARMER plants 8 rows of corn in his \ufb01rst  field and \uff11\uff12 rows in his "
                      "sec\u200bond field.   Each row has 15 corn plants. how many corn plants are "
                      "there in both \ufb01elds altogether? ")
CHAT_NORM_ANSWER = ("the farmer plants 8 + 12 = <<8+12=20>>20 rows in total.\n\nWith 15 plants per row,  "
                    "there are 20 * 15 = <<20*15=300>>300 corn plants.\n#### 300 ")
CHAT_PROMPT_ONLY = "q9"
CHAT_PROMPT_ONLY_ANSWER = ("Count the seats first: 15 rows of 22 seats each gives 330 seats in total.\n"
                           "Subtracting the 268 sold tickets leaves 62 empty seats.\n#### 62")
CHAT_TARGET_ONLY = "q3"
CHAT_TARGET_ONLY_QUESTION = ("A freight train moves at 60 mph for two and a half hours, then slows to "
                             "45 mph for another 2 hours. What total distance, in miles, does it cover?")


def chat_normalize(s):
    s = unicodedata.normalize("NFKC", s)
    s = re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", s)
    s = s.casefold()
    return re.sub(r"\s+", " ", s).strip()


def make_chat_small(out_dir):
    rng = random.Random(SEED + 4)
    ev = {q: (question, answer) for q, question, answer in CHAT_EVAL}
    planted = []   # (eval_id, question, answer, field, match, note)
    for q in CHAT_EXACT:
        planted.append((q, ev[q][0], ev[q][1], "prompt+target", "exact",
                        "user turn == question and assistant turn == answer, byte for byte"))
    planted.append((CHAT_NORMALIZED, CHAT_NORM_QUESTION, CHAT_NORM_ANSWER, "prompt+target", "normalized",
                    "question: upper-cased word, lower-cased first letter of a sentence, doubled/trailing "
                    "spaces, a zero-width space (U+200B) inside the word 'second', 'ﬁ' ligatures (U+FB01) and fullwidth digits "
                    "'１２' (NFKC -> '12'); answer: lower-cased first letter, an extra blank line, a "
                    "doubled space and a trailing space. Neither field is byte-identical."))
    planted.append((CHAT_PROMPT_ONLY, ev[CHAT_PROMPT_ONLY][0], CHAT_PROMPT_ONLY_ANSWER, "prompt", "exact",
                    "user turn == question byte for byte; the assistant turn is a different, independently "
                    "worded solution (same final answer 62, but no shared sentence)"))
    planted.append((CHAT_TARGET_ONLY, CHAT_TARGET_ONLY_QUESTION, ev[CHAT_TARGET_ONLY][1], "target", "exact",
                    "assistant turn == answer byte for byte (a 3-line solution, > 10 words); the user "
                    "turn is a differently worded question"))
    n_train = len(CHAT_TRAIN_CLEAN) + len(planted)
    assert n_train == 30
    slots = sorted(rng.sample(range(n_train), len(planted)))
    order = list(range(len(planted)))
    rng.shuffle(order)
    pos_of = {slots[k]: planted[order[k]] for k in range(len(planted))}
    clean = iter(CHAT_TRAIN_CLEAN)
    train, leaks = [], []
    for pos in range(n_train):
        if pos in pos_of:
            q, question, answer, field, match, note = pos_of[pos]
            leaks.append({"eval_id": q, "train_row": pos, "field": field, "match": match, "note": note})
        else:
            question, answer = next(clean)
        train.append({"messages": [{"role": "system", "content": CHAT_SYSTEM},
                                   {"role": "user", "content": question},
                                   {"role": "assistant", "content": answer}]})
    leaks.sort(key=lambda x: int(x["eval_id"][1:]))
    d = os.path.join(out_dir, "chat_small")
    write_jsonl([{"id": q, "question": a, "answer": b} for q, a, b in CHAT_EVAL],
                os.path.join(d, "eval_questions.jsonl"))
    write_jsonl(train, os.path.join(d, "train_chat.jsonl"))
    leaked_ids = {x["eval_id"] for x in leaks}
    write_json({
        "eval_file": "eval_questions.jsonl",
        "train_file": "train_chat.jsonl",
        "fields": {"prompt": "eval 'question' vs train user turn (messages[1].content)",
                   "target": "eval 'answer' vs train assistant turn (messages[2].content)"},
        "train_row": "0-based line number in train_chat.jsonl",
        "normalization": "NFKC, then remove zero-width characters (U+200B, U+200C, U+200D, U+2060, "
                         "U+FEFF), then casefold, then collapse runs of whitespace to one space and strip",
        "leaks": leaks,
        "not_leaked": [q for q, _, _ in CHAT_EVAL if q not in leaked_ids],
        "notes": ["every train record starts with the same system message; that is not a leak",
                  "the prompt-only leak (q9) keeps the same final number (62) with a different "
                  "solution text, so final-answer-only matching would wrongly call it a target leak"],
    }, os.path.join(d, "expected.json"))
    return leaks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(here), "leakcheck", "data"),
                    help="output folder (default: leakcheck/data next to this script's parent)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    make_collabllm(out)
    make_healthbench(out)
    make_chat_small(out)
    total = 0
    for root, _dirs, files in sorted(os.walk(out)):
        for f in sorted(files):
            path = os.path.join(root, f)
            total += os.path.getsize(path)
    print("wrote example datasets to %s (%.1f KB)" % (out, total / 1024))


if __name__ == "__main__":
    main()
