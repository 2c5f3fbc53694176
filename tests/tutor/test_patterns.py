"""Fixed learner patterns: each rule fires where the words leave no other reading, and nowhere else."""

import pytest
from tiny_tutor import read, tiny_tutor

from corrige.tutor.agent import TutorConfig
from corrige.tutor.patterns import pattern_fixes


def fixes(sentence: str) -> list[tuple[str, str, str]]:
    return [(e.original, e.replacement, e.category) for e in pattern_fixes(sentence)]


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("He don't want to come.", [("don't", "doesn't", "third_person")]),
        ("He go home and she like cats.", [("go", "goes", "third_person"), ("like", "likes", "third_person")]),
        (
            "When she study, it have to be quiet.",
            [("study", "studies", "third_person"), ("have", "has", "third_person")],
        ),
        ("The people is friendly.", [("is", "are", "people_plural")]),
        ("People was happy.", [("was", "were", "people_plural")]),
        ("I am agree with you.", [("am agree", "agree", "verb_pattern")]),
        ("I’m agree.", [("I’m agree", "I agree", "verb_pattern")]),
        ("Can you explain me how it works?", [("me", "to me", "verb_pattern")]),
        (
            "I work here since three years.",
            [("work", "have worked", "present_perfect"), ("since", "for", "present_perfect")],
        ),
        ("Last summer we have visited London.", [("have visited", "visited", "past_marker")]),
        ("Last summer, we have visited London.", [("have visited", "visited", "past_marker")]),
        ("I have seen him two days ago.", [("have seen", "saw", "past_marker")]),
        ("She has bought a car last week.", [("has bought", "bought", "past_marker")]),
        ("Yesterday I have been busy.", [("have been", "was", "past_marker")]),
        ("I have been in London last year.", [("have been", "was", "past_marker")]),
        ("We have been there two days ago.", [("have been", "were", "past_marker")]),
        ("I have been to London last year.", [("have been", "went", "past_marker")]),  # not "was to"
        ("I go to the cinema yesterday.", [("go", "went", "past_marker")]),
        ("We play football last Sunday.", [("play", "played", "past_marker")]),
        ("I see him yesterday and he says hello.", [("see", "saw", "past_marker")]),
        ("I went to the cinema and I see a good film.", [("see", "saw", "past_marker")]),
        ("She visited her aunt and then she goes home.", [("goes", "went", "past_marker")]),
        ("When I will arrive, I will call you.", [("will arrive", "arrive", "verb_tense")]),
        ("I will call you when I will arrive.", [("will arrive", "arrive", "verb_tense")]),
        ("If it will rain, we will stay at home.", [("will rain", "rains", "verb_tense")]),
        ("As soon as he will finish, we'll go.", [("will finish", "finishes", "verb_tense")]),
        ("When she will be older, she will understand.", [("will be", "is", "verb_tense")]),
        ("I like very much football.", [("very much football", "football very much", "adverb_position")]),
        (
            "We enjoyed so much the trip to Rome.",
            [("so much the trip to Rome", "the trip to Rome so much", "adverb_position")],
        ),
        ("Can you explain me the rule?", [("me the rule", "the rule to me", "verb_pattern")]),
        (
            "He explained us the rules of the game.",
            [("us the rules of the game", "the rules of the game to us", "verb_pattern")],
        ),
        ("I visited Paris the last summer.", [("the last summer", "last summer", "determiner")]),
        ("The last summer I went to Italy.", [("The last summer", "Last summer", "determiner")]),
        ("I will go to the beach the next week.", [("the next week", "next week", "determiner")]),
        ("I go to school all the days.", [("all the days", "every day", "calque")]),
        ("I think is necessary to study.", [("is", "it is", "missing_subject")]),
        ("We believe is very important to help.", [("is", "it is", "missing_subject")]),
        ("Is very important to study every day.", [("Is", "It is", "missing_subject")]),
        ("Is a good idea to go there.", [("Is", "It is", "missing_subject")]),
        ("If is possible, I will come.", [("is", "it is", "missing_subject")]),
        ("I know is hard, but try.", [("is", "it is", "missing_subject")]),
        ("Do you know where is the station?", [("is the station", "the station is", "word_order")]),
        ("I don't know what is the problem.", [("is the problem", "the problem is", "word_order")]),
        ("Can you tell me what time is it?", [("is it", "it is", "word_order")]),
        ("I wonder how is your mother.", [("is your mother", "your mother is", "word_order")]),
        ("She can speaks English very well.", [("speaks", "speak", "verb_form")]),
        ("She has a lot of experience in teach children.", [("teach", "teaching", "verb_form")]),
        ("I am interested in learn English.", [("learn", "learning", "verb_form")]),
        ("My friend Carlos, that is a doctor, helped me.", [("that", "who", "pronoun")]),
        ("I told my brother, that lives in Madrid.", [("that", "who", "pronoun")]),
        ("When we arrived, the party has already started.", [("has", "had", "verb_tense")]),
        (
            "I like very much football and I play every Saturday.",
            [("very much football", "football very much", "adverb_position")],
        ),
        ("I am 19 years and I am studying Law.", [("years", "years old", "age_have")]),
        ("I'm 25 years.", [("years", "years old", "age_have")]),
        ("It was the first time that I see snow.", [("see", "had seen", "verb_tense")]),
        ("I need that you help me.", [("that you help", "you to help", "verb_pattern")]),
        ("What means this word?", [("means this word", "does this word mean", "question_order")]),
        ("My name is Ana and I have 16.", [("have", "am", "age_have")]),
        ("Each students has a book.", [("students", "student", "noun_number")]),
        ("He will goes to the party.", [("goes", "go", "verb_form")]),
        ("It must has a reason.", [("has", "have", "verb_form")]),
        ("I have a lot of friend in London.", [("friend", "friends", "noun_number")]),
        ("All my friend are here.", [("friend", "friends", "noun_number")]),
        ("Some of my friend live in Madrid.", [("friend", "friends", "noun_number")]),
        ("I made a few mistake.", [("mistake", "mistakes", "noun_number")]),
        ("I'll see you the next Saturday.", [("the next Saturday", "next Saturday", "determiner")]),
        ("I know him since I was a child.", [("know", "have known", "present_perfect")]),
        ("I study English since I was a child.", [("study", "have studied", "present_perfect")]),
        ("Although it was cold, but we went for a walk.", [(", but", ",", "calque")]),
        (
            "and i married with a girl from Peru.",
            [("and", "And", "capitalisation"), ("i married with a girl", "I married a girl", "preposition")],
        ),
        ("I am used to get up early.", [("get", "getting", "verb_form")]),
        ("You will get used to speak English.", [("speak", "speaking", "verb_form")]),
        ("I want that you come to my party.", [("that you come", "you to come", "verb_pattern")]),
        ("My parents want that I study medicine.", [("that I study", "me to study", "verb_pattern")]),
        (
            "I would like that you send me more information.",
            [("that you send", "you to send", "verb_pattern")],
        ),
        ("It's the first time I visit London.", [("visit", "have visited", "present_perfect")]),
        ("This is the first time that she comes here.", [("comes", "has come", "present_perfect")]),
        ("It is the first time I am in Spain.", [("am", "have been", "present_perfect")]),
        ("It depends of the weather.", [("of", "on", "preposition")]),
        ("This is more better.", [("more better", "better", "comparative")]),
        ("More easier is not possible.", [("More easier", "Easier", "comparative")]),
        ("I didn't see nobody.", [("nobody", "anybody", "double_negation")]),
        (
            "There is two cats and there was 3 dogs.",
            [("is", "are", "there_is_plural"), ("was", "were", "there_is_plural")],
        ),
        (
            "I need some advices and informations.",
            [("advices", "advice", "uncountable"), ("informations", "information", "uncountable")],
        ),
        ("I went for to buy bread.", [("for to", "to", "purpose_for")]),
        (
            "I speak english and i'm learning it.",
            [("english", "English", "capitalisation"), ("i'm", "I'm", "capitalisation")],
        ),
        ("We met on monday.", [("monday", "Monday", "capitalisation")]),
        ("I have many friend in Madrid.", [("friend", "friends", "noun_number")]),
        ("I didn't went there and she did not knew it.", [("went", "go", "verb_form"), ("knew", "know", "verb_form")]),
        ("Did you saw him? Why did he left?", [("saw", "see", "verb_form"), ("left", "leave", "verb_form")]),
        ("We discussed about the plan.", [("discussed about", "discussed", "calque")]),
        ("I assisted to a conference.", [("assisted to", "attended", "calque")]),
        ("There are several reason for this.", [("reason", "reasons", "noun_number")]),
        ("She has two child and 3 cat.", [("child", "children", "noun_number"), ("cat", "cats", "noun_number")]),
        ("One of my friend is a doctor.", [("friend", "friends", "noun_number")]),
        ("It is one of the most beautiful city in Spain.", [("city", "cities", "noun_number")]),
        ("we met on Monday.", [("we", "We", "capitalisation")]),
        (
            "we're late and my friend is english.",
            [("we're", "We're", "capitalisation"), ("english", "English", "capitalisation")],
        ),
        ("I have 20 years.", [("have 20 years", "am 20 years old", "age_have")]),
        ("My brother has 30 years old.", [("has", "is", "age_have")]),
        ("I ate a apple and an banana.", [("a", "an", "a_an"), ("an", "a", "a_an")]),
        ("It was an university, a hour away.", [("an", "a", "a_an"), ("a", "an", "a_an")]),
        ("Is raining again.", [("Is", "It is", "missing_subject")]),
        ("My sister is nurse in a hospital.", [("nurse", "a nurse", "profession_article")]),
        ("I'm engineer.", [("engineer", "an engineer", "profession_article")]),
        ("The life is hard.", [("The life", "Life", "generic_the")]),
        ("The technology is changing our lives.", [("The technology", "Technology", "generic_the")]),
        ("The education is very important.", [("The education", "Education", "generic_the")]),
        ("The government must reduce the pollution.", [("the pollution", "pollution", "generic_the")]),
        ("Technology has changed the society.", [("the society", "society", "generic_the")]),
        ("This companies used all this cars.", [("This", "These", "noun_number"), ("this", "these", "noun_number")]),
        (
            "In that days we had another problems.",
            [("that", "those", "noun_number"), ("another", "other", "noun_number")],
        ),
        ("We must protect the nature because it is ours.", [("the nature", "nature", "generic_the")]),
        ("Yesterday I play football.", [("play", "played", "past_marker")]),
        ("Last year, we go to Italy.", [("go", "went", "past_marker")]),
        ("Yesterday she goes home.", [("goes", "went", "past_marker")]),
        ("See you in Monday!", [("in", "on", "preposition")]),
        (
            "I listen music and listened her songs.",
            [("music", "to music", "preposition"), ("her", "to her", "preposition")],
        ),
        (
            "Life is more easy here and more cheap than there.",
            [("more easy", "easier", "comparative"), ("more cheap", "cheaper", "comparative")],
        ),
        ("In my city there is a lot of parks.", [("is", "are", "there_is_plural")]),
        ("There was lots of people.", [("was", "were", "there_is_plural")]),
        ("Is very cold in winter.", [("Is", "It is", "missing_subject")]),
        ("I stayed home because was raining.", [("was", "it was", "missing_subject")]),
        ("She works as waitress.", [("waitress", "a waitress", "profession_article")]),
        ("I enjoy to play the guitar.", [("to play", "playing", "verb_pattern")]),
        (
            "They are very goods and so expensives.",
            [("goods", "good", "adjective_plural"), ("expensives", "expensive", "adjective_plural")],
        ),
        (
            "We buyed apples and they teached us.",
            [("buyed", "bought", "past_irregular"), ("teached", "taught", "past_irregular")],
        ),
        ("He writed it and runned home.", [("writed", "wrote", "past_irregular"), ("runned", "ran", "past_irregular")]),
        ("I have eated and it was maked.", [("eated", "eaten", "past_irregular"), ("maked", "made", "past_irregular")]),
        (
            "My parents is kind and some machines doesn't work.",
            [("is", "are", "agreement"), ("doesn't", "don't", "agreement")],
        ),
        ("Many workers knows the rules.", [("knows", "know", "agreement")]),
        (
            "But I can't to go, and animals should to live free.",
            [
                ("can't to go", "can't go", "verb_form"),
                ("should to live", "should live", "verb_form"),
            ],
        ),
        ("I worked there during three years.", [("during", "for", "preposition")]),
        ("We should do more for promote sport.", [("for", "to", "purpose_for")]),
        ("In the Spain, many people live with their parents.", [("the Spain", "Spain", "determiner")]),
        (
            "Thank you for help me. Thanks for come. I look forward to hear from you.",
            [("help", "helping", "verb_form"), ("come", "coming", "verb_form"), ("hear", "hearing", "verb_form")],
        ),
        (
            "He suggested to go and I recommend to see it.",
            [
                ("to go", "going", "verb_pattern"),
                ("to see", "seeing", "verb_pattern"),
            ],
        ),
        (
            "I go every months with others people.",
            [
                ("months", "month", "noun_number"),
                ("others", "other", "noun_number"),
            ],
        ),
        ("A lot of person came.", [("person", "people", "noun_number")]),
        (
            "My brother don't want to come and his dog don't bark.",
            [
                ("don't", "doesn't", "third_person"),
                ("don't", "doesn't", "third_person"),
            ],
        ),
        (
            "People didn't used to travel. Don't loose it.",
            [
                ("used", "use", "verb_form"),
                ("loose", "lose", "word_confusion"),
            ],
        ),
        ("She lives in the same street than me.", [("than", "as", "comparative")]),
        (
            "It took place in 15 March. Do you can help?",
            [
                ("in", "on", "preposition"),
                ("Do you can", "Can you", "question_order"),
            ],
        ),
        ("They have sixteen years.", [("have sixteen years", "are sixteen years old", "age_have")]),
        ("The weather is more good in spring.", [("more good", "better", "comparative")]),
        ("It was the most bad day of my life.", [("most bad", "worst", "comparative")]),
        ("I have two homeworks for tomorrow.", [("homeworks", "pieces of homework", "uncountable")]),
        ("Teachers give too many homeworks.", [("too many homeworks", "too much homework", "uncountable")]),
    ],
)
def test_a_pattern_is_fixed(sentence, expected):
    assert fixes(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Does he have a car?",  # a question: "have" after "does"
        "We need more good teachers.",  # "more" counts the teachers
        "Most good teachers know that.",
        "Let it go.",  # an object, not a subject
        "Do it right.",
        "I saw she go home.",  # not a clause start: left to the model
        "She cut the bread.",  # "cut" may be past
        "He wants to go.",
        "There is a lot of traffic.",
        "I have lived here since 2015.",
        "I live here since three years ago.",
        "People are friendly and people were happy.",
        "It is more expensive and more other things.",
        "I don't know anything.",
        "The other people have cars.",
        "A crowd of people was waiting.",  # the subject is the crowd
        "She is more clever than beautiful.",  # clever is no comparative
        "I have 5 years of experience.",
        "We met in may, and in march we left.",  # may and march are words in lower case too
        "That is, i.e. the end.",
        "He gave an uninterested look at a university and a one-way ticket.",
        "I want an MBA.",
        "Is it raining?",
        "He is student of law.",
        "The nature of the problem is hard.",
        "Yesterday I put it there.",  # "put" may be past
        "I have lived here since last year.",  # since: the perfect fits
        "Last year I lived in Paris and I have visited London many times.",  # the time is another clause's
        "I have never seen him before, not even last week.",
        "Last time I go there, I will call you.",  # "last time" does not put the clause in the past
        "I saw it yesterday and I go there today.",  # the past marker is not at the start
        "I go to the gym every day, but yesterday I stayed at home.",  # a habit
        "I went there and I like it.",  # a state may still hold
        "I moved here last year and I live with my sister.",
        "Do you go there yesterday?",  # a question: not a story's verb
        "I don't know when he will arrive.",  # a reported question keeps its future
        "I will tell you if it will rain.",
        "When will you arrive?",
        "I have been ill the last week.",  # the week just gone: a perfect fits
        "I spent the last week in bed.",  # the object of "spent"
        "During the last year I studied a lot.",
        "We married in 2010 and had a baby the next year.",  # a story's "the next year"
        "It was the last week of the course.",
        "I like very much that you came.",  # another clause
        "Thank you very much for the present.",
        "Can you explain them to me?",
        "All the days of my life were happy.",  # "of" says which days
        "Is a good idea?",  # a question has its subject after the verb
        "What I think is important is the family.",  # "what I think" is the subject
        "The thing I think is important.",
        "The hotel is old but is very clean.",  # one subject for both verbs
        "I think that is a good idea.",  # "that" may be the subject
        "I know who is coming.",  # "who" is the subject
        "I know what is important.",
        "Where is the station?",  # a question of its own
        "I don't know what is the best.",  # "what" may be the subject
        "His will says nothing.",  # a noun's "will"
        "I have 16 cats.",  # a number of things
        "It fulfills the needs that we have today.",  # a noun's "needs"
        "It's the first time I have ever travelled abroad.",  # a perfect already
        "I am in love with her.",  # "love" a noun
        "We talked about go to the beach.",  # "go" may be a noun ("have a go"): left
        "When you arrive, the party has already started.",  # no past
        "He said that is true.",
        "I like very much cats and play with them.",  # "and play": another verb, not the object
        "He was 30 years in prison.",
        "The technology we use is old.",  # "we use" says which
        "The pollution of the river is terrible.",
        "They have 2 and we have 3.",
        "Each of the students has a book.",
        "What means more to you, money or time?",  # "what" is the subject
        "I spent a lot of time there.",  # an amount, not things counted
        "I visited all the city.",  # the whole city
        "I read all the book in one day.",
        "Some of my friend union.",  # "friend" goes on as a noun phrase
        "We met on Friday and left the next Saturday.",  # a story's "the next"
        "Since I was a child I liked music.",  # a past, not a present
        "Although it was late, we stayed, but not long.",  # the "but" of the main clause
        "It was cold, but we went out.",
        "It is used to make bread.",  # a passive of "use"
        "I used to play tennis.",
        "I want that you will come.",  # a modal: not a verb to put after "to"
        "I like that you came.",  # "like that": a clause is right
        "It was the first time I saw the sea.",  # a story's past
        "It's the first time I have seen it.",  # a perfect already
        "In Monday's paper there was nothing.",
        "Listen to me and listen carefully.",
        "I want more cheap flights and more easy tasks.",  # "more" counts the noun
        "There is a lot of news and a lot of water.",  # no plural noun
        "Is it very cold?",
        "It is so news and she really likes it.",  # "news" is a noun of its own, "likes" a verb
        "The people are not quite barbarians.",  # an adjective that is a noun as well
        "He works as a teacher.",
        "I enjoy to the end.",
        "I learned a lot and putted the ball.",  # words a dictionary knows
        "The plan was costed at two million.",  # "to cost a plan" is a verb of its own
        "We played, cooked and needed a hundred seeds.",  # regular pasts, and -ed words that are none
        "The diamond-paned window and his ringed hand.",  # pan's past is panned; a ringed hand
        "One of the machines doesn't work and the data shows it.",  # the subject is "one"; "data" as a mass
        "The work in the fields was hard, and in his eyes was fear.",  # the subject is "the work"; inversion
        "He did what he could to help, all I can to win, and the will to live.",  # the modal's verb left out
        "During the summer we swam.",  # no length of time
        "I asked for help and for use by the staff.",  # "help", "use" are nouns too
        "The England team and the United States.",  # an article of the team; a name with "the"
        "That many times was the rope doubled.",
        "Before daylight, after work, I look forward to the party and thank you for your help.",
        "How much does it cost? I am not used to it; it was in 1999 March.",  # "does" is do's; a year
        "It is more the same than before.",
        "My parents don't care, my family don't eat meat, and in my city don't rain.",  # plural, group, no subject
        "I bought two dog food bowls and these help me a lot.",  # a compound; a verb after "these"
        "I didn't put it there, I didn't read it and it will assist to reduce costs.",  # pasts that are bases; helps to
        "We talked about the plan and did it well.",
        "Those who are here like both positive and negative news.",  # a function word; an adjective as well
        "In 2010 I spent many time there with 3 out of 4 friends.",  # a year; a mass noun; a function word
        "One of the reasons is money, and both students passed.",  # plurals already
        "The society of Japan is old and the nature of the problem is clear.",  # "of" says which
        "In the society we live in, the Society for Science meets.",  # a clause says which; a name
        "Each of his parents has gene A and one has type A or B.",  # a label, not an article
        "I think that cars are useful and this sports car is fast.",  # a clause's "that"; a compound
        "This phenomena reminds them of that.",  # the verb says the learner meant one thing
    ],
)
def test_a_correct_or_ambiguous_sentence_is_left_alone(sentence):
    assert fixes(sentence) == []


