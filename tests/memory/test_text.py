"""The shared text toolkit: one definition of a word, a stem, an overlap and a sentence."""

from memory.text import jaccard, query_terms, split_sentences, stem_overlap, stems, word_set


def test_query_terms_drop_stop_words_and_single_letters():
    assert query_terms("What is the best ramen in Lisbon, y'know?") == ["best", "ramen", "lisbon"]


def test_two_texts_without_content_words_repeat_each_other_but_share_no_stems():
    assert word_set("thanks!") == word_set("ok, hi") == set()
    assert jaccard(word_set("thanks!"), word_set("ok, hi")) == 1.0
    assert stem_overlap("thanks!", "ok, hi") == 0.0


def test_stems_match_across_inflections():
    assert stems("deploying deployed deploys") == {"deploy"}


def test_chat_sentences_keep_abbreviations_and_initials_whole():
    assert split_sentences("I saw Dr. Lee at St. Mary's today. Then J. went home!") == [
        "I saw Dr. Lee at St. Mary's today.",
        "Then J. went home!",
    ]


def test_note_sentences_end_only_before_a_capital_or_a_digit():
    text = "Use node v2. then deploy. Dr. Lee approved"
    assert split_sentences(text, abbreviations=False, capitalised=True) == [
        "Use node v2. then deploy.",
        "Dr.",
        "Lee approved",
    ]
