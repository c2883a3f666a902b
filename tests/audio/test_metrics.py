import pytest
from curator_audio import char_error_rate, edit_distance, normalize_text, word_error_rate


def test_edit_distance_hand_computed():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance([], ["a", "b"]) == 2
    assert edit_distance(["a", "b", "c"], ["a", "c"]) == 1


@pytest.mark.parametrize("ref,hyp,wer", [
    ("the cat sat on the mat", "the cat sat on the mat", 0.0),
    ("the cat sat on the mat", "the cat sit on mat", 2 / 6),        # 1 sub + 1 del
    ("hello world", "hello big world", 1 / 2),                       # 1 insertion
    ("a b c d", "e f g h", 1.0),
    ("Hello, World!", "hello world", 0.0),                          # normalised
    ("", "", 0.0),
    ("", "something", 1.0),
])
def test_word_error_rate(ref, hyp, wer):
    assert word_error_rate(ref, hyp) == pytest.approx(wer)


def test_normalisation_options_change_the_score():
    assert word_error_rate("Hello, World!", "hello world", lowercase=False,
                           remove_punctuation=False) == 1.0
    assert word_error_rate("Hello World", "hello world", lowercase=False) == 1.0
    assert normalize_text("  Don't  STOP,  now! ") == "don't stop now"
    assert normalize_text("a  b", collapse_whitespace=False) == "a  b"


def test_char_error_rate_hand_computed():
    assert char_error_rate("abcd", "abed") == pytest.approx(1 / 4)
    assert char_error_rate("ab cd", "abcd") == pytest.approx(1 / 5)  # the space is deleted
    assert char_error_rate("Hi!", "hi") == 0.0
