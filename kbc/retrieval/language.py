"""Whether a question is written in a language other than English, read from its function words.

The packaged embedding model (all-MiniLM-L6-v2) was trained on English: it places a question
in French or German near whatever shares its few Latin-script tokens, so its nearest team notes
are noise beside the lexical hits. A question is read as not English when at least two of its
words are common function words of another language and they outnumber its English ones.
"""

from __future__ import annotations

import re

ENGLISH = frozenset(
    """the and of to is are was were be been it this that these with for from on not have has
    how what why when where which who can could should would will do does did you we they my
    your our an if or but about into after before by at as than then there""".split()
)
# Function words of other languages written in Latin script (accents folded), none of them an
# English word: Spanish, French, Portuguese, Italian, German, Dutch, Turkish.
OTHERS = frozenset(
    """que el los las del por para con una unos como pero esta este estos cuando donde porque
    hay muy tambien sus nos les des est une dans pour avec sur pas qui sont ces mais ou nous
    vous leur aux quand comment pourquoi je tu il elle ils cest faut fait etre avoir
    nao uma com sao mais dos das pelo pela nas nos ao isso essa esse
    che della delle degli sono gli nel alla perche come anche questo questa
    der die das und ist nicht ein eine einen dem den mit auf fur von zu wie wann warum wo was
    wir ihr sie ich bei nach oder aber auch werden wird kann muss darf bis
    het een van niet zijn ook maar voor met wat hoe waar
    bir ve bu icin ile ne nasil neden zaman gibi daha veya ama mi mu hangi kac""".split()
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_FOLD = str.maketrans("áàâäãéèêëíìîïıóòôöõúùûüçñßşğ", "aaaaaeeeeiiiiiooooouuuucnssg")


def foreign(text: str) -> bool:
    """True when ``text`` reads as written in a language other than English."""
    words = [w.lower().translate(_FOLD) for w in _WORD.findall(text)]
    others = sum(w in OTHERS for w in words)
    return others >= 2 and others > sum(w in ENGLISH for w in words)
