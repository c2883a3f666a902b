"""`curator run` on a Common Crawl spec of local WARC files, run from the folder it writes into
(as the README runs examples/text/common_crawl.yaml from the repository root; issue 36)."""

from __future__ import annotations

import json

from curator.cli import main


def test_local_warcs_spec_writes_under_the_working_directory(warc_files, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cc.yaml").write_text(
        "name: cc\nstages:\n"
        f"  - reader: CommonCrawlDownloadExtractStage\n    warc_paths: {warc_files['good']}\n"
        "  - writer: JsonlWriter\n    path: data/extracted\n")
    rc = main(["run", "-q", "cc.yaml"])
    err = capsys.readouterr().err
    assert rc == 0, err  # no download directory is declared: cwd is not an input path
    assert "input path" not in err
    rows = [json.loads(line) for f in (tmp_path / "data" / "extracted").glob("*.jsonl")
            for line in f.open()]
    assert rows and all(r["text"] for r in rows)
