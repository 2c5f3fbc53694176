"""The rules and table lines of a round of adults' emails and exam texts (`noun_phrase_patterns.py`,
the weather's "it", "than" + -ing, "people in my town is", "one of them live", a superlative's
place, and the table lines that came with them): each fires where the words leave no other reading,
and the correct readings beside them stay."""

import pytest

from corrige.tutor.edits import apply_edits
from corrige.tutor.patterns import pattern_fixes


def fixed(sentence: str) -> str:
    return apply_edits(sentence, pattern_fixes(sentence))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I stayed in the room 304 last weekend.", "I stayed in room 304 last weekend."),
        ("My son is in the class 3B.", "My son is in class 3B."),
        ("I send you my bank details in other email.", "I send you my bank details in another email."),
        ("I moved to other city last year.", "I moved to another city last year."),
        ("They need other car.", "They need another car."),
        ("It has more than 13 millions of people.", "It has more than 13 million people."),
        ("I am the father of Mateo.", "I am Mateo's father."),
        ("I'm free since 3 until 5.", "I'm free from 3 until 5."),
        ("I lived there since 2010 until 2015.", "I lived there from 2010 until 2015."),  # not "have lived"
        ("I am available since June until September.", "I am available from June until September."),
        ("I am available since the 1st of July until August.", "I am available from the 1st of July until August."),
        ("In September is still very hot here.", "In September it is still very hot here."),
        ("But in winter can be quite cold.", "But in winter it can be quite cold."),
        ("Uniforms are cheaper than buy new clothes.", "Uniforms are cheaper than buying new clothes."),
        ("The people in my town is very friendly.", "The people in my town are very friendly."),
        ("The people here is very friendly.", "The people here are very friendly."),
        ("I have two brothers and one of them live in Miami.", "I have two brothers and one of them lives in Miami."),
        ("One of my friends work in a bank.", "One of my friends works in a bank."),
        ("This is the best fabada of Spain.", "This is the best fabada in Spain."),
        ("It is the best beach of my town.", "It is the best beach in my town."),
        ("They have a house with a garden very big.", "They have a house with a very big garden."),
        (
            "I left the flat the last Sunday and I gave you the keys.",
            "I left the flat last Sunday and I gave you the keys.",
        ),
        ("There are not cars in the centre.", "There are no cars in the centre."),
        ("She has worked there since fifteen years.", "She has worked there for fifteen years."),
        ("It is the perfect place for relax and read.", "It is the perfect place to relax and read."),
        ("I not like it.", "I don't like it."),
        ("She not works here.", "She doesn't work here."),
        ("I pay for a service that not work.", "I pay for a service that doesn't work."),
        ("People who not study fail.", "People who don't study fail."),
        ("Yesterday I not go to school.", "Yesterday I didn't go to school."),
        # table lines
        ("I take classes in the nights.", "I take classes at night."),
        ("In your web page says that there is parking.", "Your web page says that there is parking."),
        ("I hope your prompt response.", "I look forward to your prompt response."),
        ("If someone has ideas, send me them today.", "If someone has ideas, send them to me today."),
        ("Please return me the money.", "Please return the money to me."),
        ("It is five minutes walking from the beach.", "It is a five-minute walk from the beach."),
        ("There are many places for visit.", "There are many places to visit."),
        ("Two agents were in vacations.", "Two agents were on vacation."),
        ("I am very sorry for the inconveniences.", "I am very sorry for the inconvenience."),
        ("Let me know if you have any question.", "Let me know if you have any questions."),
        ("I will call you tomorrow in the morning.", "I will call you tomorrow morning."),
        ("Nobody responded me.", "Nobody responded to me."),
        ("It has old buildings and lot of shops.", "It has old buildings and a lot of shops."),
        ("He has a exam of maths.", "He has a maths exam."),
        ("Thank you for your comprehension.", "Thank you for your understanding."),
        ("My phone fell to the water.", "My phone fell into the water."),
        ("The hotel is next of the station.", "The hotel is next to the station."),
        ("He works of taxi driver.", "He works as a taxi driver."),
        ("I stayed in the bed for three days.", "I stayed in bed for three days."),
        ("You will not regret!", "You will not regret it!"),
        ("I recommend you to visit the museum.", "I recommend that you visit the museum."),
        ("The true is that I was scared.", "The truth is that I was scared."),
        ("There were fifty persons at the party.", "There were fifty people at the party."),
        ("He gave me a very good advice.", "He gave me very good advice."),
        ("I have already two good friends.", "I already have two good friends."),
        ("I want the same that everybody.", "I want the same as everybody."),
        ("All of them was shouting.", "All of them were shouting."),
        ("There is more things to do.", "There are more things to do."),
        ("We had very few time.", "We had very little time."),
        ("My school is more far now.", "My school is further now."),
        ("Mark explained her the situation.", "Mark explained the situation to her."),
        ("She didn't see her family during months.", "She didn't see her family for months."),
        ("My sister has got a long brown hair.", "My sister has got long brown hair."),
        ("In my town have a lot of parks.", "In my town there are a lot of parks."),
        ("I borrowed my friend a pen.", "I lent my friend a pen."),
    ],
)
def test_a_spanish_way_of_saying_it_is_mended(sentence: str, expected: str) -> None:
    assert fixed(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The number of the room 304 is on the door.",
        "The other city was bigger.",
        "We took any other way.",
        "Many thousands of people came.",
        "Millions of people watched it.",
        "The father of the bride spoke.",
        "I miss you so much since you moved to Canada.",
        "Since I moved to Madrid, I have made a lot of friends.",
        "In winter it is cold.",
        "In my opinion it is a good idea.",
        "In summer is when we travel.",
        "It is easier than I thought.",
        "I would rather walk than take the bus.",
        "Moreover, a country with more educated people has a stronger economy.",
        "One of the reasons people live here is the weather.",
        "We saw the best of Spain.",
        "Most of the world is water.",
        "He is the best player of the team.",
        "I found a place very quiet.",
        "The last Sunday of the month is free.",
        "He works for Google.",
        "The lighthouse had stood on the cliff for over a century.",
        "The windows want cleaning.",
        "I would never have finished on time.",
        "It's the same that you bought last year.",
        "She explained her problem to the teacher.",
        "I found a long hair in my soup.",
        "You will not regret coming.",
        "Heat the oil until it is hot.",
        "I'm not like my brother.",
        "Whether or not people like it, it is true.",
        "I not only like it but love it.",
        "I will not go.",
        "I've been here since Monday and will stay until Friday.",
        "We have lived here since 2010 and will stay until 2030.",
        "We went to the peñas after dinner.",
    ],
)
def test_the_correct_reading_is_left(sentence: str) -> None:
    assert fixed(sentence) == sentence
