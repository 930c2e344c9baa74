"""Declared charsets: which decoder a label selects, and which declaration wins."""

from __future__ import annotations

import pytest

from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed

URL = "http://example.com/feed"


def _rss(title: str, declared: str, codec: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="{declared}"?><rss version="2.0"><channel>'
        f"<title>x</title><item><title>{title}</title></item></channel></rss>"
    ).encode(codec)


def _codes(feed: ParsedFeed) -> set[str]:
    return {issue.code for issue in feed.issues}


# Text that only the superset a browser reads the label with holds (NEC and IBM rows of
# cp932, UHC syllables of cp949, HKSCS characters of Big5-HKSCS, GBK and GB 18030).
CJK = [
    ("Shift_JIS", "cp932", "株式会社 ㈱ 第①回 ～ 髙橋"),
    ("sjis", "cp932", "㈱ ①"),
    ("x-sjis", "cp932", "㈱ ①"),
    ("MS_Kanji", "cp932", "㈱ ①"),
    ("windows-31j", "cp932", "㈱ ①"),
    ("euc-kr", "cp949", "똠방각하 뷁"),
    ("ks_c_5601-1987", "cp949", "똠방각하 뷁"),
    ("korean", "cp949", "똠방각하"),
    ("windows-949", "cp949", "뷁"),
    ("big5", "big5hkscs", "新聞 嘅 咗"),
    ("big5-hkscs", "big5hkscs", "嘅 咗"),
    ("cn-big5", "big5hkscs", "嘅 咗"),
    ("x-x-big5", "big5hkscs", "嘅 咗"),
    ("gb2312", "gb18030", "镕 瓩 €"),
    ("gbk", "gb18030", "镕 瓩"),
    ("x-gbk", "gb18030", "镕 瓩"),
    ("chinese", "gb18030", "镕"),
]


@pytest.mark.parametrize(("declared", "codec", "title"), CJK, ids=[label for label, _, _ in CJK])
def test_cjk_labels_are_read_as_browsers_read_them(declared: str, codec: str, title: str) -> None:
    feed = parse_feed(_rss(title, declared, codec), None, URL)
    assert feed.items[0].title == title
    assert not {"encoding_replaced", "encoding_mismatch"} & _codes(feed)


def test_a_cjk_label_in_the_http_header_is_read_the_same_way() -> None:
    body = _rss("㈱ ①", "Shift_JIS", "cp932")
    feed = parse_feed(body, "application/rss+xml; charset=Shift_JIS", URL)
    assert feed.items[0].title == "㈱ ①"


UTF8_BODY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Café</title>'
    "<link>http://example.com/</link><description>x</description>"
    "<item><title>Naïve — “quoted”</title></item></channel></rss>\n"
).encode()


@pytest.mark.parametrize("charset", ["ISO-8859-1", "latin1", "us-ascii", "windows-1252"])
def test_utf8_bytes_under_a_latin1_http_charset_are_read_as_utf8(charset: str) -> None:
    feed = parse_feed(UTF8_BODY, f"application/rss+xml; charset={charset}", URL)
    assert feed.title == "Café"
    assert feed.items[0].title == "Naïve — “quoted”"
    assert "encoding_mismatch" in _codes(feed)
    assert "encoding_replaced" not in _codes(feed)


def test_latin1_bytes_under_a_latin1_http_charset_stay_latin1() -> None:
    body = UTF8_BODY.decode().replace(" — “quoted”", "").encode("latin-1")
    feed = parse_feed(body, "text/xml; charset=ISO-8859-1", URL)
    assert feed.title == "Café"
    assert feed.items[0].title == "Naïve"


# Text in a legacy charset its XML declaration names, served under a server's default
# HTTP charset (Apache's old AddDefaultCharset ISO-8859-1, text/xml's us-ascii).
DECLARED_UNDER_A_DEFAULT = [
    ("windows-1251", "Новости дня — всё о главном"),
    ("ISO-8859-2", "Zażółć gęślą jaźń"),
    ("KOI8-R", "Новости дня"),
    ("Shift_JIS", "日本語のニュース"),
    ("ISO-8859-15", "Prix : 10 €"),
]


@pytest.mark.parametrize(
    ("declared", "title"), DECLARED_UNDER_A_DEFAULT, ids=[d for d, _ in DECLARED_UNDER_A_DEFAULT]
)
@pytest.mark.parametrize("charset", ["ISO-8859-1", "us-ascii", "windows-1252"])
def test_a_declaration_beats_a_default_latin1_http_charset(
    declared: str, title: str, charset: str
) -> None:
    feed = parse_feed(_rss(title, declared, declared), f"text/xml; charset={charset}", URL)
    assert feed.items[0].title == title
    assert "encoding_mismatch" in _codes(feed)
    assert "encoding_replaced" not in _codes(feed)


