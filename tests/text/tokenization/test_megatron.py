"""MegatronTokenizerWriter and TokenizerStage on a tiny real tokenizer. The reader below is
written from the indexed-dataset format's description (header, version, dtype code, counts,
sizes, pointers, document index) and must read back every token."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from curator import Pipeline
from curator_text.tasks import DocumentBatch

from tests.text.classifiers.tiny_models import save_tokenizer

CODES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64,
         7: np.float32, 8: np.uint16}
TEXTS = ["the cat sat on the mat", "a big red house", "", "math lesson teaches algebra",
         "cheap deal"]


def read_megatron(prefix: str) -> list[list[int]]:
    """Documents of a Megatron ``.bin``/``.idx`` pair (from the format description)."""
    idx = Path(prefix + ".idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    (version,) = struct.unpack_from("<Q", idx, 9)
    (code,) = struct.unpack_from("<B", idx, 17)
    n_seq, n_doc = struct.unpack_from("<QQ", idx, 18)
    assert version == 1
    off = 34
    sizes = np.frombuffer(idx, np.int32, n_seq, off)
    off += 4 * n_seq
    pointers = np.frombuffer(idx, np.int64, n_seq, off)
    off += 8 * n_seq
    doc_index = np.frombuffer(idx, np.int64, n_doc, off)
    assert off + 8 * n_doc == len(idx)
    dtype = np.dtype(CODES[code])
    data = Path(prefix + ".bin").read_bytes()
    seqs = [np.frombuffer(data, dtype, int(n), int(p)).tolist()
            for n, p in zip(sizes, pointers, strict=True)]
    assert int(pointers[-1]) + int(sizes[-1]) * dtype.itemsize == len(data)
    return [sum(seqs[doc_index[i]:doc_index[i + 1]], []) for i in range(n_doc - 1)]


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("tok")
    save_tokenizer(d)
    return str(d)


@pytest.fixture(scope="module")
def tok_with_eos(tmp_path_factory) -> str:
    from transformers import AutoTokenizer

    d = tmp_path_factory.mktemp("tok_eos")
    save_tokenizer(d)
    tok = AutoTokenizer.from_pretrained(str(d))
    tok.eos_token = "[SEP]"
    tok.save_pretrained(str(d))
    return str(d)


def _batch(task_id: str, texts: list[str | None]) -> DocumentBatch:
    return DocumentBatch(task_id=task_id, dataset_name="t", data=pa.table({"text": texts}),
                         metadata={"source_files": [f"{task_id}.jsonl"]})


def test_writer_round_trips_token_for_token(tmp_path, tok_with_eos) -> None:
    from curator_text import MegatronTokenizerWriter
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tok_with_eos)
    writer = MegatronTokenizerWriter(path=str(tmp_path / "out"), model_identifier=tok_with_eos,
                                     append_eod=True, tokenization_batch_size=2)
    tasks = [_batch("part-0", TEXTS), _batch("part-1", ["blue sky", None, "green grass"])]
    result = Pipeline("m", stages=[writer]).run(initial_tasks=tasks, summary=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")) == [
        "part-0.bin", "part-0.idx", "part-1.bin", "part-1.idx"]  # one pair per partition
    eos = tok.eos_token_id
    for task_id, texts in (("part-0", TEXTS), ("part-1", ["blue sky", "green grass"])):
        docs = read_megatron(str(tmp_path / "out" / task_id))
        expected = [tok(t, add_special_tokens=False)["input_ids"] + [eos] for t in texts]
        assert docs == expected
    meta = {t.task_id: t.metadata for t in result}
    assert meta["part-0"]["num_tokens"] == sum(len(x) for x in read_megatron(
        str(tmp_path / "out" / "part-0")))
    assert meta["part-0"]["token_size"] == 2 and meta["part-0"]["eod_token_id"] == eos
    # the null text is not lost: it is in the rejected sink
    rejected = [r for r in result.rejected.records if r.stage == "MegatronTokenizerWriter"]
    assert len(rejected) == 1 and "null" in rejected[0].reason


def test_idx_bytes_match_the_format(tmp_path) -> None:
    from curator_text.tokenization import write_indexed_dataset

    prefix = str(tmp_path / "x")
    assert write_indexed_dataset(prefix, [[5, 6, 7], [], [70000]], np.int32) == (3, 4)
    idx = Path(prefix + ".idx").read_bytes()
    assert len(idx) == 9 + 8 + 1 + 8 + 8 + 3 * 4 + 3 * 8 + 4 * 8
    assert idx[17] == 4  # int32
    assert np.frombuffer(idx, np.int64, 3, 34 + 12).tolist() == [0, 12, 12]  # byte offsets
    assert read_megatron(prefix) == [[5, 6, 7], [], [70000]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.bin", "x.idx"]  # no temp files


def test_writer_config_errors(tmp_path, tok_dir) -> None:
    from curator_text import MegatronTokenizerWriter

    with pytest.raises(ValueError, match="model_identifier"):
        MegatronTokenizerWriter(path=str(tmp_path))
    w = MegatronTokenizerWriter(path=str(tmp_path), model_identifier=tok_dir, append_eod=True)
    with pytest.raises(ValueError, match="eos_token"):
        w.setup()


def test_tokenizer_stage_batched_matches_tokenizer(tok_dir) -> None:
    from curator_text import TokenizerStage
    from transformers import AutoTokenizer

    stage = TokenizerStage(tok_dir, sort_by_length=False, tokenization_batch_size=2)
    out = Pipeline("t", stages=[stage]).run(initial_tasks=[_batch("b", TEXTS)],
                                            summary=False)[0].to_pyarrow()
    tok = AutoTokenizer.from_pretrained(tok_dir)
    assert out["input_ids"].to_pylist() == [tok(t)["input_ids"] for t in TEXTS]
    assert out["attention_mask"].to_pylist() == [[1] * len(tok(t)["input_ids"]) for t in TEXTS]
