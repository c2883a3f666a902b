"""English word tokenizer that follows the rules of datatrove's default English tokenizer
(``spacy.blank("en")``: split on whitespace, then per chunk peel prefixes and suffixes, keep
special cases whole or split as listed, keep URLs whole, split infixes), then drop whitespace
tokens as datatrove does. Its cost is per distinct whitespace-separated chunk, not per document:
a chunk is tokenized once by the rules and remembered (as spaCy itself caches) in a table that a
compiled pass over the batch's UTF-8 bytes looks chunks up in, with no ``Doc`` objects.

Every token gets a number in a per-thread vocabulary with its character length, flags
(all-punctuation, has a letter, sentence end, punctuation) and a stable 63-bit hash, so the
compiled kernels work on arrays of numbers. The rules are written here from spaCy's documented
algorithm; the character classes come from Unicode categories (``unicodedata``), and the special
cases (English contractions, abbreviations, emoticons, times) are generated below.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from dataclasses import dataclass
from functools import cache
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EnglishWordTokenizer", "TokenizedBatch", "english_words", "shared_tokenizer",
           "PUNCTUATION_CHARS", "terminal_punctuation", "FLAG_SYMBOL", "FLAG_ALPHA",
           "FLAG_TERMINAL", "FLAG_PUNCT"]

# ---- character classes -------------------------------------------------------------------------

_PUNCT = "… , : ; ! ? ¿ ؟ ¡ ( ) [ ] { } < > _ # * & 。 ？ ！ ， 、 ； ： ～ · । ، ۔ ؛ ٪".split()
_QUOTES = "' \" ” “ ` ‘ ´ ’ ‚ , „ » « 「 」 『 』 （ ） 〔 〕 【 】 《 》 〈 〉 〈 〉 ⟦ ⟧".split()
_HYPHENS = ["-", "–", "—", "--", "---", "——", "~"]
_CURRENCY = ["$", "£", "€", "¥", "฿", "US$", "C$", "A$", "₽", "﷼", "₴", *map(chr, range(0x20A0, 0x20C1))]
_UNITS = ("km km² km³ m m² m³ dm dm² dm³ cm cm² cm³ mm mm² mm³ ha µm nm yd in ft kg g mg µg t lb "
          "oz m/s km/h kmh mph hPa Pa mbar mb MB kb KB gb GB tb TB T G M K % км км² км³ м м² м³ "
          "дм дм² дм³ см см² см³ мм мм² мм³ нм кг г мг м/с км/ч кПа Па мбар Кб КБ кб Мб МБ мб Гб "
          "ГБ гб Тб ТБ тб كم كم² كم³ م م² م³ سم سم² سم³ مم مم² مم³ كم غرام جرام جم كغ ملغ كوب اكواب"
          ).split()

PUNCTUATION_CHARS = frozenset(
    "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»"
    + "".join(map(chr, [*range(0, 9), *range(11, 13), *range(13, 32), *range(127, 160)])))
"""datatrove's ``PUNCTUATION`` characters (a word made only of these, or of terminal
punctuation, is a "symbol word")."""


@cache
def _terminal_punctuation() -> frozenset[str]:
    # Unicode's Sentence_Terminal characters as of the Unicode version datatrove's list follows:
    # later additions left out, three Khmer signs it also lists added.
    import regex

    st = regex.compile(r"\p{Sentence_Terminal}")
    out = {chr(cp) for cp in range(sys.maxunicode + 1) if st.match(chr(cp))}
    out -= {chr(cp) for cp in (0x1B4E, 0x1B4F, 0x1B7F, 0x2024, 0x2CF9, 0x2CFA, 0x2CFB, 0x2E60,
                               0x2E61, 0xFE12, 0xFE15, 0xFE16, 0x113D4, 0x113D5, 0x16D6E,
                               0x16D6F)}
    return frozenset(out | {"\u17d6", "\u17d9", "\u17da"})


def terminal_punctuation() -> frozenset[str]:
    """The sentence-ending characters (datatrove's ``TERMINAL_PUNCTUATION``)."""
    return _terminal_punctuation()


@cache
def _classes() -> dict[str, str]:
    """Regex character-class bodies: letters, lower (incl. uncased), upper (incl. uncased),
    other symbols (icons)."""
    alpha, lower, upper, icons = [], [], [], []
    for cp in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(cp))
        if cat[0] == "L":
            alpha.append(cp)
            if cat == "Ll":
                lower.append(cp)
            elif cat in ("Lu", "Lt"):
                upper.append(cp)
            elif cat == "Lo":
                lower.append(cp)
                upper.append(cp)
        elif cat == "So":
            icons.append(cp)
    return {k: _ranges(v) for k, v in
            (("a", alpha), ("al", lower), ("au", upper), ("i", icons))}


