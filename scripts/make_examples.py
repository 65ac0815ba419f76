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
                           rubric-bank / prompt leaks of three kinds.
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
