"""PiiModifier / PiiRedactionStage on documents with planted PII: precision and recall counted per
entity type, every action, no network, and NER entities from a local spaCy pipeline."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from curator import Pipeline
from curator_text.tasks import DocumentBatch

PLANTED = {  # entity type -> values planted in the documents
    "EMAIL_ADDRESS": ["jane.doe@example.com", "ops-team@mail.example.org"],
    "PHONE_NUMBER": ["(212) 555-0187", "+44 20 7946 0958"],
    "CREDIT_CARD": ["4111 1111 1111 1111", "5500-0000-0000-0004"],
    "IP_ADDRESS": ["192.168.10.25", "10.0.0.7"],
    "IBAN_CODE": ["GB82 WEST 1234 5698 7654 32", "DE89370400440532013000"],
    "US_SSN": ["432-56-7891", "512-34-6789"],
    "URL": ["https://example.org/page", "http://docs.example.net/a?b=1"],
}
CLEAN = ["The quarterly report was finished on time and the team celebrated.",
         "Order number 12345 shipped in 3 boxes.",
         "A card number that fails Luhn: 4111 1111 1111 1112 is not a card."]


def _docs() -> tuple[list[str], list[Counter]]:
    texts, truth = [], []
    for i in range(2):
        parts, c = [], Counter()
        for ent, values in PLANTED.items():
            parts.append(f"item {ent.lower()} is {values[i]} here.")
            c[ent] += 1
        texts.append(" ".join(parts))
        truth.append(c)
    for t in CLEAN:
        texts.append(t)
        truth.append(Counter())
    return texts, truth


@pytest.fixture(scope="module")
def modifier():
    from curator_text import PiiModifier

    m = PiiModifier(anonymize_action="replace")
    m.setup()
    return m


def test_planted_entities_precision_and_recall(modifier, monkeypatch) -> None:
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("PII redaction tried to use the network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    from curator_text import PiiRedactionStage

    texts, truth = _docs()
    stage = PiiRedactionStage(modifier).with_(worker_mode="thread")
    batch = DocumentBatch(task_id="p", dataset_name="t",
                          data=pa.table({"text": [*texts, None]}))
    out = Pipeline("pii", stages=[stage]).run(initial_tasks=[batch], summary=False)[0]
    redacted = out.to_pyarrow()["text"].to_pylist()
    assert redacted[-1] is None
    tp = fp = fn = 0
    per_type: Counter = Counter()
    for i, expected in enumerate(truth):
        found = Counter(modifier.redact(texts[i])[1])
        hit = found & expected
        tp += sum(hit.values())
        fp += sum((found - expected).values())
        fn += sum((expected - found).values())
        per_type.update(hit)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert recall == 1.0 and precision == 1.0, (precision, recall, per_type)
    for values in PLANTED.values():  # nothing planted survives
        assert not any(v in r for v in values for r in redacted[:2])
    assert redacted[2:5] == CLEAN  # clean text untouched (the bad card is not a card)
    assert out.to_pyarrow()["pii"].to_pylist() == [7, 7, 0, 0, 0, 0]
    assert out.metadata["pii_counts"] == {k: 2 for k in sorted(PLANTED)}
    assert "<EMAIL_ADDRESS>" in redacted[0] and "<US_SSN>" in redacted[1]


@pytest.mark.parametrize(("action", "kwargs", "check"), [
    ("redact", {}, lambda out: out == "mail  now"),
    ("replace", {"new_value": "[X]"}, lambda out: out == "mail [X] now"),
    ("mask", {"masking_char": "#", "chars_to_mask": 4}, lambda out: out == "mail ####.doe@example.com now"),
    ("hash", {"hash_type": "sha256"}, lambda out: len(out.split()[1]) == 64),
])
def test_actions(action, kwargs, check) -> None:
    from curator_text import Modify, PiiModifier

    m = PiiModifier(supported_entities=["EMAIL_ADDRESS"], anonymize_action=action, **kwargs)
    batch = DocumentBatch(task_id="a", dataset_name="t",
                          data=pa.table({"text": ["mail jane.doe@example.com now"]}))
    out = Modify(m).with_(worker_mode="thread").process(batch)
    assert check(out.to_pyarrow()["text"][0].as_py()), out.to_pyarrow()["text"][0].as_py()


def test_ner_entities_with_a_local_spacy_model(tmp_path) -> None:
    import spacy
    from curator_text import PiiModifier

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PERSON", "pattern": "Ada Lovelace"},
                        {"label": "GPE", "pattern": "London"}])
    nlp.to_disk(tmp_path / "ner")
    m = PiiModifier(ner_model=str(tmp_path / "ner"), anonymize_action="replace")
    text, counts = m.redact("Ada Lovelace lived in London; write to ada@example.com.")
    assert text == "<PERSON> lived in <LOCATION>; write to <EMAIL_ADDRESS>."
    assert counts == Counter({"PERSON": 1, "LOCATION": 1, "EMAIL_ADDRESS": 1})


def test_config_errors(tmp_path) -> None:
    from curator_text import PiiModifier

    with pytest.raises(ValueError, match="need an NER model"):
        PiiModifier(supported_entities=["PERSON"])
    with pytest.raises(ValueError, match="anonymize_action"):
        PiiModifier(anonymize_action="shred")
    with pytest.raises(ValueError, match="not supported"):
        PiiModifier(supported_entities=["PASSPORT"])
    with pytest.raises(ValueError, match="ner_model"):
        PiiModifier(ner_model=str(tmp_path / "missing"))


def test_per_entity_counts_in_run_stats_summary_and_report(tmp_path) -> None:
    """Two batches in two worker processes: the stage counter sums the entities of both."""
    import json

    import jsonschema
    from curator import LocalExecutor
    from curator.report import report_schema
    from curator_text import PiiModifier, PiiRedactionStage
    from curator_text.pii import PII_COUNTER

    texts, _ = _docs()
    batches = [DocumentBatch(task_id=f"b{i}", dataset_name="t",
                             data=pa.table({"text": [texts[i], CLEAN[i], None]}))
               for i in range(2)]
    stage = PiiRedactionStage(PiiModifier(anonymize_action="mask"))
    report = tmp_path / "run.json"
    result = Pipeline("pii", stages=[stage]).run(
        LocalExecutor(num_workers=2), initial_tasks=batches, summary=False, progress=False,
        report=str(report))
    assert result.ok and sorted(result.stats.stages[0].counters) == [PII_COUNTER]
    expected = {k: 2 for k in PLANTED}
    assert result.stats.stages[0].counters[PII_COUNTER] == expected
    assert sorted(sum(t.to_pyarrow()["pii"].to_pylist()) for t in result) == [7, 7]
    assert "PiiRedactionStage pii_entities: " in result.summary()
    assert "CREDIT_CARD=2" in result.summary()
    data = json.loads(report.read_text())
    jsonschema.validate(data, report_schema())
    assert data["stages"][0]["counters"] == {PII_COUNTER: expected}


def test_modifier_drains_the_entities_it_replaced(modifier) -> None:
    from curator_text.pii import PII_COUNTER

    modifier.drain_counts()
    modifier.redact("mail jane.doe@example.com or ops-team@mail.example.org, call (212) 555-0187")
    assert modifier.drain_counts() == {PII_COUNTER: {"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1}}
    assert modifier.drain_counts() == {}


def test_nemo_style_modify_publishes_the_entity_counts() -> None:
    """NeMo's usual form, ``Modify(PiiModifier(...))``, counts entities like the PII stage."""
    from curator_text import PiiModifier
    from curator_text.modifiers import Modify
    from curator_text.pii import PII_COUNTER

    texts, _ = _docs()
    batch = DocumentBatch(task_id="b", dataset_name="t", data=pa.table({"text": texts}))
    result = Pipeline("pii", stages=[Modify(PiiModifier(anonymize_action="replace"))]).run(
        initial_tasks=[batch], summary=False, progress=False)
    assert result.ok
    assert result.stats.stages[0].counters[PII_COUNTER] == {k: 2 for k in PLANTED}
