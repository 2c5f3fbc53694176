"""Tricky texts for the sentence splitter, each with its sentences as a reader splits them.

A case is a list of sentences joined by one space, or a `(text, sentences)` pair where the
layout (line breaks, double spaces, list markers) matters. Written for the tests: learner
English with abbreviations, numbers, quotes, ellipses, lists and line breaks.
"""

JOINED: list[list[str]] = [
    # abbreviations
    ["Mr. Smith is my new teacher.", "He is very kind."],
    ["Mrs. Brown lives next door.", "She has two cats."],
    ["I saw Dr. Lopez yesterday.", "He said I am fine."],
    ["Ms. Garcia teaches English at my school."],
    ["I like fruit, e.g. apples and pears.", "My sister prefers chocolate."],
    ["We need a lot of things, i.e. food, water and clothes."],
    ["I bought apples, pears, etc.", "My mother made a cake."],
    ["The meeting starts at 9 a.m. and finishes at noon."],
    ["I will call you at 6 p.m.", "We can talk then."],
    ["I lived in the U.S.", "It was a great experience."],
    ["My cousin studied in the U.K. for two years."],
    ["Prof. Martin gave a talk about climate change."],
    ["St. Patrick's Day is in March.", "We always celebrate it."],
    ["He works for Acme Inc. in Boston."],
    ["The film was made in approx. three months."],
    ["Dr. and Mrs. Jones invited us to dinner."],
    ["I met Mr. and Mrs. Taylor at the party.", "They were very friendly."],
    ["My address is 10 Downing St. in London."],
    ["Barcelona vs. Madrid is the big match of the year."],
    ["Jr. players train on Mondays."],
    # numbers
    ["The train leaves at 19.30.", "Don't be late."],
    ["It costs 3.50 euros.", "That is cheap."],
    ["I have 2.5 kilos of rice."],
    ["My flat is 75.5 square metres.", "It is small but nice."],
    ["The price went up by 10.5 percent last year."],
    ["We were 1,000 people at the concert."],
    ["I was born on 12.05.1998 in Sevilla."],
    ["Version 2.0 of the app is much better."],
    ["The temperature was 38.7 degrees yesterday.", "It was too hot."],
    ["I ran 5.2 km this morning.", "Then I had breakfast."],
    ["Chapter 3 is the most difficult one."],
    ["I got 9.5 in the exam!", "My parents were happy."],
    ["The bus number 27 goes to the centre."],
    ["In 2019 I moved to London.", "In 2021 I came back."],
    ["My phone number is 600 123 456.", "Call me."],
    # quotes
    ['My boss said: "You are very good with the clients."', "I agree with him."],
    ['She asked me "Why are you sad?" and I did not answer.'],
    ['"I am tired," she said.', "Then she went to bed."],
    ['He told me "Never give up!" and I never did.'],
    ["My friend said 'see you tomorrow' but he didn't come."],
    ["“I love this city,” said my sister.", "She wants to live here."],
    ['The sign said "No parking".', "We parked there anyway."],
    ['"Where is the station?" I asked.'],
    ['I read a book called "The Old Man and the Sea".', "It was short."],
    ['She shouted "Help!" and everybody ran.'],
    # ellipses
    ["I was thinking... maybe we could go to the beach."],
    ["I waited and waited...", "Nobody came."],
    ["Well... I don't know what to say."],
    ["The film was long… very long."],
    ["I was tired…", "Then I went to bed."],
    ["I have many hobbies: reading, swimming, cooking..."],
    ["So... what do you think?"],
    ["We arrived late...", "The shop was closed."],
    # questions and exclamations
    ["Where do you live?", "I live in Madrid."],
    ["What a beautiful day!", "Let's go to the park."],
    ["Can you help me?", "I don't understand this exercise."],
    ["Really?!", "I can't believe it."],
    ["Is it true?", "Yes, it is."],
    ["Hello!", "How are you?", "I am fine, thank you."],
    ["Why not?"],
    ["Wow!", "That's amazing!"],
    # brackets and dashes
    ["I live in Bilbao (in the north of Spain).", "It rains a lot."],
    ["My brother (he is 20) studies medicine."],
    ["I said (really!) that I was sorry."],
    ["My best friend – Laura – lives in Paris."],
    ["We went to the museum; it was closed."],
    ["I have three sisters: Ana, Rosa and Lucia."],
    # learner style
    ["i went to the cinema yesterday.", "it was very good."],
    ["yesterday i goed to the store.", "i buyed a new phone."],
    ["My english is not very good.", "I am studying every day."],
    ["I have 25 years.", "I live in Madrid since 2019."],
    ["She have a car red.", "Is very fast."],
    ["People is very friendly here.", "I like it."],
    ["I am agree with you.", "You are right."],
    ["Last summer I visited London, Paris and Rome."],
    ["I like the music, the films and the books."],
    ["My mother cooks very well, specially paella."],
    # addresses, emails, times
    ["Write to me at ana.lopez@example.com.", "I will answer soon."],
    ["Visit www.example.com for more information."],
    ["The office is open from 9:00 to 17:30.", "It is closed on Sundays."],
    ["See you on Monday at 8.45.", "Don't forget your book."],
    ["It happened in the 90s.", "I was a child."],
]

