"""Extracts the Python code of NeMo Curator's text documentation pages and text tutorials from a
local clone (``fetch`` of NVIDIA-NeMo/Curator) into a work directory outside the repository.

    python compat/nemo_docs/extract.py --repo /work/.mirror/NVIDIA-NeMo+Curator/repo \\
        --commit 1e2e4275e --out /tmp/nemo_docs_cases

Each case is one file ``NNN_<page>_<block>.py`` plus ``cases.json`` (source page, line). Only
blocks that import ``nemo_curator`` are kept (the rest are shell, YAML or fragments of them).
Nothing extracted is ever written into the repository.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

PAGES = ("fern/versions/main/pages/curate-text/", "fern/versions/main/pages/get-started/text.mdx",
         "fern/versions/main/pages/about/concepts/text/")
TUTORIALS = "tutorials/text/"
_BLOCK = re.compile(r"^([ \t]*)```(?:python|py)[^\n]*\n(.*?)^\1```", re.S | re.M)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                          check=True).stdout


def _dedent(code: str, indent: str) -> str:
    return "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                     for line in code.splitlines()) + "\n"


def extract(repo: str, commit: str, out: Path) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    files = _git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
    cases: list[dict] = []
    for path in files:
        page = path.endswith(".mdx") and any(path.startswith(p) for p in PAGES)
        tutorial = path.startswith(TUTORIALS) and path.endswith(".py")
        if not (page or tutorial):
            continue
        text = _git(repo, "show", f"{commit}:{path}")
        blocks = ([(m.start(), _dedent(m.group(2), m.group(1))) for m in _BLOCK.finditer(text)]
                  if page else [(0, text)])
        for k, (offset, code) in enumerate(blocks):
            if "nemo_curator" not in code:
                continue
            line = text.count("\n", 0, offset) + 1
            stem = re.sub(r"[^A-Za-z0-9]+", "_", path.rsplit(".", 1)[0].split("pages/")[-1])
            name = f"{len(cases):03d}_{stem}_{k}.py"
            (out / name).write_text(code)
            cases.append({"case": name, "source": path, "line": line,
                          "kind": "page" if page else "tutorial"})
    (out / "cases.json").write_text(json.dumps(cases, indent=1))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", default="1e2e4275e")
    ap.add_argument("--out", default="/tmp/nemo_docs_cases")
    args = ap.parse_args()
    cases = extract(args.repo, args.commit, Path(args.out))
    print(f"{len(cases)} cases in {args.out}")


if __name__ == "__main__":
    main()