def test_the_tutor_adds_pattern_fixes_only_when_configured():
    answers = ["He don't like it. / sin errores", "She go home. / tercera persona: go → goes"]
    plain = read(tiny_tutor(answers, TutorConfig(min_token_prob=0.5)), "He don't like it.", answers[0])
    assert not plain.changed
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True))
    fixed = read(tutor, "He don't like it.", answers[0])
    assert fixed.corrected == "He doesn't like it." and fixed.gloss == "tercera persona: don't → doesn't"
    assert [e.category for e in fixed.edits] == ["third_person"]


def test_a_pattern_overrules_a_model_edit_inside_its_words():
    """The model dropped "to" ("I enjoy meet you"); the pattern says "meeting", and is right."""
    answers = ["I enjoy meet you. / patrón verbal: to meet → meet", "She enjoys meeting people. / sin errores"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True))
    fixed = read(tutor, "I enjoy to meet you.", answers[0])
    assert fixed.corrected == "I enjoy meeting you." and fixed.gloss == "patrón verbal: to meet → meeting"
    assert [(e.original, e.replacement) for e in fixed.edits] == [("to meet", "meeting")]
    plain = read(tiny_tutor(answers, TutorConfig(min_token_prob=0.5)), "I enjoy to meet you.", answers[0])
    assert plain.corrected == "I enjoy meet you."  # without patterns the model's answer stands


