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


def _python_edit_distance(ref, hyp):
    """The textbook dynamic programme (the loop jiwer replaced), kept here as the oracle."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def test_jiwer_rates_equal_the_dynamic_programme():
    import random

    from curator_audio.metrics import normalize_text

    rng = random.Random(7)
    vocab = ["a", "b", "cat", "dog", "the", "sat", "on", "mat"]
    for _ in range(60):
        ref = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))
        hyp = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12)))
        r, h = normalize_text(ref), normalize_text(hyp)
        assert word_error_rate(ref, hyp) == pytest.approx(
            _python_edit_distance(r.split(), h.split()) / len(r.split()))
        assert char_error_rate(ref, hyp) == pytest.approx(_python_edit_distance(r, h) / len(r))
        assert edit_distance(r.split(), h.split()) == _python_edit_distance(r.split(), h.split())


def test_cer_keeps_inner_spaces_when_not_collapsed():
    assert char_error_rate("a  b", "ab", collapse_whitespace=False) == pytest.approx(2 / 4)
