"""Bylines: several authors written as one plain-text name ("Bo Li, Yifei Shen, Jun Zhang").

arXiv's RSS lists a paper's authors so in one ``dc:creator``. A comma also sits inside one
name written "Family, Given" (as Dublin Core advises: "Smith, John", "Li, B."), so a byline
is split only when it cannot be one such name: three parts or more, or names joined by a
final "and" or "&", and every part a full name.
"""

from __future__ import annotations

import re
from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A word of initials: "B", "B.", "J.Q.", "J.-P.", "J.-P".
_INITIALS: Final = re.compile(r"(?:[^\W\d_]\.-?)+[^\W\d_]?|[^\W\d_]")
# Words that name a role or an organisation, not a person ("Jane Doe, Chief Executive
# Officer, Acme Corp", "John Smith, Senior Fellow, Brookings Institution", "Jane Doe and
# Associates Consulting"): a byline holding one anywhere stays one name. Words that are
# also common given or family names (Dean, Bishop, Church, Junior, Law) are left out.
_ROLE_WORDS: Final = _words(
    """
    chief executive officer officers president vice vp ceo cfo cto coo cio founder founders
    cofounder co-founder owner chair chairman chairwoman chairperson director directors
    manager managers managing head lead senior associate assistant deputy acting interim
    principal partner partners member members secretary treasurer counsel attorney
    professor professors prof lecturer emeritus adjunct visiting distinguished fellow
    fellows researcher researchers scientist scientists economist analyst analysts engineer
    engineers developer designer consultant consultants adviser advisor advisers advisors
    strategist specialist coordinator administrator supervisor superintendent intern
    student students candidate postdoc provost rector minister governor senator
    ambassador commissioner spokesperson spokesman spokeswoman representative
    editor editors editorial reporter reporters correspondent correspondents writer writers
    columnist columnists contributor contributors contributing producer photographer
    illustrator translator anchor guest staff team desk
    by via photo photos photography images video graphics illustration illustrations
    words text reporting additional credit credits
    """
)
_ORGANISATION_WORDS: Final = _words(
    """
    the corp corporation inc incorporated ltd limited llc llp plc gmbh co company companies
    associates group holdings institute institution university universidad college school
    academy foundation center centre council department dept ministry agency bureau office
    commission committee association society organization organisation federation union
    league club trust fund bank capital ventures lab labs laboratory laboratories consulting
    solutions services systems technologies software studio studios network networks news
    newsroom media press times post journal magazine herald tribune gazette daily weekly
    review chronicle observer telegraph guardian wire newswire broadcasting radio television
    tv channel publishing publications publishers books hospital clinic government
    administration authority
    """
)
# Lower-case words a name holds: family-name particles ("Jan van der Berg", "Ana de la
# Cruz"), alone or joined to the name ("al-Sayed", "d'Alembert"). Any other ("Head of
# Research", "edited by") is no name.
_PARTICLES: Final = _words(
    """
    al ap ben bin bint ibn d da das de del della den der des di do dos du el l la le les op
    te ten ter van von y zu zur
    """
)
_PARTICLE: Final = re.compile(rf"(?:{'|'.join(sorted(_PARTICLES))})(?P<joined>[-'\u2019]\w.*)?")
_MAX_NAME_WORDS: Final = 6


def byline_names(raw: str) -> list[str] | None:
    """The names of a plain-text byline that lists several people, or ``None`` when it
    is (or may be) one name. Parts are separated by commas, the last two also by "and"
    or "&" (", and", ", &"). It is a list when it has three parts or more, or two joined
    by "and" or "&" (podcast co-hosts: "Jane Doe & John Smith"), and
    every part is a full name: two to six words, not only initials, each starting with a
    letter, capitalized (or of a script without case) unless it is a family-name particle
    ("van", "de", "al-"; the last word only joined: "al-Sayed"), none of them a role or
    organisation word ("Jane Doe, Senior Fellow, Brookings Institution" is one name). Two
    parts separated by a comma alone stay one name: "García Márquez, Gabriel José", and a
    company joined by "and" or "&" stays one: "Procter and Gamble", "Simon & Schuster".
    Parts separated by semicolons are names, each also "Family, Given"."""
    if ";" in raw:  # no name holds one: "Smith, John; Doe, Jane"
        parts = [part.strip() for part in raw.split(";") if part.strip()]
        if len(parts) > 1 and all(map(_is_full_or_inverted_name, parts)):
            return parts
        return None
    if "," not in raw and " and " not in raw and " & " not in raw:
        return None
    parts = [part.strip() for part in raw.split(",")]
    joined_by_and = False
    last = parts[-1]
    if last.startswith(("and ", "& ")) and len(parts) > 2:  # "A, B, and C", "A, B, & C"
        parts[-1] = last.partition(" ")[2].lstrip()
        joined_by_and = True
    elif (split := _split_at_last_and(last)) is not None:
        parts[-1:] = [split[0].strip(), split[1].strip()]
        joined_by_and = True
    if len(parts) < 2 or (len(parts) == 2 and not joined_by_and):
        return None
    return parts if all(_is_full_name(part) for part in parts) else None


def _split_at_last_and(text: str) -> tuple[str, str] | None:
    """``text`` before and after its last " and " or " & ", or ``None`` without one."""
    at_and, at_ampersand = text.rfind(" and "), text.rfind(" & ")
    if at_and > at_ampersand:
        return text[:at_and], text[at_and + len(" and ") :]
    if at_ampersand >= 0:
        return text[:at_ampersand], text[at_ampersand + len(" & ") :]
    return None


def _is_full_or_inverted_name(part: str) -> bool:
    """A full name, also written "Family, Given" ("Smith, John", "Li, B."). A family
    part that is a full name itself ("John Smith, Jane Doe") may be two names: no."""
    family, comma, given = part.partition(",")
    if comma:
        return (
            "," not in given
            and not _is_full_name(family.strip())
            and _is_full_name(f"{given.strip()} {family.strip()}")
        )
    return _is_full_name(part)


def _is_full_name(part: str) -> bool:
    words = part.split()
    if not 2 <= len(words) <= _MAX_NAME_WORDS:
        return False
    if all(_INITIALS.fullmatch(word) for word in words):
        return False
    for word in words:
        if not word[0].isalpha() or word[-1] == ":":
            return False  # "&", "(Reuters)", "Photos:"
        if word[0].islower():
            particle = _PARTICLE.fullmatch(word)
            if particle is None or (word is words[-1] and not particle["joined"]):
                return False  # "Head of Research", "edited by", "Jan van"
        bare = word.strip(".").lower()
        if bare in _ROLE_WORDS or bare in _ORGANISATION_WORDS:
            return False
    return True
