"""Argument-free user macros are expanded in every shape papers define them (the shapes of the
papers in engrafo's integration tests: nested braces, a brace group as the body, spaces between
the parts, indented ``\\renewcommand``), and macros with arguments are left as they are."""

from __future__ import annotations

import pytest
from curator_web import ArxivExtractor

CASES = {
    "nested braces in the body": (
        "\\newcommand{\\id}{\\mathds{1}}", "The identity $\\id$ acts.", "\\mathds{1}"),
    "a brace group as the body": (
        "\\newcommand{\\lin}{{\\cal L}}", "The space $\\lin$ is linear.", "{\\cal L}"),
    "indented renewcommand with nested braces": (
        "        \\renewcommand{\\algorithmicrequire}{\\textbf{Input:}}",
        "\\algorithmicrequire a graph", "\\textbf{Input:} a graph"),
    "spaces between command, name and body": (
        "\\newcommand  {\\shA}     {\\mathcal{A}}\n\\renewcommand  {\\ker }  {\\operatorname{ker}}",
        "$\\shA$ and $\\ker f$", "$\\mathcal{A}$ and $\\operatorname{ker} f$"),
    "def with nested braces": (
        "\\def\\RR{\\mathbb{R}}", "over $\\RR^n$", "over $\\mathbb{R}^n$"),
    "providecommand and a bare starred name": (
        "\\providecommand{\\tool}{\\textsc{Curator}}\n\\newcommand*\\ver{v\\,{2}}",
        "\\tool{} \\ver", "\\textsc{Curator}{} v\\,{2}"),
    "a macro defined through a longer one": (
        "\\newcommand{\\ab}{\\abc{} and more}\n\\newcommand{\\abc}{\\emph{ABC}}",
        "See \\ab.", "See \\emph{ABC}{} and more."),
}


def _text(defs: str, body: str) -> str:
    tex = ("\\documentclass{article}\n" + defs + "\n\\begin{document}\n\\section{Intro}\n" + body
           + "\n\\end{document}\n")
    doc = ArxivExtractor().extract({"id": "2401.00001", "source_id": "s.tar", "content": [tex]})
    return doc["text"]


@pytest.mark.parametrize("shape", list(CASES))
def test_argument_free_macros_are_expanded(shape) -> None:
    defs, body, expanded = CASES[shape]
    text = _text(defs, body)
    assert expanded in text, text


def test_macros_with_arguments_and_parameters_are_left_alone() -> None:
    defs = ("\\newcommand{\\bra}[1]{\\left\\langle #1 \\right|}\n\\def\\pair#1#2{(#1,#2)}\n"
            "\\newcommand{\\numiii}{\\renewcommand{\\labelenumi}{(\\roman{enumi})}}")
    text = _text(defs, "$\\bra{x}$ and $\\pair{a}{b}$; \\labelenumi")
    assert "$\\bra{x}$ and $\\pair{a}{b}$; \\labelenumi" in text, text


def test_a_macro_that_uses_itself_stops() -> None:
    text = _text("\\def\\loop{x\\loop}", "A \\loop.")
    assert text.startswith("\\section{Intro}\nA x") and text.count("x") < 20
