"""URLs end where markup starts: ``<bad>`` after a URL is kept by the remover and not counted by
the URL filter; NeMo's greedy remover pattern stays available."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from curator_text import UrlRemover, UrlsFilter
from curator_text.filters._vec import URL_REGEX
from curator_text.modifiers.text import NEMO_URL_PATTERN


def test_remover_stops_at_markup() -> None:
    text = 'see https://example.com/page<bad> and <a href="http://x.org/p">x</a> WWW.A.B/c" ok'
    assert UrlRemover().modify_document(text) == 'see <bad> and <a href="">x</a> " ok'
    assert UrlRemover().modify_batch(pa.array([text, "", None]))[0].as_py() == (
        'see <bad> and <a href="">x</a> " ok')
    assert UrlRemover(NEMO_URL_PATTERN).modify_document("see https://e.com/p<bad> ok") == "see  ok"


def test_filter_and_general_pattern_stop_at_markup() -> None:
    text = "see http://example.com/page<bad> here"
    assert UrlsFilter().score_document(text) == pytest.approx(len("http://example.com/page")
                                                              / len(text))
    assert re.findall(URL_REGEX, text) == ["http://example.com/page"]
    assert re.findall(URL_REGEX, 'x "www.a.com/b" y') == ["www.a.com/b"]
