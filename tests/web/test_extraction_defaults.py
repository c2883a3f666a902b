"""Extraction defaults: the wrapped library's own behaviour (no per-paragraph stop-word filter,
Trafilatura without its cross-document cache), NeMo's post-processing behind
``nemo_compat=True``, and the language identified on the extracted text."""

from __future__ import annotations

import pytest
from curator_web import (
    CommonCrawlHTMLExtractor,
    ResiliparseExtractor,
    TrafilaturaExtractor,
    get_stop_list_dict,
)

from tests.web.conftest import MAIN_EN, MAIN_FR, page

pytestmark = pytest.mark.filterwarnings("ignore")

# A paragraph of the article that has few stop words (a list of facts): NeMo's filter drops it.
FACTS = ("Population 1,234 residents. Founded 1650. Area 12 km2. Harbour depth 9 metres. "
         "Mayor Jane Smith. Twin town Brest.")
ARTICLE = [MAIN_EN[0], FACTS, MAIN_EN[1], MAIN_EN[2]]


def _record(html: str) -> dict:
    return {"url": "http://x/", "warc_id": "id", "source_id": "s", "content": html.encode()}


@pytest.mark.parametrize("algorithm", [ResiliparseExtractor, TrafilaturaExtractor])
def test_defaults_keep_article_paragraphs_nemo_compat_drops(algorithm) -> None:
    stop = get_stop_list_dict(["ENGLISH"])["ENGLISH"]
    html = page(ARTICLE)
    default = "\n".join(algorithm().extract_text(html, None, None))
    nemo = "\n".join(algorithm(nemo_compat=True).extract_text(html, stop, "ENGLISH"))
    assert FACTS in default and MAIN_EN[0] in default
    assert FACTS not in nemo and MAIN_EN[0] in nemo
    assert not algorithm().needs_stop_words() and algorithm(nemo_compat=True).needs_stop_words()


def test_trafilatura_default_is_deterministic_nemo_compat_is_not() -> None:
    html = page(ARTICLE)
    default, nemo = TrafilaturaExtractor(), TrafilaturaExtractor(nemo_compat=True)
    stop = get_stop_list_dict(["ENGLISH"])["ENGLISH"]
    first = [default.extract_text(html, None, None) for _ in range(4)]
    assert all(f == first[0] for f in first)
    nemo_runs = [nemo.extract_text(html, stop, "ENGLISH") for _ in range(4)]
    # NeMo's deduplicate=True: the process-wide cache makes repeated text vanish
    assert nemo_runs[-1] != nemo_runs[0]


def test_language_is_that_of_the_extracted_text() -> None:
    """English boilerplate around a French article: the document is French."""
    legal = ("This website uses cookies and similar technologies to give you the best "
             "experience, to measure how the site is used and to show you offers that may be "
             "of interest to you. By continuing to browse you agree to their use. ") * 12
    html = page([MAIN_FR, MAIN_FR.replace("vieux", "grand")], "Le port").replace(
        "<footer>", f"<footer><p>{legal}</p>")
    doc = CommonCrawlHTMLExtractor("resiliparse").extract(_record(html))
    assert doc["language"] == "FRENCH"
    assert "cookies" not in doc["text"]


def test_stop_list_language_comes_from_a_bounded_prefix() -> None:
    from curator_web.html import visible_text_prefix

    html = "<html><head><script>var x = 'english words here';</script></head><body>" + \
        "<p>" + MAIN_FR + "</p>" + f"<p>{MAIN_FR}</p>" * 3000 + "</body></html>"
    prefix = visible_text_prefix(html, 4096)
    assert prefix.startswith(MAIN_FR[:40]) and "var x" not in prefix and len(prefix) <= 4096
    doc = CommonCrawlHTMLExtractor("justext").extract(_record(html))
    assert doc is not None and doc["language"] == "FRENCH"


def test_one_pass_over_the_page_for_resiliparse(monkeypatch) -> None:
    """No second full-page pass for language identification."""
    import resiliparse.extract.html2text as h2t

    calls = []
    real = h2t.extract_plain_text

    def counting(html, *a, **k):
        calls.append(len(html))
        return real(html, *a, **k)

    monkeypatch.setattr(h2t, "extract_plain_text", counting)
    ex = CommonCrawlHTMLExtractor("resiliparse")
    assert ex.extract(_record(page(ARTICLE)))["language"] == "ENGLISH"
    assert len(calls) == 1
