"""English function words: prepositions, articles and determiners, auxiliaries and modals,
pronouns, conjunctions. Edits of these are judged by the words themselves (`card_fit`), and an
inserted one belongs with the word after it ("nurse → a nurse"), not the word before (`edits`)."""

FUNCTION_WORDS = frozenset(
    """a an the this that these those some any much many few little every each all no none
    in on at to for of with about from by into onto during since until up down over under after before
    between among through without against near than as like
    do does did don't doesn't didn't done doing have has had haven't hasn't hadn't having
    be am is are was were been being isn't aren't wasn't weren't
    will would can could should must may might shall won't wouldn't can't couldn't shouldn't
    i me my mine you your yours he him his she her hers it its we us our ours they them their theirs
    there here who whom whose which what when where why how and or but because so if not
    myself yourself himself herself itself ourselves themselves one""".split()
)