def test_a_purpose_to_overrules_a_model_gerund_after_for():
    """The model made "for get" a "for getting"; the purpose rule says "to get", and is right, even
    where the sentence has another "to" ("want to improve") the answer keeps."""
    answers = ["I want to improve my English for getting a job. / forma verbal: get → getting", "Hi. / sin errores"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True))
    fixed = read(tutor, "I want to improve my English for get a job.", answers[0])
    assert fixed.corrected == "I want to improve my English to get a job."
    assert [(e.original, e.replacement, e.category) for e in fixed.edits] == [("for", "to", "purpose_for")]


def test_a_preposition_rule_overrules_the_models_other_preposition():
    """The model wrote "arrived at Lima"; the rule says "in Lima", and "in" elsewhere in the answer
    ("in the morning") is not the rule's."""
    answers = ["I arrived at Lima in the morning. / preposición: to → at", "Hi. / sin errores"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True))
    fixed = read(tutor, "I arrived to Lima in the morning.", answers[0])
    assert fixed.corrected == "I arrived in Lima in the morning."


def test_a_pattern_the_answer_agrees_with_changes_nothing():
    """The model's "is 51 years old" is the pattern's fix, cut into other edits (has → is, but → old but)."""
    answers = ["She is 51 years old but she sings. / edad con be: has 51 years → is 51 years old"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True))
    fixed = read(tutor, "She has 51 years but she sings.", answers[0])
    assert fixed.corrected == "She is 51 years old but she sings."