LAYOUT: list[tuple[str, list[str]]] = [
    (
        "Dear Mrs. Brown,\n\nI am writing to you about the job.",
        ["Dear Mrs. Brown,", "I am writing to you about the job."],
    ),
    ("Hi Tom,\nHow are you?\nI am fine.", ["Hi Tom,", "How are you?", "I am fine."]),
    ("Best regards,\nAna", ["Best regards,", "Ana"]),
    ("I need to buy:\n- milk\n- bread\n- eggs", ["I need to buy:", "- milk", "- bread", "- eggs"]),
    (
        "My plans:\n1. Study English.\n2. Find a job.\n3. Travel.",
        ["My plans:", "1. Study English.", "2. Find a job.", "3. Travel."],
    ),
    ("* I like cats\n* I don't like dogs", ["* I like cats", "* I don't like dogs"]),
    ("a) She go to school.\nb) She goes to school.", ["a) She go to school.", "b) She goes to school."]),
    (
        "I have been living in Madrid\nsince 2019 and I like it.",
        ["I have been living in Madrid\nsince 2019 and I like it."],
    ),
    ("I went to the park.  Then I went home.", ["I went to the park.", "Then I went home."]),
    ("First paragraph here.\n\n\nSecond paragraph here.", ["First paragraph here.", "Second paragraph here."]),
    ("  Leading spaces are fine.  ", ["Leading spaces are fine."]),
    ("Thanks for your help!\n\nCheers,\nLuis", ["Thanks for your help!", "Cheers,", "Luis"]),
    ("• I wake up at 7.\n• I have breakfast at 7.30.", ["• I wake up at 7.", "• I have breakfast at 7.30."]),
    ("Subject: my holidays\n\nLast summer I went to Italy.", ["Subject: my holidays", "Last summer I went to Italy."]),
    ("I think that\nthe exam was easy.", ["I think that\nthe exam was easy."]),
    ("It was great.\r\nI want to go again.", ["It was great.", "I want to go again."]),
    (
        "Dear Sir or Madam,\n\nI would like to complain about my order.\nIt arrived late.\n\n"
        "Yours faithfully,\nMaria Perez",
        [
            "Dear Sir or Madam,",
            "I would like to complain about my order.",
            "It arrived late.",
            "Yours faithfully,",
            "Maria Perez",
        ],
    ),
    ("1) Open the book.\n2) Read the text.", ["1) Open the book.", "2) Read the text."]),
    ("Note: the class is at 10.30 a.m. tomorrow.", ["Note: the class is at 10.30 a.m. tomorrow."]),
    ("P.S. Say hello to your mother.", ["P.S. Say hello to your mother."]),
]


def cases() -> list[tuple[str, list[str]]]:
    return [(" ".join(sentences), sentences) for sentences in JOINED] + LAYOUT