def _ranges(cps: list[int]) -> str:
    parts, start, prev = [], None, None
    for cp in cps:
        if start is None:
            start = prev = cp
        elif cp == prev + 1:
            prev = cp
        else:
            parts.append((start, prev))
            start = prev = cp
    if start is not None:
        parts.append((start, prev))
    esc = lambda c: re.escape(chr(c))  # noqa: E731
    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in parts)


def _alt(items: list[str]) -> list[str]:
    return [re.escape(x) for x in items]


@cache
def _regexes() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    c = _classes()
    a, al, au, icons = c["a"], c["al"], c["au"], c["i"]
    quotes = "".join(re.escape(q) for q in _QUOTES)
    punct = "".join(re.escape(p) for p in _PUNCT) + re.escape("|")
    ellipses = [r"\.\.+", "…"]
    icon = f"[{icons}]"
    prefixes = ["§", "%", "=", "—", "–", r"\+(?![0-9])", *_alt(_PUNCT), *ellipses,
                *_alt(_QUOTES), *_alt(_CURRENCY), icon]
    currency = "|".join(_alt(_CURRENCY))
    units = "|".join(_alt(_UNITS))
    # A lookbehind over a large Unicode class is slow when tried at every position: each
    # such rule first matches its (cheap) literal and then looks behind over it; icons (all
    # outside ASCII) are tried only at non-ASCII characters. Same matches as the rules written
    # the usual way, "(?<=class)literal".
    icon = f"(?=[^\\x00-\\x7f]){icon}"
    suffixes = [*_alt(_PUNCT), *ellipses, *_alt(_QUOTES), icon, "'s", "'S", "’s", "’S", "—", "–",
                r"\+(?<=[0-9]\+)", r"\.(?<=°[FfCcKk]\.)", f"(?<=[0-9])(?:{currency})",
                f"(?<=[0-9])(?:{units})",
                f"\\.(?<=[0-9{al}%²\\-\\+{punct}{quotes}(?:]\\.)", f"\\.(?<=[{au}][{au}]\\.)"]
    hyphens = "|".join(_alt(_HYPHENS))
    infixes = [*ellipses, icon, r"[+\-\*^](?<=[0-9][+\-\*^])(?=[0-9-])",
               f"\\.(?<=[{al}{quotes}]\\.)(?=[{au}{quotes}])", f",(?<=[{a}],)(?=[{a}])",
               f"(?=[-–—~])(?<=[{a}0-9])(?:{hyphens})(?=[{a}])",
               f"[:<>=/](?<=[{a}0-9][:<>=/])(?=[{a}])"]
    prefix_re = re.compile("^(?:" + "|".join(prefixes) + ")")
    suffix_re = re.compile("|".join(f"(?:{s})$" for s in suffixes))
    infix_re = re.compile("|".join(infixes))
    url_re = re.compile(
        r"^(?:(?:[\w\+\-\.]{2,})://)?(?:\S+(?::\S*)?@)?(?:"
        r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
        r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"
        r"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}"
        r"(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|"
        r"(?:(?:[A-Za-z0-9\u00a1-\uffff][A-Za-z0-9\u00a1-\uffff_-]{0,62})?"
        r"[A-Za-z0-9\u00a1-\uffff]\.)+" f"(?:[{al}]{{2,63}}))"
        r"(?::\d{2,5})?(?:[/?#]\S*)?$")
    return prefix_re, suffix_re, infix_re, url_re


