"""examples/interleaved: both commands run on their generated data."""

import importlib.util
import os

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "interleaved")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"interleaved_example_{name}",
                                                  os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shards_to_parquet(tmp_path):
    out = _load("shards_to_parquet").main(str(tmp_path))
    assert out["result"].ok and out["files"] and out["duplicates"]
    kinds = out["result"].rejected.counts
    assert kinds  # filtered rows were split to the sink


def test_pdfs_to_webdataset(tmp_path):
    out = _load("pdfs_to_webdataset").main(str(tmp_path))
    assert out["result"].ok and out["shards"]
    assert out["reasons"] == ["empty_page", "encrypted_pdf"]
