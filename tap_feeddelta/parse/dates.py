"""Feed dates to one shape, ``YYYY-MM-DDTHH:MM:SSZ`` (RFC 3339, UTC, whole seconds).

Read: RFC 822/1123 with or without weekday (four-digit years, or two-digit ones read as
RFC 5322 does: 00-49 are 20xx, 50-99 19xx; named or numeric zones), RFC 3339 / ISO 8601 /
W3C-DTF (basic or extended, with or without seconds and fractions, date-only, year-month,
year), asctime, year-first dates with slashes (``2024/3/4 12:00``, Chinese and Japanese
CMSs), and a few broken shapes seen in real feeds ("Jan 4, 2004 16:29", a space instead
of ``T``, ``GMT+1``), and localized RFC 822 ("Mi, 03. Mär 2021", "03 de marzo de 2021",
general patterns only). A date without a zone is UTC. Anything that does not name one
real instant is ``None`` — never a guess. Numbers are ASCII digits (``[0-9]``, never
``\\d``, which matches any script's digits).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Final

_MONTHS: Final = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4,
    "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11,
    "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
# Month names of sites that format dates with their locale (German, French, Spanish,
# Italian, Dutch, Portuguese): full names and the abbreviations their locales print,
# also without accents. No name means a different month in another of these languages.
_LOCALIZED_MONTHS: Final = {
    1: "januar jänner jän janvier janv enero ene gennaio gen januari janeiro",
    2: "februar février févr fevrier fevr fév fev febrero febbraio februari fevereiro",
    3: "märz mär mrz maerz mars marzo maart mrt março marco",
    4: "avril avr abril abr aprile",
    5: "mai mayo maggio mag mei maio",
    6: "juni juin junio giugno giu junho",
    7: "juli juillet juil julio luglio lug julho",
    8: "août aout aoû agosto ago augustus",
    9: "septembre septiembre setiembre set settembre setembro",
    10: "oktober okt octobre octubre ottobre ott outubro out",
    11: "noviembre novembro",
    12: "dezember dez décembre decembre déc diciembre dic dicembre dezembro",
}
_ALL_MONTHS: Final = {
    **_MONTHS,
    **{name: month for month, names in _LOCALIZED_MONTHS.items() for name in names.split()},
}

# Offsets in minutes east of UTC. Only names with one accepted meaning.
_ZONES: Final = {
    "z": 0, "ut": 0, "utc": 0, "gmt": 0, "wet": 0,
    "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360,
    "pst": -480, "pdt": -420, "akst": -540, "akdt": -480, "hst": -600, "ast": -240,
    "adt": -180, "nst": -210, "ndt": -150,
    "west": 60, "cet": 60, "cest": 120, "met": 60, "mest": 120, "eet": 120,
    "eest": 180, "msk": 180, "jst": 540, "kst": 540, "hkt": 480, "sgt": 480,
    "awst": 480, "acst": 570, "acdt": 630, "aest": 600, "aedt": 660, "nzst": 720,
    "nzdt": 780, "mez": 60, "mesz": 120,
}  # fmt: skip

# Names that stand for other offsets elsewhere (CST: China +0800, Cuba -0500, US Central
# -0600; EST: also Australian Eastern +1000; MST: also Malaysia +0800; AST: Arabia and
# Atlantic): after an offset ("+0800 CST", as Java and date(1) print it) they contradict
# nothing, and the offset stands.
_AMBIGUOUS_ZONES: Final = frozenset({"cst", "cdt", "est", "edt", "mst", "mdt", "ast", "adt"})

# A zone: a name, a name with an offset ("GMT+1"), or an offset that a name may follow
# ("+0000 GMT", the name then only repeats it).
_ZONE: Final = (
    r"(?P<zone>[A-Za-z]{1,5}(?:\s*[+-][0-9]{1,2}(?::?[0-9]{2})?)?"
    r"|[+-][0-9]{1,2}(?::?[0-9]{2})?(?:\s+[A-Za-z]{1,5})?)"
)
# Minute and second may lack their zero ("9:5:3"): hand-rolled generators print them so.
_TIME: Final = (
    r"(?P<hour>[0-9]{1,2})[:.](?P<minute>[0-9]{1,2})(?:[:.](?P<second>[0-9]{1,2})(?:[.,][0-9]+)?)?"
    r"(?:\s*(?P<ampm>[AaPp]\.?[Mm]\.?))?"
)
_ISO: Final = re.compile(
    r"(?P<year>[0-9]{4})(?:-?(?P<month>[0-9]{2})(?:-?(?P<day>[0-9]{2})"
    r"(?:(?:[Tt]|\s+)(?P<hour>[0-9]{2}):?(?P<minute>[0-9]{2})(?::?(?P<second>[0-9]{2})(?:[.,][0-9]+)?)?)?)?)?"
    r"\s*(?P<zone>[Zz]|UTC|GMT|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
# Year, month, day with slashes, as CMSs in China and Japan print them: the year first
# makes it unambiguous (a day- or month-first "04/03/2024" is not read). Zones as in ISO
# dates only: a name such as "CST" means China to them and the US Central zone elsewhere.
_YEAR_FIRST_SLASHES: Final = re.compile(
    r"(?P<year>[0-9]{4})/(?P<month>[0-9]{1,2})/(?P<day>[0-9]{1,2})"
    r"(?:(?:[Tt]|\s+)(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{1,2})"
    r"(?::(?P<second>[0-9]{1,2})(?:[.,][0-9]+)?)?)?"
    r"\s*(?P<zone>[Zz]|UTC|GMT|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
# Names in any alphabet, for localized weekdays and months ("sáb", "déc", "terça-feira").
_WEEKDAY: Final = r"(?:[^\W\d_]{2,9}(?:-feira)?\.?,?\s*)"
# Localized shapes too: the day with a dot ("Mi, 03. Mär 2021", German) and "de" around
# the month ("mié, 03 de marzo de 2021", Spanish and Portuguese).
_RFC822: Final = re.compile(
    _WEEKDAY + r"?(?P<day>[0-9]{1,2})(?:st|nd|rd|th|\.)?[\s-]+(?:[Dd]e\s+)?"
    r"(?P<month>[^\W\d_]{3,10})\.?,?(?:\s+|-)(?:[Dd]e\s+)?"
    r"(?P<year>[0-9]{4}|[0-9]{2})(?:(?:\s+|[T,]\s*)" + _TIME + r")?\s*" + _ZONE + r"?"
)
_MONTH_FIRST: Final = re.compile(
    r"(?:[A-Za-z]{2,9}\.?,?\s+)?(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?,?"
    r"\s+(?P<year>[0-9]{4})(?:(?:\s+|,\s*|\s+at\s+)" + _TIME + r")?\s*" + _ZONE + r"?"
)
_ASCTIME: Final = re.compile(
    r"[A-Za-z]{3,9},?\s+(?P<month>[A-Za-z]{3,9})\s+(?P<day>[0-9]{1,2})\s+" + _TIME + r"\s+"
    r"(?:" + _ZONE + r"\s+)?(?P<year>[0-9]{4})"
)
_COMMENT: Final = re.compile(r"\s*\([^()]*\)\s*$")
_PATTERNS: Final = (_ISO, _RFC822, _MONTH_FIRST, _ASCTIME, _YEAR_FIRST_SLASHES)
_MAX_DATE_CHARS: Final = 100
# Years before this are the zero values generators print for "no date" (Go's and .NET's
# 0001-01-01, PHP's -0001-11-30 for MySQL's zero date), never an item's real date.
_MIN_YEAR: Final = 100


def _offset_minutes(zone: str | None) -> int | None:
    """Minutes east of UTC for a zone text; ``None`` when the zone is not known, or is an
    offset followed by a known name that means another offset ("+0100 PST": which one
    was meant is unknown)."""
    if not zone:
        return 0
    zone = zone.strip()
    if zone[0] == "+" or zone[0] == "-":
        parts = zone.split(None, 1)
        if len(parts) == 2:
            # "+0000 GMT": the name repeats the offset; a name not known is left out.
            offset = _offset_minutes(parts[0])
            name = parts[1].lower()
            named = None if name in _AMBIGUOUS_ZONES else _ZONES.get(name)
            return None if named is not None and named != offset else offset
    sign_at = max(zone.rfind("+"), zone.rfind("-"))
    name = zone if sign_at < 0 else zone[:sign_at].strip()
    base = 0
    if name:
        known = _ZONES.get(name.lower())
        if known is None:
            return None
        base = known
    if sign_at < 0:
        return base
    if base != 0:
        return None  # "EST+5" has no single meaning
    digits = zone[sign_at + 1 :].replace(":", "")
    if len(digits) <= 2:
        hours, minutes = int(digits), 0
    elif len(digits) in (3, 4):
        hours, minutes = int(digits[:-2]), int(digits[-2:])
    else:
        return None
    if hours > 14 or minutes > 59:
        return None
    total = hours * 60 + minutes
    return -total if zone[sign_at] == "-" else total


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:  # as RFC 5322 (4.3) reads them: 00-49 are 20xx, 50-99 are 19xx
        year += 2000 if year < 50 else 1900
    return year


def _month(text: str) -> int | None:
    if text.isascii() and text.isdigit():  # "²" is a digit to isdigit(), not to int()
        return int(text)
    return _ALL_MONTHS.get(text.lower().rstrip("."))


def rfc3339(raw: str) -> str | None:
    """The instant as ``YYYY-MM-DDTHH:MM:SSZ``, or ``None`` when it cannot be read or names
    no real instant (31 February, hour 25, an unknown zone)."""
    text = raw.strip()
    if not text or len(text) > _MAX_DATE_CHARS:
        return None
    fast = _common_shape(text)
    if fast is not None:
        return fast or None
    if text.endswith(")"):
        text = _COMMENT.sub("", text)
    for pattern in _PATTERNS:
        match = pattern.fullmatch(text)
        if match is not None:
            return _instant(match.groupdict())
    return None


_ISO_COMMON: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[Zz]|([+-])([0-9][0-9]):([0-9][0-9]))"
)
# The commonest RFC 3339 dates, their ranges checked by the pattern: a year from 0100, a
# day every month has, a real time of day, an offset of at most 14:59 (as _offset_minutes
# takes). Unless the offset moves the instant to another day, the result is read off the
# text.
_ISO_USUAL: Final = re.compile(
    r"(?!00)[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"T([01][0-9]|2[0-3]):([0-5][0-9]):[0-5][0-9](?:[Zz]|([+-])(0[0-9]|1[0-4]):([0-5][0-9]))"
)
_RFC822_COMMON: Final = re.compile(
    r"[A-Z][a-z]{2}, ([0-9]{2}) ([A-Z][a-z]{2}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r" ([+-][0-9]{4}|GMT|UTC?|Z)"
)
# Canonical RFC 822 with the same checks as _ISO_USUAL.
_RFC822_USUAL: Final = re.compile(
    r"[A-Z][a-z]{2}, (0[1-9]|1[0-9]|2[0-8]) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"((?!00)[0-9]{4}) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])"
    r" (?:GMT|UTC?|Z|([+-])(0[0-9]|1[0-4])([0-5][0-9]))"
)
_MONTH_ABBREVIATIONS: Final = {
    "Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7, "Aug": 8,
    "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
}  # fmt: skip
_TWO_DIGITS: Final = tuple(f"{n:02d}" for n in range(100))


class _Numbers(dict[str, int]):
    """Digit strings → their values: a table for the usual ones, ``int()`` for the rest
    (``int()`` of a short string is several times slower than a lookup)."""

    def __missing__(self, text: str) -> int:
        return int(text)


_TWO_DIGIT_VALUES: Final = _Numbers({text: value for value, text in enumerate(_TWO_DIGITS)})
_YEAR_VALUES: Final = _Numbers({str(year): year for year in range(1970, 2100)})
_DAYS_IN_MONTH: Final = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # 29 February: leap


def _common_shape(text: str) -> str | None:
    """The two shapes most feeds use, read without the general patterns: RFC 3339 with
    ``Z`` or ``±hh:mm`` and canonical RFC 822. ``None``: not such a shape; ``""``: such a
    shape naming no real instant."""
    size = len(text)
    two = _TWO_DIGIT_VALUES
    if size == 20 or size == 25:
        match = _ISO_USUAL.fullmatch(text)
        if match is not None:
            hour_text, minute_text, sign, zone_hours, zone_minutes = match.groups()
            if sign is None:
                return text[:19] + "Z"
            offset = two[zone_hours] * 60 + two[zone_minutes]
            if not offset:
                return text[:19] + "Z"
            minutes = two[hour_text] * 60 + two[minute_text] + (offset if sign == "-" else -offset)
            if 0 <= minutes < 1440:
                digits = _TWO_DIGITS
                return f"{text[:11]}{digits[minutes // 60]}:{digits[minutes % 60]}{text[16:19]}Z"
        match = _ISO_COMMON.fullmatch(text)
        if match is None:
            return None
        year_text, month_text, day_text, hour_text, minute_text, second_text, sign, zone_hours, \
            zone_minutes = match.groups()  # fmt: skip
        month = two[month_text]
        offset = 0
        if sign is not None:
            hours_east, minutes_east = two[zone_hours], two[zone_minutes]
            if hours_east > 14 or minutes_east > 59:
                return ""  # as _offset_minutes: no such offset
            offset = hours_east * 60 + minutes_east
            if sign == "-":
                offset = -offset
    elif size == 31 or size == 29 or size == 28:
        match = _RFC822_USUAL.fullmatch(text)
        if match is not None:
            day_text, month_name, year_text, hour_text, minute_text, second_text, sign, \
                zone_hours, zone_minutes = match.groups()  # fmt: skip
            offset = 0 if sign is None else two[zone_hours] * 60 + two[zone_minutes]
            minutes = two[hour_text] * 60 + two[minute_text] + (offset if sign == "-" else -offset)
            if 0 <= minutes < 1440:
                digits = _TWO_DIGITS
                return (
                    f"{year_text}-{digits[_MONTH_ABBREVIATIONS[month_name]]}-{day_text}"
                    f"T{digits[minutes // 60]}:{digits[minutes % 60]}:{second_text}Z"
                )
        match = _RFC822_COMMON.fullmatch(text)
        if match is None:
            return None
        day_text, month_name, year_text, hour_text, minute_text, second_text, zone = \
            match.groups()  # fmt: skip
        month_number = _MONTH_ABBREVIATIONS.get(month_name)
        if month_number is None:
            return None  # perhaps a localized month ("Mai"): the general patterns read it
        month = month_number
        offset = 0
        if zone[0] == "+" or zone[0] == "-":
            zone_hours, zone_minutes = two[zone[1:3]], two[zone[3:5]]
            if zone_hours > 14 or zone_minutes > 59:
                return ""
            offset = zone_hours * 60 + zone_minutes
            if zone[0] == "-":
                offset = -offset
    else:
        return None
    year = _YEAR_VALUES[year_text]
    day = two[day_text]
    hour = two[hour_text]
    minute = two[minute_text]
    second = two[second_text]
    if (
        hour < 24
        and minute < 60
        and second < 60
        and 0 < month <= 12
        and 0 < day <= 28
        and year >= _MIN_YEAR
    ):
        # The usual case, without datetime (as in _utc): the offset keeps the instant on
        # that day, which every month has.
        minutes = hour * 60 + minute - offset
        if 0 <= minutes < 1440:
            digits = _TWO_DIGITS
            year_text = year_text if year_text in _YEAR_VALUES else f"{year:04d}"
            return (
                f"{year_text}-{digits[month]}-{digits[day]}"
                f"T{digits[minutes // 60]}:{digits[minutes % 60]}:{digits[second]}Z"
            )
    return _utc(year, month, day, hour, minute, second, offset) or ""


def _utc(
    year: int, month: int, day: int, hour: int, minute: int, second: int, offset: int
) -> str | None:
    if year < _MIN_YEAR:
        return None
    if (
        hour < 24
        and minute < 60
        and second < 60
        and 0 < month <= 12
        and 0 < day <= _DAYS_IN_MONTH[month]
        and year <= 9999
    ):
        # The usual case, without datetime: a real calendar day, and the offset keeps
        # the instant on that day.
        if day == 29 and month == 2 and (year % 4 or (year % 100 == 0 and year % 400)):
            return None  # 29 February of a common year
        minutes = hour * 60 + minute - offset
        if 0 <= minutes < 1440:
            two = _TWO_DIGITS
            return (
                f"{year if year >= 1000 else f'{year:04d}'}-{two[month]}-{two[day]}"
                f"T{two[minutes // 60]}:{two[minutes % 60]}:{two[second]}Z"
            )
    extra = timedelta(0)
    if hour == 24 and minute == 0 and second == 0:
        hour, extra = 0, timedelta(days=1)
    if second == 60:
        second = 59  # a leap second: the instant before it is the nearest real one
    try:
        instant = datetime(year, month, day, hour, minute, second)
        if offset or extra:
            instant = instant + extra - timedelta(minutes=offset)
    except (ValueError, OverflowError):
        return None
    return instant.isoformat() + "Z"


def _instant(parts: dict[str, str | None]) -> str | None:
    year = _year(parts["year"] or "")
    month = _month(parts["month"] or "1")
    if month is None:
        return None
    day = int(parts["day"] or 1)
    hour = int(parts.get("hour") or 0)
    minute = int(parts.get("minute") or 0)
    second = int(parts.get("second") or 0)
    ampm = parts.get("ampm")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm[0] in "Pp" else 0)
    offset = _offset_minutes(parts.get("zone"))
    if offset is None:
        return None
    return _utc(year, month, day, hour, minute, second, offset)