# ---- special cases -----------------------------------------------------------------------------

_APOS = ("'", "’")


def _contractions() -> dict[str, list[str]]:
    """English contractions as the reference splits them, generated from (base, endings)."""
    out: dict[str, list[str]] = {}
    # ending -> tokens after the base; "" apostrophe forms drop the apostrophe
    pron = {
        "i": ["m", "ma", "d", "d've", "ll", "ll've", "ve"],
        "you": ["d", "d've", "ll", "ll've", "re", "ve"],
        "he": ["d", "d've", "ll", "ll've", "s"], "she": ["d", "d've", "ll", "ll've", "s"],
        "it": ["d", "d've", "ll", "ll've", "s"],
        "we": ["d", "d've", "ll", "ll've", "re", "ve"],
        "they": ["d", "d've", "ll", "ll've", "re", "ve"],
        "that": ["d", "d've", "ll", "ll've", "s"], "this": ["d", "d've", "ll", "ll've", "s"],
        "these": ["d", "d've", "ll", "ll've", "re", "ve"],
        "those": ["d", "d've", "ll", "ll've", "re", "ve"],
        "there": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "what": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "when": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "where": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "who": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "why": ["d", "d've", "ll", "ll've", "re", "s", "ve"],
        "how": ["d", "d've", "d'y", "ll", "ll've", "re", "s", "ve"],
    }
    # the no-apostrophe forms that are English words are not contractions
    words = {"ill", "well", "were", "hell", "shell", "its", "shed", "whore"}
    for base, ends in pron.items():
        for end in ends:
            parts = end.split("'")
            for ap in (*_APOS, ""):
                toks = [base] + [ap + p for p in parts]
                if base == "i" and end == "ma":
                    toks = ["i", ap + "m", "a"]
                key = "".join(toks)
                if not ap and (key in words or (base == "how" and end == "d'y")):
                    continue
                out[key] = toks
    # verb + n't
    nt = ("ai", "are", "ca", "could", "dare", "did", "does", "do", "had", "has", "have", "is",
          "may", "might", "must", "need", "ought", "sha", "should", "was", "were", "wo", "would")
    with_ve = {"ca", "could", "did", "does", "do", "had", "may", "might", "must", "need",
               "ought", "sha", "should", "wo", "would"}
    for base in nt:
        for ap in (*_APOS, ""):
            neg = "n" + ap + "t"
            out[base + neg] = [base, neg]
            if base in with_ve:
                out[base + neg + ap + "ve"] = [base, neg, ap + "ve"]
    for base in ("could", "might", "must", "should", "would", "not"):
        for ap in (*_APOS, ""):
            out[base + ap + "ve"] = [base, ap + "ve"]
    for ap in _APOS:
        out[f"let{ap}s"] = ["let", f"{ap}s"]
        out[f"y{ap}all"] = [f"y{ap}", "all"]
        out[f"c{ap}mon"] = [f"c{ap}m", "on"]
    out["yall"] = ["y", "all"]
    out["cannot"] = ["can", "not"]
    out["gonna"] = ["gon", "na"]
    out["gotta"] = ["got", "ta"]
    return out


def _single(words: list[str]) -> dict[str, list[str]]:
    return {w: [w] for w in words}