def test_a_declaration_that_does_not_fit_leaves_the_http_charset() -> None:
    body = _rss("Naïve “quoted”", "Shift_JIS", "cp1252")  # 0x94 0x22: no Shift_JIS pair
    feed = parse_feed(body, "text/xml; charset=ISO-8859-1", URL)
    assert feed.items[0].title == "Naïve “quoted”"


def test_a_chosen_http_charset_beats_the_declaration() -> None:
    body = _rss("Новости", "ISO-8859-2", "windows-1251")
    feed = parse_feed(body, "text/xml; charset=windows-1251", URL)
    assert feed.items[0].title == "Новости"


def test_ascii_under_a_default_charset_and_another_declaration_is_no_mismatch() -> None:
    feed = parse_feed(_rss("News", "windows-1251", "ascii"), "text/xml; charset=ISO-8859-1", URL)
    assert feed.items[0].title == "News"
    assert "encoding_mismatch" not in _codes(feed)


@pytest.mark.parametrize(
    "junk",
    [
        b"PHP Notice: Undefined index: q in /var/www/feed.php on line 3\n",
        b"<br />\n<b>Warning</b>: x\n",
    ],
    ids=["text", "html"],
)
def test_a_declaration_after_a_server_warning_still_names_the_charset(junk: bytes) -> None:
    """Before, only a declaration at the very start was read: a windows-1251 feed with a
    PHP notice in front of it came out as windows-1252 mojibake."""
    feed = parse_feed(junk + _rss("Новости дня", "windows-1251", "cp1251"), None, URL)
    assert feed.items[0].title == "Новости дня"
    assert "xml_recovered" in _codes(feed)


def test_a_declaration_inside_the_document_is_no_charset() -> None:
    """Quoted in a CDATA section of a feed with no declaration of its own: not read."""
    body = (
        '<rss version="2.0"><channel><title>x</title><item><title>Café</title>'
        '<description><![CDATA[<?xml version="1.0" encoding="koi8-r"?>]]></description>'
        "</item></channel></rss>"
    ).encode()
    assert parse_feed(body, None, URL).items[0].title == "Café"


BYTES_CODECS = ["base64", "hex", "rot13", "zlib", "bz2", "quopri", "uu"]


@pytest.mark.parametrize("label", BYTES_CODECS)
def test_a_codec_that_is_no_text_encoding_is_an_unknown_charset(label: str) -> None:
    # Python knows these names, but they turn bytes into bytes: a label naming one is
    # as good as no label, whether the HTTP header or the declaration gives it.
    in_header = parse_feed(UTF8_BODY, f"application/rss+xml; charset={label}", URL)
    in_declaration = parse_feed(
        UTF8_BODY.replace(b'encoding="UTF-8"', f'encoding="{label}"'.encode()), None, URL
    )
    for feed in (in_header, in_declaration):
        assert feed.title == "Café"
        assert feed.items[0].title == "Naïve — “quoted”"


# UTF-8 bytes under a legacy label that is not the server's Latin-1 default: a Russian
# host's AddDefaultCharset windows-1251, an ISO-8859-1 declaration hard-coded in a template.
UTF8_UNDER_A_LEGACY_LABEL = [
    ("http", "windows-1251", "Новости на русском"),
    ("http-over-a-utf8-declaration", "windows-1251", "Новости на русском"),
    ("http-over-a-utf8-declaration", "koi8-r", "Новости на русском"),
    ("http", "koi8-r", "Новости на русском"),
    ("http", "iso-8859-2", "Café naïve Zürich"),
    ("http", "shift_jis", "Café naïve Zürich"),
    ("http", "gbk", "日本語のニュース"),
    ("http", "euc-kr", "Новости"),
    ("http", "big5", "Café naïve Zürich"),
    ("declaration", "ISO-8859-1", "Café naïve Zürich"),
    ("declaration", "windows-1252", "Café naïve Zürich"),
    ("declaration", "windows-1251", "Café — “quoted”"),
    ("declaration", "Shift_JIS", "Новости"),
]


