"""Extracts the Python code of NeMo Curator's documentation pages and tutorials of one or more
modalities (text, image, video, audio, dedup) from a local clone (``fetch`` of NVIDIA-NeMo/Curator)
into a work directory outside the repository.

    python compat/nemo_docs/extract.py --repo /work/.mirror/NVIDIA-NeMo+Curator/repo \\
        --commit 1e2e4275e --out /tmp/nemo_docs_cases [--modality text,image,video,audio,dedup]

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

_P = "fern/versions/main/pages/"
SOURCES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # modality -> (page prefixes, tutorial prefixes)
    "text": ((f"{_P}curate-text/", f"{_P}get-started/text.mdx", f"{_P}about/concepts/text/"),
             ("tutorials/text/",)),
    "image": ((f"{_P}curate-images/", f"{_P}get-started/image.mdx", f"{_P}about/concepts/image/"),
              ("tutorials/image/",)),
    "video": ((f"{_P}curate-video/", f"{_P}get-started/video.mdx", f"{_P}about/concepts/video/"),
              ("tutorials/video/",)),
    "audio": ((f"{_P}curate-audio/", f"{_P}get-started/audio.mdx", f"{_P}about/concepts/audio/"),
              ("tutorials/audio/",)),
    "dedup": ((f"{_P}about/concepts/deduplication.mdx",), ("tutorials/deduplication/",)),
}
_BLOCK = re.compile(r"^([ \t]*)```(?:python|py)[^\n]*\n(.*?)^\1```", re.S | re.M)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                          check=True).stdout


def _dedent(code: str, indent: str) -> str:
    return "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                     for line in code.splitlines()) + "\n"


def _modality(path: str, modalities: tuple[str, ...]) -> str | None:
    # text's dedup pages stay text cases; "dedup" adds the modality-agnostic page and tutorials
    for m in modalities:
        pages, tutorials = SOURCES[m]
        if (path.endswith(".mdx") and path.startswith(pages)) or (
                path.endswith(".py") and path.startswith(tutorials)):
            return m
    return None


def extract(repo: str, commit: str, out: Path,
            modalities: tuple[str, ...] = ("text",)) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    files = _git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
    cases: list[dict] = []
    for path in files:
        modality = _modality(path, modalities)
        if modality is None:
            continue
        page = path.endswith(".mdx")
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
                          "kind": "page" if page else "tutorial", "modality": modality})
    (out / "cases.json").write_text(json.dumps(cases, indent=1))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", default="1e2e4275e")
    ap.add_argument("--out", default="/tmp/nemo_docs_cases")
    ap.add_argument("--modality", default="text",
                    help=f"comma-separated, of {', '.join(SOURCES)} (or all)")
    args = ap.parse_args()
    modalities = tuple(SOURCES) if args.modality == "all" else tuple(args.modality.split(","))
    unknown = set(modalities) - set(SOURCES)
    if unknown:
        ap.error(f"unknown modality {sorted(unknown)}; choose from {', '.join(SOURCES)}")
    cases = extract(args.repo, args.commit, Path(args.out), modalities)
    print(f"{len(cases)} cases in {args.out}")


if __name__ == "__main__":
    main()