@cache
def _specials() -> dict[str, tuple[str, ...]]:
    sp: dict[str, list[str]] = {}
    for key, toks in _contractions().items():
        sp[key] = toks
        sp[key[0].upper() + key[1:]] = [toks[0][0].upper() + toks[0][1:], *toks[1:]]
    for key in ("y'all", "y’all", "yall"):
        sp.pop(key[0].upper() + key[1:], None)
    for h in range(1, 13):
        for p in ("am", "pm", "a.m.", "p.m."):
            sp[f"{h}{p}"] = [str(h), p]
    letters = "abcdefghijklmnopqrstuvwxyzäöü"
    abbrevs = (
        "'S 's 'd 'em 'll 're 'bout 'cause 'cos 'coz 'cuz 'nuff ’S ’s ’d ’em ’ll ’re ’bout "
        "’cause ’cos ’coz ’cuz ’nuff 'Cause 'Cos 'Coz 'Cuz ’Cause ’Cos ’Coz ’Cuz ‘S ‘s ’ ’’ ' '' "
        "C++ a.m. p.m. e.g. i.e. E.g. E.G. I.e. I.E. v.s. vs. and/or w/o co. Co. Corp. Inc. Ltd. "
        "Bros. Jr. Dr. Mr. Mrs. Ms. Messrs. Prof. Gen. Gov. Sen. Rep. Rev. Adm. St. Mt. Ph.D. "
        "D.C. N.C. N.D. N.H. N.J. N.M. N.Y. S.C. Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Sept. "
        "Oct. Nov. Dec. Ak. Ala. Ariz. Ark. Calif. Colo. Conn. Del. Fla. Ga. Ia. Id. Ill. Ind. "
        "Kan. Kans. Ky. La. Md. Mass. Mich. Minn. Miss. Mo. Mont. Neb. Nebr. Nev. Okla. Ore. Pa. "
        "Tenn. Va. Wash. Wis. nuff em ll o'clock O'clock o’clock O’clock ma'am Ma'am ma’am "
        "Ma’am ol ol' ol’ Ol Ol' Ol’ "
        ":) :-) :)) :-)) :))) :-))) (: (-: =) (= :] :-] [: [-: [= =] :o) (o: :} :-} 8) 8-) (-8 "
        ";) ;-) (; (-; :( :-( :(( :-(( :((( :-((( ): )-: =( >:( :') :'-) :'( :'-( :’) :’-) :’( "
        ":’-( :/ :-/ =/ =| :| :-| ]= =[ :1 :P :-P :p :-p :O :-O :o :-o :0 :-0 :() >:o :* :-* "
        ":3 :-3 =3 :> :-> :X :-X :x :-x :D :-D ;D ;-D =D xD XD xDD XDD 8D 8-D ^_^ ^__^ ^___^ "
        ">.< >.> <.< ._. ;_; -_- -__- v.v V.V v_v V_V o_o o_O O_o O_O 0_o o_0 0_0 o.O O.o O.O "
        "o.o 0.0 o.0 0.o @_@ <3 <33 <333 </3 (^_^) (-_-) (._.) (>_<) (*_*) (¬_¬) (ಠ_ಠ) ಠ_ಠ ಠ︵ಠ "
        "¯\\(ツ)/¯ (╯°□°）╯︵┻━┻ ><(((*> \\\") <space> \\n \\t —")
    sp.update(_single(abbrevs.split()))
    sp.update(_single([c + "." for c in letters]))
    for g in ("doin", "goin", "havin", "lovin", "nothin", "nuthin", "somethin"):
        for w in (g, g.capitalize()):
            sp.update(_single([w, w + "'", w + "’"]))
    for u in "CFKcfk":
        sp[f"°{u}."] = ["°", u, "."]
    return {k: tuple(v) for k, v in sp.items()}


def _suffix_len(suffix_re: re.Pattern, s: str) -> int:
    """The length of the suffix ``suffix_re`` finds at the end of ``s`` (0: none). Only a run of
    dots can be longer than the other suffixes (at most 5 characters), so the search starts
    just before the end instead of trying every position (lookbehinds still see the text
    before it)."""
    dots = len(s) - len(s.rstrip("."))
    if dots >= 2:
        return dots
    m = suffix_re.search(s, max(0, len(s) - 6))
    return (m.end() - m.start()) if m else 0