@pytest.mark.parametrize(
    ("where", "label", "title"),
    UTF8_UNDER_A_LEGACY_LABEL,
    ids=[f"{where}-{label}" for where, label, _ in UTF8_UNDER_A_LEGACY_LABEL],
)
def test_utf8_bytes_under_any_legacy_label_are_read_as_utf8(
    where: str, label: str, title: str
) -> None:
    """Before, only a Latin-1, windows-1252 or ASCII HTTP charset gave way to UTF-8 bytes:
    any other label (or any declaration) read them as mojibake, with no issue at all."""
    if where == "declaration":
        feed = parse_feed(_rss(title, label, "utf-8"), "application/rss+xml", URL)
    else:
        body = _rss(title, "UTF-8", "utf-8")
        if where == "http":
            body = body.replace(b' encoding="UTF-8"', b"")
        feed = parse_feed(body, f"text/xml; charset={label}", URL)
    assert feed.items[0].title == title
    assert "encoding_mismatch" in _codes(feed)
    assert "encoding_replaced" not in _codes(feed)


@pytest.mark.parametrize(("label", "codec"), [("gbk", "gbk"), ("gb2312", "gb2312")])
def test_a_few_double_byte_characters_that_read_in_their_label_keep_it(
    label: str, codec: str
) -> None:
    # The GBK bytes of "图片" (CD BC C6 AC) happen to be UTF-8 ("ͼƬ") as well.
    body = _rss("Photo 图片", label, codec)
    assert body.decode("utf-8")  # valid UTF-8 indeed
    feed = parse_feed(body, f"text/xml; charset={label}", URL)
    assert feed.items[0].title == "Photo 图片"
    assert not {"encoding_replaced", "encoding_mismatch"} & _codes(feed)


def test_utf8_bytes_under_a_legacy_label_in_a_json_feed_are_read_as_utf8() -> None:
    body = '{"version":"https://jsonfeed.org/version/1.1","title":"Лента","items":[]}'.encode()
    feed = parse_feed(body, "application/feed+json; charset=windows-1251", URL)
    assert feed.title == "Лента"
    assert "encoding_mismatch" in _codes(feed)


# Ordinary text in each legacy encoding, correctly labelled: none of it is valid UTF-8
# with multi-byte sequences, so it is read with its label (ISO-2022-JP is 7-bit: ASCII
# bytes, never UTF-8's concern).
LEGACY_TEXT = [
    ("Shift_JIS", "cp932", "東京都の天気予報：明日は晴れのち曇り、最高気温は二十五度です。"),
    ("EUC-JP", "euc_jp", "東京都の天気予報：明日は晴れのち曇り、最高気温は二十五度です。"),
    ("ISO-2022-JP", "iso2022_jp", "東京都の天気予報：明日は晴れのち曇りです。"),
    ("GBK", "gb18030", "北京今天天气晴朗，最高气温二十五度。新闻联播"),
    ("GB2312", "gb18030", "上海证券交易所今日收盘，指数小幅上涨。"),
    ("Big5", "big5hkscs", "臺北市今日天氣晴朗，最高溫度二十五度。新聞"),
    ("EUC-KR", "cp949", "서울 오늘 날씨는 맑고 최고 기온은 이십오 도입니다."),
    ("KOI8-R", "koi8_r", 'Новости дня: в Москве ясно, ООО "Ромашка" - Ёлки.'),
    ("windows-1251", "cp1251", "Новости дня: в Москве «ясно», ООО «Ромашка» — №1."),
    ("ISO-8859-2", "iso8859_2", "Zażółć gęślą jaźń - Łódź, Kraków"),
    ("windows-1252", "cp1252", "Café naïve — “quoted” Zürich, 10 €"),
    ("ISO-8859-1", "latin-1", "Ã© read as Latin-1 stays Ã©? No: Ã, ©, ß, ü"),
]


@pytest.mark.parametrize("where", ["http", "declaration"])
@pytest.mark.parametrize(
    ("label", "codec", "title"), LEGACY_TEXT, ids=[label for label, _, _ in LEGACY_TEXT]
)
def test_correctly_labelled_legacy_text_is_not_taken_for_utf8(
    label: str, codec: str, title: str, where: str
) -> None:
    body = _rss(title, label if where == "declaration" else "UTF-8", codec)
    if where == "http":
        body = body.replace(b' encoding="UTF-8"', b"")
    content_type = f"text/xml; charset={label}" if where == "http" else None
    feed = parse_feed(body, content_type, URL)
    assert feed.items[0].title == title
    assert not {"encoding_replaced", "encoding_mismatch"} & _codes(feed)


