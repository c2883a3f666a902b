"""merge_file_prefixes (NeMo's nemo_curator.utils.merge_file_prefixes, used by its
nemotron-climb tutorial after MegatronTokenizerWriter)."""

from __future__ import annotations

import numpy as np
import pytest
from curator.errors import ConfigError
from curator_text.tokenization import merge_file_prefixes, write_indexed_dataset
from curator_text.tokenization.merge import read_index


def test_merging_pairs_equals_writing_all_sequences_at_once(tmp_path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    b = [[7, 8], [9]]
    a = [[1, 2, 3], [4], [5, 6]]
    write_indexed_dataset(str(parts / "b"), b)  # merged in prefix order: a then b
    write_indexed_dataset(str(parts / "a"), a)
    (parts / "notes.txt").write_text("not a pair")
    merge_file_prefixes(input_dir=str(parts), output_prefix=str(tmp_path / "merged"))
    write_indexed_dataset(str(tmp_path / "whole"), a + b)
    for ext in (".bin", ".idx"):
        assert (tmp_path / f"merged{ext}").read_bytes() == (tmp_path / f"whole{ext}").read_bytes()
    sizes, docs, dtype = read_index(str(tmp_path / "merged.idx"))
    assert list(sizes) == [3, 1, 2, 2, 1] and list(docs) == [0, 1, 2, 3, 4, 5]
    assert dtype is np.uint16


def test_incomplete_pairs_mixed_dtypes_and_empty_folders_raise(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no .bin/.idx pairs"):
        merge_file_prefixes(str(tmp_path), str(tmp_path / "out"))
    write_indexed_dataset(str(tmp_path / "a"), [[1]])
    write_indexed_dataset(str(tmp_path / "b"), [[2]], dtype=np.int32)
    with pytest.raises(ConfigError, match="mix token dtypes"):
        merge_file_prefixes(str(tmp_path), str(tmp_path / "out"))
    (tmp_path / "b.idx").unlink()
    with pytest.raises(ConfigError, match="b.idx is missing"):
        merge_file_prefixes(str(tmp_path), str(tmp_path / "out"))
    assert not (tmp_path / "out.bin").exists()


def test_curator_migrate_maps_nemos_import() -> None:
    from curator.migrate import migrate_source

    res = migrate_source("from nemo_curator.utils.merge_file_prefixes import merge_file_prefixes\n")
    assert res.text == "from curator_text.tokenization import merge_file_prefixes\n"
    assert not res.unmapped