def _affixes(chunk: str, specials: dict[str, tuple[str, ...]]) -> list[str]:
    """The tokens of one whitespace-free chunk by the affix rules; ``specials`` (possibly
    empty) are kept whole or split as listed."""
    if chunk in specials:
        return list(specials[chunk])
    prefix_re, suffix_re, infix_re, url_re = _regexes()
    prefixes: list[str] = []
    suffixes: list[str] = []
    s = chunk
    last = -1
    while s and len(s) != last:
        if s in specials:
            break
        last = len(s)
        m = prefix_re.search(s)
        pre = m.end() if m else 0
        if pre:
            minus_pre = s[pre:]
            if minus_pre and minus_pre in specials:
                prefixes.append(s[:pre])
                s = minus_pre
                break
        suf = _suffix_len(suffix_re, s[pre:])
        if suf:
            minus_suf = s[:len(s) - suf]
            if minus_suf and minus_suf in specials:
                suffixes.append(s[len(s) - suf:])
                s = minus_suf
                break
        if pre and suf and pre + suf <= len(s):
            prefixes.append(s[:pre])
            suffixes.append(s[len(s) - suf:])
            s = s[pre:len(s) - suf]
        elif pre:
            prefixes.append(s[:pre])
            s = s[pre:]
        elif suf:
            suffixes.append(s[len(s) - suf:])
            s = s[:len(s) - suf]
        if s and s in specials:
            break
    out = prefixes
    if s:
        if s in specials:
            out.extend(specials[s])
        elif "." in s and url_re.match(s):  # a URL has a dot (host or IP)
            out.append(s)
        else:
            start = 0
            for m in infix_re.finditer(s):
                a, b = m.start(), m.end()
                if a == 0:
                    continue
                if a != start:
                    out.append(s[start:a])
                if a != b:
                    out.append(s[a:b])
                start = b
            if s[start:]:
                out.append(s[start:])
    out.extend(reversed(suffixes))
    return out


@cache
def _merge_patterns() -> tuple[dict[tuple[str, ...], str], int, frozenset[str]]:
    """Special cases that the affix rules would split (e.g. ``):``), by the tokens they split
    into: after a chunk is tokenized such a run of tokens is replaced by the special case."""
    prefix_re, suffix_re, infix_re, _ = _regexes()
    pats = {}
    for key in _specials():
        if prefix_re.search(key) or suffix_re.search(key) or infix_re.search(key):
            toks = tuple(_affixes(key, {}))
            if len(toks) > 1:
                pats[toks] = key
    return pats, max((len(p) for p in pats), default=0), frozenset(p[0] for p in pats)


def _tokenize_chunk(chunk: str) -> list[str]:
    """The words of one whitespace-free chunk."""
    specials = _specials()
    out = _fast_chunk(chunk) or _affixes(chunk, specials)
    if len(out) > 1:
        pats, longest, firsts = _merge_patterns()
        if firsts.isdisjoint(out):
            return [t for t in (t.strip() for t in out) if t]
        merged: list[str] = []
        i = 0
        while i < len(out):
            for size in range(min(longest, len(out) - i) if out[i] in firsts else 0, 1, -1):
                key = pats.get(tuple(out[i:i + size]))
                if key is not None:
                    merged.extend(specials[key])
                    i += size
                    break
            else:
                merged.append(out[i])
                i += 1
        out = merged
    return [t for t in (t.strip() for t in out) if t]


def english_words(text: str) -> list[str]:
    """The words of ``text`` as datatrove's English ``split_into_words`` finds them."""
    return [w for chunk in text.split() for w in _tokenize_chunk(chunk)]


# ---- vocabulary and batches --------------------------------------------------------------------

FLAG_SYMBOL = 1
"""Every character is punctuation (datatrove's ``PUNCTUATION_SET``): not a "non-symbol word"."""
FLAG_ALPHA = 2
"""At least one character is alphabetic (``str.isalpha``)."""
FLAG_TERMINAL = 4
"""One sentence-ending character (ends a sentence for the sentence splitter)."""
FLAG_PUNCT = 8
"""Every character is Unicode punctuation (category P*; spaCy's ``is_punct``)."""


@dataclass
class TokenizedBatch:
    """The words of a batch of texts as numbers: ``ids[offsets[i]:offsets[i+1]]`` are text
    ``i``'s words; ``lengths``/``flags``/``hashes`` are indexed by word number."""

    ids: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    flags: np.ndarray
    hashes: np.ndarray