# Every label of the WHATWG Encoding Standard (encodings.json) with the Python codec that
# reads its encoding as browsers do, and a text in it. UTF-16 is read by its own rules;
# the "replacement" labels (ISO-2022-KR, HZ, ISO-2022-CN) keep Python's codecs where it
# has one, and x-user-defined is no text encoding.
WHATWG = [
    ("utf_8", "Ünïcödé 日本 😀",
     "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    ("cp866", "Новости дня", "866 cp866 csibm866 ibm866"),
    ("iso8859_2", "Zażółć gęślą jaźń",
     "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2"),
    ("iso8859_3", "Ħaġar Ġgantija",
     "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3"),
    ("iso8859_4", "Rīga Ŗ ŧ",
     "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4"),
    ("iso8859_5", "Новости дня",
     "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5"
     " iso_8859-5:1988"),
    ("iso8859_6", "أخبار اليوم",
     "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e"
     " iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987"),
    ("iso8859_7", "Ειδήσεις σήμερα",
     "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597"
     " iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    ("iso8859_8", "חדשות בעברית",
     "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598"
     " iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical"),
    ("iso8859_10", "Þórshöfn ŋ ĸ",
     "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    ("iso8859_13", "Vilnius ą č ę “x”", "iso-8859-13 iso8859-13 iso885913"),
    ("iso8859_14", "Ŵ ẁ ŷ Caerdydd", "iso-8859-14 iso8859-14 iso885914"),
    ("iso8859_15", "Prix : 10 € œ", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    ("iso8859_16", "Țară și ș ț €", "iso-8859-16"),
    ("koi8_r", "Новости дня", "cskoi8r koi koi8 koi8-r koi8_r"),
    ("koi8_u", "Новини дня ї є ґ", "koi8-ru koi8-u"),
    ("mac_roman", "Café crème brûlée", "csmacintosh mac macintosh x-mac-roman"),
    ("cp874", "ข่าวภาษาไทย วันนี้ €",
     "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    ("cp1250", "Zażółć „gęślą” jaźń", "cp1250 windows-1250 x-cp1250"),
    ("cp1251", "Новости «дня» — №1", "cp1251 windows-1251 x-cp1251"),
    ("cp1252", "Café “quoted” — €",
     "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1"
     " iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"),
    ("cp1253", "Ειδήσεις “σήμερα” €", "cp1253 windows-1253 x-cp1253"),
    ("cp1254", "Bugün İstanbul “şişli” €",
     "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5"
     " latin5 windows-1254 x-cp1254"),
    ("cp1255", "חדשות “היום” €", "cp1255 windows-1255 x-cp1255"),
    ("cp1256", "أخبار “اليوم” €", "cp1256 windows-1256 x-cp1256"),
    ("cp1257", "Rīga “ą č” €", "cp1257 windows-1257 x-cp1257"),
    ("cp1258", "Sài Gon – Đà “x” €", "cp1258 windows-1258 x-cp1258"),
    ("mac_cyrillic", "Новости дня", "x-mac-cyrillic x-mac-ukrainian"),
    ("gb18030", "北京今天天气晴朗 镕 瓩",
     "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk gb18030"),
    ("big5hkscs", "臺北新聞 嘅 咗", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    ("euc_jp", "日本語のニュース", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    ("iso2022_jp", "日本語のニュース", "csiso2022jp iso-2022-jp"),
    ("cp932", "株式会社 ㈱ 第①回",
     "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    ("cp949", "똠방각하 뷁",
     "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601"
     " ksc_5601 windows-949"),
    ("iso2022_kr", "서울 뉴스", "csiso2022kr iso-2022-kr"),
    ("hz", "北京新闻", "hz-gb-2312"),
]  # fmt: skip
WHATWG_LABELS = [(label, codec, text) for codec, text, labels in WHATWG for label in labels.split()]


@pytest.mark.parametrize("where", ["http", "declaration"])
@pytest.mark.parametrize(
    ("label", "codec", "title"), WHATWG_LABELS, ids=[label for label, _, _ in WHATWG_LABELS]
)
def test_every_whatwg_label_is_read_as_browsers_read_it(
    label: str, codec: str, title: str, where: str
) -> None:
    """Before, labels Python's codec registry does not know (windows-874, ISO-8859-8-I,
    x-euc-jp, x-mac-roman, koi8, x-cp1251...) were unknown: Thai, Hebrew or Japanese
    feeds came out as windows-1252 mojibake."""
    body = _rss(title, label if where == "declaration" else "UTF-8", codec)
    if where == "http":
        body = body.replace(b' encoding="UTF-8"', b"")
    content_type = f"text/xml; charset={label}" if where == "http" else None
    feed = parse_feed(body, content_type, URL)
    assert feed.items[0].title == title
    assert not {"encoding_replaced", "encoding_mismatch"} & _codes(feed)


WIDE = [
    ("utf-16-le", "UTF-16LE"),
    ("utf-16-be", "UTF-16BE"),
    ("utf-16-le", "utf-16"),
    ("utf-16-be", "utf-16"),
    ("utf-16-le", "unicode"),
    ("utf-32-le", "UTF-32LE"),
    ("utf-32-be", "UTF-32BE"),
    ("utf-32-be", "utf-32"),
]
WIDE_TEXT = "Ünïcödé 日本 😀"


@pytest.mark.parametrize("kind", ["rss", "json"])
@pytest.mark.parametrize(("codec", "label"), WIDE, ids=[f"{c}-as-{label}" for c, label in WIDE])
def test_a_bomless_wide_document_is_read_with_the_http_label_its_bytes_fit(
    codec: str, label: str, kind: str
) -> None:
    """Before, a 16- or 32-bit HTTP charset was always ignored without a BOM or an XML
    declaration: a UTF-16 feed labelled only in the header was invalid_feed."""
    if kind == "rss":
        text = (
            '<rss version="2.0"><channel><title>x</title>'
            f"<item><title>{WIDE_TEXT}</title></item></channel></rss>"
        )
        content_type = f"application/rss+xml; charset={label}"
    else:
        text = (
            '{"version": "https://jsonfeed.org/version/1.1", "title": "x",'
            f' "items": [{{"id": "1", "title": "{WIDE_TEXT}"}}]}}'
        )
        content_type = f"application/feed+json; charset={label}"
    feed = parse_feed(text.encode(codec), content_type, URL)
    assert feed.items[0].title == WIDE_TEXT
    assert not {"encoding_replaced", "encoding_mismatch"} & _codes(feed)


@pytest.mark.parametrize("label", ["UTF-16LE", "UTF-16BE", "utf-16", "UTF-32LE"])
def test_a_wide_http_label_over_bytes_that_do_not_fit_it_is_ignored(label: str) -> None:
    feed = parse_feed(UTF8_BODY, f"application/rss+xml; charset={label}", URL)
    assert feed.items[0].title == "Naïve — “quoted”"
    assert "encoding_mismatch" in _codes(feed)


# (BOM's codec, HTTP charset, XML declaration's encoding, whether they contradict the BOM).
# The BOM always wins; a label naming the same encoding under another name is no mismatch.
BOM_AND_LABELS = [
    ("utf-8-sig", "iso-8859-1", "UTF-8", True),
    ("utf-8-sig", "windows-1251", None, True),
    ("utf-8-sig", None, "ISO-8859-1", True),
    ("utf-16", "utf-8", "UTF-16", True),  # Python's utf-16 writes a little-endian BOM
    ("utf-16", None, "UTF-8", True),
    ("utf-8-sig", "utf8", "UTF-8", False),
    ("utf-8-sig", "UTF-8", "utf-8", False),
    ("utf-8-sig", "unicode-1-1-utf-8", None, False),
    ("utf-8-sig", None, None, False),
    ("utf-16", "utf-16", "UTF-16", False),
    ("utf-16", "UTF-16LE", None, False),
    ("utf-32", "utf-32", "UTF-32", False),
]


@pytest.mark.parametrize(
    ("codec", "charset", "declared", "contradicts"),
    BOM_AND_LABELS,
    ids=[f"{c}-http-{h}-xml-{d}" for c, h, d, _ in BOM_AND_LABELS],
)
def test_a_label_that_contradicts_the_bom_is_noted(
    codec: str, charset: str | None, declared: str | None, contradicts: bool
) -> None:
    """Before, a charset contradicting the BOM was ignored in silence, while one
    contradicting the XML declaration was noted."""
    head = "" if declared is None else f'<?xml version="1.0" encoding="{declared}"?>'
    text = f'{head}<rss version="2.0"><channel><title>x</title><item><title>Café</title>'
    body = (text + "</item></channel></rss>").encode(codec)
    content_type = "application/rss+xml" + ("" if charset is None else f"; charset={charset}")
    feed = parse_feed(body, content_type, URL)
    assert feed.items[0].title == "Café"
    assert ("encoding_mismatch" in _codes(feed)) is contradicts
    assert "encoding_replaced" not in _codes(feed)
