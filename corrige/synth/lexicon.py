"""Vocabulary for the clean-sentence grammar.

Everything the generator may say lives here, so that naturalness can be reviewed in one place
and the error generators can rely on exact word classes instead of guessing from spelling.

Phrase strings use a small notation understood by ``grammar.phrase``:

* ``{p}`` is the possessive of the clause subject (my, your, his, her, our, their);
* ``{city}``, ``{country}``, ``{day}``, ``{month}``, ``{year}``, ``{lang}`` pick a word;
* ``word|key=value`` attaches a flag to the word; ``_`` in a value stands for a space and ``~``
  for "nothing". Flags: ``p`` = what a learner writes instead (preposition errors), ``pi`` =
  preposition a learner inserts before the word, ``vp`` = verb-pattern replacement.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# People
# ---------------------------------------------------------------------------------------------
MALE_NAMES = (
    "Carlos", "Juan", "Pedro", "Diego", "Javier", "Miguel", "Luis", "Pablo", "Alejandro",
    "Jorge", "Tom", "John", "David", "Peter", "Mark", "James", "Daniel", "Michael",
)
FEMALE_NAMES = (
    "Maria", "Ana", "Lucia", "Carmen", "Sofia", "Laura", "Elena", "Isabel", "Marta", "Paula",
    "Emma", "Sarah", "Kate", "Lucy", "Julia", "Emily", "Anna", "Alice",
)

# Family nouns with the gender that decides his/her; "n" means either.
KIN_GENDER: dict[str, str] = {
    "mother": "f", "father": "m", "sister": "f", "brother": "m", "wife": "f", "husband": "m",
    "son": "m", "daughter": "f", "grandmother": "f", "grandfather": "m", "aunt": "f",
    "uncle": "m", "girlfriend": "f", "boyfriend": "m", "cousin": "n",
}
KIN_SINGULAR = tuple(k for k in KIN_GENDER if k not in ("wife", "husband", "girlfriend",
                                                        "boyfriend"))
KIN_PLURAL = ("parents", "grandparents", "friends", "cousins", "neighbours", "children")

PROFESSIONS = (
    "teacher", "doctor", "nurse", "engineer", "lawyer", "waiter", "cook", "architect", "artist",
    "actor", "accountant", "electrician", "mechanic", "student", "journalist", "pilot",
    "dentist", "farmer", "hairdresser", "programmer", "designer", "photographer", "musician",
    "singer", "writer", "firefighter", "secretary", "cleaner", "taxi driver", "bus driver",
    "scientist", "economist", "pharmacist", "plumber", "manager", "baker", "painter",
    "receptionist", "police officer", "shop assistant", "vet", "interpreter", "translator",
    "office worker", "chef", "psychologist", "English teacher", "Spanish teacher",
)
PROFESSION_ADJECTIVES = ("good", "excellent", "famous", "new", "young", "old", "great")

# ---------------------------------------------------------------------------------------------
# Places, languages, dates
# ---------------------------------------------------------------------------------------------
CITIES = (
    "Madrid", "Barcelona", "Seville", "Valencia", "Bilbao", "Malaga", "Granada", "Toledo",
    "London", "Paris", "Rome", "Berlin", "Dublin", "Lisbon", "Lima", "Bogota", "Santiago",
    "Buenos Aires", "Mexico City", "New York", "Edinburgh", "Oxford",
)
COUNTRIES = (
    "Spain", "Mexico", "France", "Italy", "Germany", "Portugal", "Ireland", "England",
    "Argentina", "Colombia", "Peru", "Chile", "Japan", "China", "Brazil", "Scotland",
)
NATIONALITIES = (
    "Spanish", "Mexican", "French", "Italian", "German", "Portuguese", "Irish", "English",
    "Argentinian", "Colombian", "Peruvian", "Chilean", "Japanese", "Chinese", "Brazilian",
    "Scottish", "American", "British",
)
LANGUAGES = (
    "English", "Spanish", "French", "German", "Italian", "Portuguese", "Chinese", "Japanese",
    "Catalan", "Russian", "Arabic",
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
CAPITALISED = frozenset(
    DAYS + MONTHS + LANGUAGES + NATIONALITIES + tuple(d + "s" for d in DAYS)
)
SMALL_NUMBERS = ("two", "three", "four", "five", "six", "ten", "twenty")
SCHOOL_SUBJECTS = ("maths", "history", "biology", "chemistry", "physics", "art", "music",
                   "geography", "economics")
SPORTS = ("football", "tennis", "basketball", "volleyball", "golf", "chess", "rugby")
MEALS = ("breakfast", "lunch", "dinner")
ABSTRACT_NOUNS = ("life", "love", "nature", "health", "happiness", "friendship", "freedom",
                  "education")

# ---------------------------------------------------------------------------------------------
# Verbs
# ---------------------------------------------------------------------------------------------
IRREGULAR: dict[str, tuple[str, str]] = {
    "be": ("was", "been"), "have": ("had", "had"), "do": ("did", "done"),
    "go": ("went", "gone"), "buy": ("bought", "bought"), "teach": ("taught", "taught"),
    "eat": ("ate", "eaten"), "drink": ("drank", "drunk"), "write": ("wrote", "written"),
    "speak": ("spoke", "spoken"), "come": ("came", "come"), "make": ("made", "made"),
    "take": ("took", "taken"), "see": ("saw", "seen"), "know": ("knew", "known"),
    "think": ("thought", "thought"), "say": ("said", "said"), "tell": ("told", "told"),
    "give": ("gave", "given"), "get": ("got", "got"), "find": ("found", "found"),
    "lose": ("lost", "lost"), "leave": ("left", "left"), "meet": ("met", "met"),
    "bring": ("brought", "brought"), "catch": ("caught", "caught"),
    "choose": ("chose", "chosen"), "drive": ("drove", "driven"), "fly": ("flew", "flown"),
    "forget": ("forgot", "forgotten"), "hear": ("heard", "heard"), "pay": ("paid", "paid"),
    "read": ("read", "read"), "ride": ("rode", "ridden"), "run": ("ran", "run"),
    "sing": ("sang", "sung"), "sit": ("sat", "sat"), "sleep": ("slept", "slept"),
    "spend": ("spent", "spent"), "swim": ("swam", "swum"),
    "understand": ("understood", "understood"), "wear": ("wore", "worn"),
    "win": ("won", "won"), "break": ("broke", "broken"), "send": ("sent", "sent"),
    "sell": ("sold", "sold"), "feel": ("felt", "felt"), "begin": ("began", "begun"),
    "build": ("built", "built"), "put": ("put", "put"), "draw": ("drew", "drawn"),
    "grow": ("grew", "grown"), "wake": ("woke", "woken"), "can": ("could", "could"),
}
# What learners write for the past of an irregular verb ("put" has no useful wrong form).
OVERREGULARISED: dict[str, str] = {
    "go": "goed", "buy": "buyed", "teach": "teached", "eat": "eated", "drink": "drinked",
    "write": "writed", "speak": "speaked", "come": "comed", "make": "maked", "take": "taked",
    "see": "seed", "know": "knowed", "think": "thinked", "tell": "telled", "give": "gived",
    "get": "getted", "find": "finded", "lose": "losed", "leave": "leaved", "meet": "meeted",
    "bring": "bringed", "catch": "catched", "choose": "choosed", "drive": "drived",
    "fly": "flyed", "forget": "forgetted", "hear": "heared", "pay": "payed", "read": "readed",
    "ride": "rided", "run": "runned", "sing": "singed", "sit": "sitted", "sleep": "sleeped",
    "spend": "spended", "swim": "swimmed", "understand": "understanded", "wear": "weared",
    "win": "winned", "break": "breaked", "send": "sended", "sell": "selled", "feel": "feeled",
    "begin": "beginned", "build": "builded", "draw": "drawed", "grow": "growed",
    "wake": "waked", "have": "haved", "say": "sayed",
}
# Verbs that double their final consonant before -ed / -ing.
DOUBLE_FINAL = frozenset({
    "stop", "plan", "shop", "chat", "travel", "prefer", "jog", "drop", "run", "swim", "sit",
    "get", "begin", "put", "win", "forget", "cut",
})

# Transitive activities: verb -> natural objects (articles included).
ACTIVITIES: dict[str, tuple[str, ...]] = {
    "eat": ("an apple", "fruit", "fish", "a sandwich", "pasta", "salad", "vegetables",
            "chocolate", "eggs", "rice", "a pizza", "an orange", "meat", "soup"),
    "drink": ("coffee", "tea", "water", "milk", "orange juice", "a glass of water", "wine"),
    "cook": ("dinner", "lunch", "pasta", "rice", "fish", "vegetables", "paella", "an omelette"),
    "read": ("a book", "the newspaper", "a magazine", "a novel", "comics", "the news",
             "an article", "a story"),
    "write": ("an email", "a letter", "a message", "a story", "a report", "a song", "poems"),
    "watch": ("TV", "a film", "films", "the news", "a series", "the match", "videos"),
    "buy": ("a new car", "a bike", "bread", "a jacket", "shoes", "a present", "a ticket",
            "fruit", "a phone", "an umbrella", "milk", "a house", "a computer", "flowers"),
    "sell": ("{p} car", "{p} bike", "{p} house", "{p} old phone", "fruit", "clothes"),
    "visit": ("{p} grandparents", "the museum", "{city}", "{p} cousins", "a castle",
              "{p} aunt", "{p} uncle"),
    "call": ("{p} mother", "{p} father", "{p} sister", "{p} brother", "{p} friends",
             "the doctor", "{p} grandmother"),
    "help": ("{p} mother", "{p} father", "{p} brother", "{p} sister", "{p} neighbours",
             "{p} friends", "{p} grandfather"),
    "meet": ("{p} friends", "{p} cousins", "{p} girlfriend", "{p} boyfriend"),
    "clean": ("the kitchen", "the house", "{p} room", "the car", "the bathroom", "the flat"),
    "learn": ("{lang}", "a new language", "to swim", "to drive", "to cook", "to play the piano"),
    "speak": ("{lang}", "{lang} at work", "two languages", "{lang} very well"),
    "study": ("{lang}", "maths", "history", "biology", "medicine", "law", "chemistry", "physics"),
    "teach": ("{lang}", "maths", "history", "music", "art", "chemistry"),
    "need": ("a new phone", "help", "money", "a new computer", "a holiday", "a car"),
    "want": ("a new bike", "a dog", "a cat", "a new phone", "a bigger flat", "a coffee"),
    "wear": ("a jacket", "glasses", "a uniform", "a hat", "jeans", "a black dress"),
    "lose": ("{p} keys", "{p} phone", "{p} wallet", "{p} umbrella", "{p} bag"),
    "find": ("{p} keys", "{p} phone", "a good job", "a cheap flat", "{p} glasses"),
    "forget": ("{p} keys", "{p} umbrella", "{p} password", "{p} books"),
    "bring": ("a cake", "some food", "{p} guitar", "a bottle of wine", "{p} children"),
    "send": ("an email", "a message", "a letter", "photos", "a postcard"),
    "drive": ("a red car", "a taxi", "a bus", "an old car", "a truck"),
    "ride": ("a bike", "a horse", "a motorbike"),
    "sing": ("a song", "songs", "a love song"),
    "draw": ("a picture", "pictures", "animals", "a map"),
    "open": ("the window", "the door", "the shop", "a bank account"),
    "paint": ("the kitchen", "the house", "a picture", "{p} room"),
    "fix": ("the car", "the computer", "{p} bike", "the washing machine"),
    "use": ("the computer", "{p} phone", "a dictionary", "the car"),
    "catch": ("the bus", "the train", "a cold", "a fish"),
    "pay": ("the bill", "the rent"),
    "grow": ("vegetables", "tomatoes", "flowers"),
    "make": ("a cake", "dinner", "breakfast", "a sandwich", "coffee", "pancakes"),
    "wash": ("the dishes", "the car", "{p} clothes"),
    "order": ("a pizza", "a coffee", "fish", "a salad"),
    "play": ("the guitar", "the piano", "video games", "cards", "the violin"),
    "win": ("the match", "the game", "a prize", "the race"),
}

# Intransitive verbs with a place or manner complement.
PLACES: dict[str, tuple[str, ...]] = {
    "live": ("in {city}", "in a small flat", "near the beach", "with {p} parents",
             "in the city centre", "in a village", "in {country}", "in a big house"),
    "work": ("at a hospital", "in an office", "in a bank", "at a school", "in a restaurant",
             "in a shop", "from home", "at the airport", "in a hotel", "in a factory",
             "at the university"),
    "go": ("to school", "to work", "to the gym", "to the cinema", "to the beach", "to the park",
           "to bed", "home|pi=to", "to the supermarket", "to {city}", "to the doctor",
           "to work by|p=in bus", "to school by|p=in car", "to the market"),
    "come": ("home|pi=to", "to class", "to the party", "to {city}", "to the meeting"),
    "walk": ("to school", "to work", "in the park", "along the beach", "home|pi=to"),
    "run": ("in the park", "along the beach", "in the mountains"),
    "swim": ("in the sea", "in the pool", "in the river", "in the lake"),
    "travel": ("to {country}", "by|p=in train", "around Europe", "to {city}", "by|p=in plane"),
    "stay": ("at home", "in a hotel", "with {p} grandparents", "in bed", "at|p=in home"),
    "arrive": ("at|p=to the airport", "at|p=to school", "in|p=to {city}", "at|p=to work",
               "at|p=to the station", "in|p=to {country}", "late"),
    "wait": ("for|p=~ the bus", "for|p=~ the train", "for|p=~ {p} sister",
             "for|p=~ a taxi", "for|p=~ {p} friends"),
    "listen": ("to|p=~ music", "to|p=~ the radio", "to|p=~ podcasts", "to|p=~ {p} teacher"),
    "think": ("about|p=in {p} family", "about|p=in the exam", "about|p=in the future",
              "about|p=in {p} holidays"),
    "dream": ("about|p=with the holidays", "about|p=with {p} family", "about|p=with the sea"),
    "talk": ("to {p} friends", "about football", "on the phone", "to {p} parents"),
    "look": ("at|p=~ the board", "at|p=~ the photos", "at|p=~ the map"),
    "dance": ("at the party", "in the kitchen", "salsa"),
    "sleep": ("at|p=in home", "in a tent", "on the sofa", "very well"),
    "study": ("at the library", "at university", "at home", "in {country}"),
    "get up": ("early", "at seven", "late", "at six o'clock"),
    "go out": ("with {p} friends", "at night", "on|p=in {day}"),
}

# ---------------------------------------------------------------------------------------------
# Nouns
# ---------------------------------------------------------------------------------------------
IRREGULAR_PLURALS: dict[str, str] = {
    "child": "children", "person": "people", "man": "men", "woman": "women",
    "tomato": "tomatoes", "potato": "potatoes", "knife": "knives", "wife": "wives",
    "shelf": "shelves", "foot": "feet", "tooth": "teeth", "mouse": "mice", "leaf": "leaves",
    "photo": "photos", "piano": "pianos",
}
# Uncountable nouns and the plural a learner invents for them.
UNCOUNTABLE_PLURALS: dict[str, str] = {
    "advice": "advices", "information": "informations", "furniture": "furnitures",
    "homework": "homeworks", "luggage": "luggages", "bread": "breads", "traffic": "traffics",
    "equipment": "equipments", "knowledge": "knowledges", "hair": "hairs",
    "money": "moneys", "research": "researches",
}

ADJ_GROUPS: dict[str, tuple[str, ...]] = {
    "colour": ("red", "blue", "green", "black", "white", "yellow", "grey", "brown"),
    "fruit": ("red", "green"),
    "size": ("big", "small"),
    "age": ("new", "old"),
    "price": ("cheap", "expensive"),
    "look": ("nice", "beautiful"),
    "story": ("interesting", "boring", "funny", "long", "short", "good", "sad"),
    "taste": ("delicious", "fresh", "healthy"),
    "person": ("tall", "young", "friendly", "kind", "nice", "funny", "clever", "new"),
    "place": ("quiet", "noisy", "beautiful", "modern", "famous", "popular", "nice", "old",
              "big", "small", "new", "expensive", "cheap"),
    "speed": ("fast", "slow"),
    "comfort": ("comfortable",),
}
# Countable nouns a learner can describe with an adjective, with the adjective groups that fit.
DESCRIBABLE: dict[str, tuple[str, ...]] = {
    "car": ("colour", "size", "age", "price", "speed"), "bike": ("colour", "age", "price"),
    "phone": ("age", "price"), "computer": ("age", "price", "speed"),
    "jacket": ("colour", "age", "price", "look"), "dress": ("colour", "price", "look"),
    "shirt": ("colour", "age", "price"), "bag": ("colour", "size", "price"),
    "umbrella": ("colour", "size"), "hat": ("colour", "look"), "watch": ("age", "price"),
    "house": ("size", "age", "price", "look"), "flat": ("size", "age", "price", "comfort"),
    "sofa": ("comfort", "colour", "size"), "book": ("story", "age"), "novel": ("story",),
    "film": ("story",), "song": ("story", "look"), "story": ("story",), "game": ("story",),
    "apple": ("taste", "fruit", "size"), "cake": ("taste", "size"), "egg": ("size",),
    "sandwich": ("taste", "size"), "orange": ("taste", "size"), "tomato": ("taste", "fruit"),
    "friend": ("person",), "teacher": ("person",), "neighbour": ("person",),
    "girl": ("person",), "boy": ("person",), "man": ("person",), "woman": ("person",),
    "dog": ("colour", "size", "person"), "cat": ("colour", "size"), "horse": ("colour",),
    "restaurant": ("place",), "hotel": ("place",), "city": ("place",), "town": ("place",),
    "village": ("place",), "park": ("place",), "museum": ("place",), "beach": ("place",),
    "street": ("place",), "building": ("place",), "shop": ("place",), "cafe": ("place",),
    "shoe": ("colour", "price", "age"), "bed": ("comfort", "size"), "chair": ("comfort",),
}
# Plural-only contexts that sound best with a plural noun.
NOUN_IN_PLACE = {
    "restaurant": "in {city}", "hotel": "in {city}", "park": "in {city}",
    "museum": "in {city}", "beach": "in {country}", "building": "in {city}",
    "shop": "in {p} street", "cafe": "near {p} house", "street": "in {p} town",
    "village": "in {country}", "town": "in {country}",
}

# ---------------------------------------------------------------------------------------------
# Adjectives
# ---------------------------------------------------------------------------------------------
COMPARATIVE_IRREGULAR = {"good": "better", "bad": "worse", "far": "further"}
SUPERLATIVE_IRREGULAR = {"good": "best", "bad": "worst", "far": "furthest"}
# Adjectives whose comparative takes "more" (so "more X" is correct, not an error).
LONG_ADJECTIVES = frozenset({
    "interesting", "boring", "beautiful", "expensive", "difficult", "important", "popular",
    "famous", "delicious", "comfortable", "dangerous", "modern", "careful", "useful",
    "tired", "crowded", "relaxing", "exciting",
})
# Short adjectives for which "more X" / "the most X" is clearly wrong.
SHORT_ADJECTIVES = frozenset({
    "big", "small", "old", "new", "young", "tall", "short", "long", "cheap", "fast", "slow",
    "cold", "hot", "warm", "easy", "nice", "large", "good", "bad", "rich", "strong", "near",
    "high", "late", "early", "far",
})
