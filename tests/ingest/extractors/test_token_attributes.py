"""The attribute ruler's rules applied by lookup set exactly what spaCy's ruler sets."""

from __future__ import annotations

from typing import Any

import pytest

from llama_kb.ingest.extractors._token_attributes import replace_attribute_ruler
from llama_kb.ingest.extractors.sentences import DEFAULT_SPACY_MODEL

spacy = pytest.importorskip("spacy")

# words the ruler's exceptions name: pronouns by case, modals, "not", a subordinating "that",
# and the pattern kinds beyond a tag: REGEX ("nothin'", "y'all", "ain't"), two words
# ("gonna", "let's", "there is"), NOT_IN with a dependency (auxiliaries), spaces
TEXTS = [
    "I gave it to him, and she told us that they would not come.",
    "There is nothin' here, y'all, and we ain't gonna stay; let's go.",
    "The film was directed by Jason Katims, but he had been born in Lyon in 1961.",
    "Whether it rains or not, something  will happen\n\nto everyone who does it.",
    "Those were the days: this one, that one, and these ones.",
]


def _load(**kwargs: Any) -> Any:
    try:
        return spacy.load(DEFAULT_SPACY_MODEL, exclude=["ner"], disable=["lemmatizer"], **kwargs)
    except OSError:
        pytest.skip(f"spaCy model {DEFAULT_SPACY_MODEL} is not installed")


def _attributes(doc: Any) -> list[tuple[str, ...]]:
    return [(t.text, t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_) for t in doc]


def test_lookup_sets_what_the_ruler_sets() -> None:
    with_ruler, with_lookup = _load(), _load()
    lookup = replace_attribute_ruler(with_lookup)
    assert lookup is not None
    assert "attribute_ruler" not in with_lookup.pipe_names
    for text in TEXTS:
        expected = _attributes(with_ruler(text))
        parsed = with_lookup(text)
        assert any(t.pos_ == "" for t in parsed)  # the ruler is what sets coarse POS
        assert _attributes(lookup(parsed)) == expected, text


def test_a_pattern_it_cannot_reproduce_leaves_the_pipeline_as_it_was() -> None:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"LENGTH": 3}]], {"POS": "NOUN"})
    assert replace_attribute_ruler(nlp) is None
    assert nlp.pipe_names == ["attribute_ruler"]
    assert [t.pos_ for t in nlp("cat dog")] == ["NOUN", "NOUN"]


def test_a_ruler_followed_by_another_component_is_kept() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add([[{"LOWER": "cat"}]], {"POS": "NOUN"})
    nlp.add_pipe("sentencizer")
    assert replace_attribute_ruler(nlp) is None
    assert nlp.pipe_names == ["attribute_ruler", "sentencizer"]


def test_later_rules_win_and_a_rule_may_set_the_second_word() -> None:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": {"REGEX": "^c.t$"}}]], {"POS": "NOUN"})
    ruler.add([[{"LOWER": "cat"}]], {"POS": "PROPN"})
    ruler.add([[{"LOWER": "big"}, {"LOWER": {"IN": ["cat", "cut"]}}]], {"LEMMA": "feline"}, -1)
    expected = [(t.pos_, t.lemma_) for t in nlp("big cat cut")]
    lookup = replace_attribute_ruler(nlp)
    assert lookup is not None
    assert [(t.pos_, t.lemma_) for t in lookup(nlp("big cat cut"))] == expected
    assert expected == [("", ""), ("PROPN", "feline"), ("NOUN", "")]