class _ChunkCache(dict):
    def __init__(self, vocab: EnglishWordTokenizer) -> None:
        super().__init__()
        self._vocab = vocab

    def __missing__(self, chunk: str) -> tuple[int, ...]:
        ids = tuple(self._vocab.word_id(t) for t in _tokenize_chunk(chunk))
        self[chunk] = ids
        return ids


_OPEN = frozenset("(\"“‘[")
_CLOSE = frozenset(")\"”]")
_END = frozenset(",;:!?.")


def _fast_chunk(chunk: str) -> list[str] | None:
    """The tokens (before the special-case merge) of the commonest chunks without the
    regexes: an ASCII word with at most one opening bracket or quote before it and at most two
    closing brackets, quotes or punctuation marks after it, when the rules give them
    unambiguously; else ``None``."""
    specials = _specials()
    if chunk in specials:
        return None
    if chunk.isascii() and chunk.isalpha():
        return [chunk]
    start = 1 if chunk[:1] in _OPEN else 0
    end = len(chunk)
    while end > start and len(chunk) - end < 2 and (chunk[end - 1] in _CLOSE
                                                    or chunk[end - 1] in _END):
        end -= 1
    body = chunk[start:end]
    if not (body and body.isascii() and body.isalpha()) or end < len(chunk) - 2:
        return None
    tail = chunk[end:]
    if body in specials or tail.count(".") > 1 or chunk[start:] in specials:
        return None
    if tail[:1] == "." and not (body[-1].islower() or len(body) > 1 and body[-2:].isupper()):
        return None  # "A." stays whole; other dots follow a bracket, quote or lower case
    return [*chunk[:start], body, *tail]