@pytest.mark.parametrize(
    "sentence",
    [
        "e.g. this one is better.",
        "iPhone sales went up.",
        "www.bbc.com has the news.",
        "3 cats live here.",
        '"hello," she said.',
    ],
)
def test_a_first_word_that_is_no_lower_case_word_keeps_its_case(sentence):
    assert [e for e in pattern_fixes(sentence) if e.start == 0] == []


def test_a_model_edit_a_pattern_makes_word_for_word_takes_the_patterns_category():
    """The reader's model writes "The life → Life" and names it "artículo"; the generic_the pattern
    makes the same edit, and its category's card is the one about life and nature."""
    from corrige.tutor.agent import READER_MODEL, Tutor

    c = Tutor.load(READER_MODEL).correct("The life is very expensive in Madrid.")
    assert c.corrected == "Life is very expensive in Madrid."
    assert [(e.original, e.replacement, e.category) for e in c.edits] == [("The life", "Life", "generic_the")]
    assert c.gloss.startswith("artículo genérico")


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("I live here since two years.", "I have lived here for two years."),
        ("I work in Madrid since 2015.", "I have worked in Madrid since 2015."),
        ("She is married since 2010.", "She has been married since 2010."),
        ("He works here since last year.", "He has worked here since last year."),
        ("I know him since January.", "I have known him since January."),
        ("We have a car since 2019.", "We have had a car since 2019."),
        ("I am living here since 2015.", "I have been living here since 2015."),
    ],
)
def test_a_present_with_since_a_time_becomes_a_present_perfect(sentence, expected):
    from corrige.tutor.edits import apply_edits

    assert apply_edits(sentence, pattern_fixes(sentence)) == expected
    assert "present_perfect" in {e.category for e in pattern_fixes(sentence)}


@pytest.mark.parametrize(
    "sentence",
    [
        "I stayed at home since it was raining.",  # since: a reason
        "Do you live here since 2015?",  # a question: not a local fix
        "I have lived here since 2015.",
        "He has known her since 2001.",
        "I study English since I was tired.",  # "since I was" + a state: a reason
        "I lived there since 2010, until I moved.",
    ],
)
def test_a_perfect_a_question_or_a_reason_with_since_is_left_alone(sentence):
    assert [e for e in pattern_fixes(sentence) if e.category == "present_perfect"] == []