class EnglishWordTokenizer:
    """Tokenizes batches of texts into word numbers (see :class:`TokenizedBatch`).

    A compiled pass splits the texts into whitespace-separated chunks and finds each in a table
    of the chunks seen before (keyed by their bytes); only a chunk never seen is tokenized in
    Python, once, by the rules. The table is shared by every filter running in the thread, so a
    chain pays for a distinct chunk once, and the words of the last ``max_docs`` texts are
    remembered by a 64-bit hash of their bytes (the next filter of a chain asks for the same
    texts). Keeps at most ``max_chunks`` chunks (then starts afresh between batches)."""

    def __init__(self, max_chunks: int = 2_000_000, max_docs: int = 5_000) -> None:
        self.max_chunks, self.max_docs = max_chunks, max_docs
        self._reset()

    def _reset(self) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._chunks = _ChunkCache(self)  # the Python path (texts Arrow cannot hold)
        self._docs: dict[int, np.ndarray] = {}  # text hash -> its word numbers
        # the compiled chunk table (see ``fineweb._kernels.chunk_scan``)
        self._slots = np.full(2 << 15, -1, np.int64)
        self._ents = np.zeros(4 << 14, np.int64)
        self._store = np.zeros(1 << 20, np.uint8)
        self._toks = np.zeros(1 << 16, np.int64)
        self._n_entries = self._store_used = self._n_toks = 0

    def word_id(self, word: str) -> int:
        i = self._ids.get(word)
        if i is None:
            i = self._ids[word] = len(self._words)
            self._words.append(word)
        return i

    def _vocab_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lengths, flags, hashes) of every word number: those of new words computed in one
        compiled pass (flags of words with non-ASCII characters in Python)."""
        have = self._arrays
        k = 0 if have is None else len(have[0])
        if have is not None and k == len(self._words):
            return have
        import pyarrow as pa

        from curator_text.filters._vec import text_bytes
        from curator_text.filters.fineweb import _kernels as kernels

        new = self._words[k:]
        try:
            buf, offsets = text_bytes(pa.array(new, type=pa.string()))
        except (pa.ArrowException, UnicodeError):  # lone surrogates: hashed with their escapes
            data = [w.encode("utf-8", "surrogatepass") for w in new]
            buf = np.frombuffer(b"".join(data), np.uint8)
            offsets = np.concatenate([[0], np.cumsum([len(d) for d in data])]).astype(np.int64)
        _, hashes, flags = kernels.word_attributes(buf, offsets, _ascii_lut())
        lengths = np.fromiter(map(len, new), np.int64, len(new))  # characters, as Python counts
        for j in np.flatnonzero(flags < 0).tolist():
            flags[j] = _flags(new[j])
        tail = (lengths, flags, hashes)
        self._arrays = tail if have is None else tuple(
            np.concatenate([a, b]) for a, b in zip(have, tail, strict=True))
        return self._arrays

    def tokenize(self, texts: list[str] | pa.Array | pa.ChunkedArray) -> TokenizedBatch:
        """The words of ``texts`` (a list of strings or an Arrow string array; nulls are
        empty texts)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._n_entries > self.max_chunks:
            self._reset()
        from curator_text.filters.fineweb import _kernels as kernels

        if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
            try:
                texts = pa.array(texts, type=pa.string())
            except (pa.ArrowException, UnicodeError):  # e.g. lone surrogates
                return self._tokenize_python(list(texts))
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if texts.null_count:
            texts = pc.fill_null(texts, "")
        from curator_text import _native
        from curator_text._bytes import SPACE_CLASSES, SPACE_E2_80
        from curator_text.filters._vec import per_text, text_bytes

        buf, offsets = text_bytes(texts)
        # the filters of a chain see the same texts: a text's words are remembered by a 64-bit
        # hash of its bytes (with its length), and only the texts not seen are scanned
        if len(self._docs) > self.max_docs:
            self._docs.clear()
        keys = kernels.text_hashes(buf, offsets).tolist()
        docs = self._docs
        cached = [docs.get(k) for k in keys]
        todo = [i for i, c in enumerate(cached) if c is None]
        if len(todo) < len(keys):
            if todo:
                fresh = self.tokenize(texts.take(pa.array(todo, pa.int64())))
                for j, i in enumerate(todo):
                    cached[i] = fresh.ids[fresh.offsets[j]:fresh.offsets[j + 1]]
            lens = np.zeros(len(keys) + 1, np.int64)
            lens[1:] = [len(c) for c in cached]
            lengths, flags, hashes = self._vocab_arrays()
            return TokenizedBatch(ids=np.concatenate(cached) if cached else np.zeros(0, np.int64),
                                  offsets=np.cumsum(lens), lengths=lengths, flags=flags,
                                  hashes=hashes)
        n_chunks = int(per_text(_native.word_counts, texts).sum())
        entries = np.empty(n_chunks, np.int32)
        doc_chunks = np.zeros(len(offsets), np.int64)
        new = np.empty(n_chunks, np.int32)
        done = n_new = 0
        while True:
            done, self._n_entries, self._store_used, n_new = kernels.chunk_scan(
                buf, offsets, done, SPACE_CLASSES, SPACE_E2_80, self._slots, self._ents,
                self._store, self._n_entries, self._store_used, entries, doc_chunks, new, n_new)
            if done == len(offsets) - 1:
                break
            self._grow(int(offsets[done + 1] - offsets[done]))  # full: grow, go on
        if n_new:
            self._tokenize_new(new[:n_new])
        ids, offs = kernels.chunk_words(entries, doc_chunks, self._ents, self._toks)
        for k, a, b in zip(keys, offs[:-1].tolist(), offs[1:].tolist(), strict=True):
            docs[k] = ids[a:b]
        lengths, flags, hashes = self._vocab_arrays()
        return TokenizedBatch(ids=ids, offsets=offs, lengths=lengths, flags=flags, hashes=hashes)

    def _grow(self, text_bytes: int) -> None:
        """Double the chunk table, the entries and the store as they fill up (the store leaves
        room for a text of ``text_bytes``)."""
        from curator_text.filters.fineweb import _kernels as kernels

        n = self._n_entries
        if 2 * (n + 1) > len(self._slots) // 2:
            slots = np.full(2 * len(self._slots), -1, np.int64)
            kernels.chunk_rehash(self._slots, slots)
            self._slots = slots
        if 4 * (n + 1) > len(self._ents):
            ents = np.zeros(2 * len(self._ents), np.int64)
            ents[:4 * n] = self._ents[:4 * n]
            self._ents = ents
        if self._store_used + text_bytes > len(self._store):
            store = np.zeros(max(2 * len(self._store), self._store_used + text_bytes), np.uint8)
            store[:self._store_used] = self._store[:self._store_used]
            self._store = store

    def _tokenize_new(self, new: np.ndarray) -> None:
        """Tokenize the chunks of the new entries by the rules; record their words."""
        ents = self._ents
        word_id = self.word_id
        specials = _specials()
        starts, lens = ents[4 * new], ents[4 * new + 1]
        first = int(starts[0])
        region = self._store[first:self._store_used].tobytes()  # new chunks lie one after another
        out: list[int] = []
        counts = np.empty(len(new), np.int64)
        for k, (a, n) in enumerate(zip((starts - first).tolist(), lens.tolist(), strict=True)):
            chunk = region[a:a + n].decode("utf-8")
            if chunk.isascii() and chunk.isalpha() and chunk not in specials:
                out.append(word_id(chunk))
                counts[k] = 1
            else:
                words = _tokenize_chunk(chunk)
                out.extend(map(word_id, words))
                counts[k] = len(words)
        if self._n_toks + len(out) > len(self._toks):
            grown = np.zeros(max(self._n_toks + len(out), 2 * len(self._toks)), np.int64)
            grown[:self._n_toks] = self._toks[:self._n_toks]
            self._toks = grown
        self._toks[self._n_toks:self._n_toks + len(out)] = out
        ents[4 * new + 3] = counts
        ents[4 * new + 2] = self._n_toks + np.cumsum(counts) - counts
        self._n_toks += len(out)

    def _tokenize_python(self, texts: list[str]) -> TokenizedBatch:
        get = self._chunks.__getitem__
        parts = [np.fromiter(chain.from_iterable(map(get, text.split())), dtype=np.int64)
                 for text in texts]
        lens = np.zeros(len(texts) + 1, dtype=np.int64)
        lens[1:] = [len(p) for p in parts]
        lengths, flags, hashes = self._vocab_arrays()
        return TokenizedBatch(
            ids=np.concatenate(parts) if parts else np.zeros(0, np.int64),
            offsets=np.cumsum(lens), lengths=lengths, flags=flags, hashes=hashes)

    def ids(self, text: str) -> list[int]:
        """The word numbers of one text."""
        return list(chain.from_iterable(map(self._chunks.__getitem__, text.split())))

    def word(self, i: int) -> str:
        """The word numbered ``i``."""
        return self._words[i]

    def words(self, ids: np.ndarray) -> list[str]:
        """The words numbered ``ids``."""
        w = self._words
        return [w[i] for i in ids.tolist()]

    def id_of(self, word: str) -> int | None:
        """The number of ``word`` if it was seen (else ``None``)."""
        return self._ids.get(word)

    @property
    def flags(self) -> np.ndarray:
        """The flags of every word number."""
        return self._vocab_arrays()[1]


def _flags(word: str) -> int:
    """The ``FLAG_*`` bits of ``word``."""
    term = _terminal_punctuation()
    flags = 0
    if all(c in PUNCTUATION_CHARS or c in term for c in word):
        flags |= FLAG_SYMBOL
    if any(c.isalpha() for c in word):
        flags |= FLAG_ALPHA
    if len(word) == 1 and word in term:
        flags |= FLAG_TERMINAL
    if all(unicodedata.category(c)[0] == "P" for c in word):
        flags |= FLAG_PUNCT
    return flags


@cache
def _ascii_lut() -> np.ndarray:
    """Per ASCII byte, the flags of the one-character word (see ``_kernels.word_attributes``)."""
    return np.array([_flags(chr(c)) for c in range(128)], np.int8)


_LOCAL = threading.local()


def shared_tokenizer() -> EnglishWordTokenizer:
    """One tokenizer per thread (its caches are not thread-safe), shared by the filters that
    run in it so they share its chunk and document caches."""
    tok = getattr(_LOCAL, "tokenizer", None)
    if tok is None:
        tok = _LOCAL.tokenizer = EnglishWordTokenizer()
    return tok
