"""Generated interleaved data for tests, examples and benchmarks: MINT-1T style shards,
OBELICS-layout Parquet and images. Each function also returns the rows a reader must give back
(the oracle), built from what was written, not by reading it.
"""

from __future__ import annotations

import io
import json
import os
import random
import tarfile
from typing import Any

import numpy as np

__all__ = ["encode_image", "make_image", "make_mint_shards", "make_obelics_parquet",
           "expected_rows", "make_tiny_clip_dir", "WORDS"]

WORDS = ("the quick brown fox jumps over lazy dog data curation model image text page "
         "figure table chart caption section result method").split()


def make_image(width: int, height: int, seed: int = 0, sharp: bool = True) -> np.ndarray:
    """An HxWx3 uint8 RGB image: random blocks (sharp, high Laplacian variance) or a smooth
    gradient (``sharp=False``, blurry)."""
    rng = np.random.default_rng(seed)
    if sharp:
        cells = rng.integers(0, 256, size=(max(height // 4, 1), max(width // 4, 1), 3),
                             dtype=np.uint8)
        img = np.kron(cells, np.ones((4, 4, 1), dtype=np.uint8))
        img = np.pad(img, ((0, max(0, height - img.shape[0])), (0, max(0, width - img.shape[1])),
                           (0, 0)))
        return np.ascontiguousarray(img[:height, :width])
    x = np.linspace(0, 255, width, dtype=np.float32)[None, :, None]
    y = np.linspace(0, 255, height, dtype=np.float32)[:, None, None]
    base = rng.integers(0, 60)
    return np.broadcast_to((x * 0.5 + y * 0.5 + base).clip(0, 255).astype(np.uint8),
                           (height, width, 3)).copy()


def encode_image(array: np.ndarray, fmt: str = "JPEG", quality: int = 90) -> bytes:
    """Encode an RGB array (``JPEG``, ``PNG``, ``TIFF`` …) with PIL."""
    from PIL import Image

    buf = io.BytesIO()
    kwargs: dict[str, Any] = {"quality": quality} if fmt.upper() == "JPEG" else {}
    Image.fromarray(array).save(buf, format=fmt, **kwargs)
    return buf.getvalue()


def _document(rng: random.Random, doc: int, max_segments: int) -> list[tuple[str, Any]]:
    """``[("text", str) | ("image", (w, h, seed))]`` in reading order, at least one text."""
    n = rng.randint(2, max_segments)
    segs: list[tuple[str, Any]] = []
    for k in range(n):
        if k == 0 or rng.random() < 0.6:
            segs.append(("text", " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))))
        else:
            w = rng.choice((32, 48, 64, 96, 128))
            h = rng.choice((32, 48, 64))
            segs.append(("image", (w, h, doc * 100 + k)))
    return segs


def make_mint_shards(out_dir: str, *, n_shards: int = 2, docs_per_shard: int = 4,
                     max_segments: int = 6, seed: int = 0, image_bytes: int | None = None,
                     extra_fields: bool = True) -> list[dict[str, Any]]:
    """Write MINT-1T style shards ``shard-{k:05d}.tar`` (``{key}.json`` with parallel ``texts`` /
    ``images`` lists, one ``{key}.{i}.jpg`` member per image) and return the documents as
    ``{"sample_id", "segments": [(modality, text or image bytes)], "url", "shard"}``.

    ``image_bytes``: pad each JPEG to about this size with an application segment (the
    benchmark's large shards) without changing its pixels."""
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    cache: dict[tuple[int, int, int], bytes] = {}
    for s in range(n_shards):
        path = os.path.join(out_dir, f"shard-{s:05d}.tar")
        with tarfile.open(path, "w") as tf:
            for d in range(docs_per_shard):
                doc_index = s * docs_per_shard + d
                key = f"doc{doc_index:06d}"
                segs = _document(rng, doc_index, max_segments)
                texts: list[str | None] = []
                images: list[str | None] = []
                out_segs: list[tuple[str, Any]] = []
                members: list[tuple[str, bytes]] = []
                for i, (kind, value) in enumerate(segs):
                    if kind == "text":
                        texts.append(value)
                        images.append(None)
                        out_segs.append(("text", value))
                    else:
                        w, h, sd = value
                        ck = (w, h, sd % 7)
                        if ck not in cache:
                            cache[ck] = _pad_jpeg(encode_image(make_image(w, h, sd % 7)),
                                                  image_bytes)
                        name = f"{key}.{i}.jpg"
                        texts.append(None)
                        images.append(name)
                        members.append((name, cache[ck]))
                        out_segs.append(("image", cache[ck]))
                payload: dict[str, Any] = {"texts": texts, "images": images}
                if extra_fields:
                    payload.update(url=f"https://example.org/{key}", language="en",
                                   score=round(rng.random(), 4))
                for name, data in members:
                    _add(tf, name, data)
                _add(tf, f"{key}.json", json.dumps(payload).encode())
                docs.append({"sample_id": key, "segments": out_segs, "shard": path,
                             "url": payload.get("url")})
    return docs


def _pad_jpeg(data: bytes, size: int | None) -> bytes:
    if not size or len(data) >= size:
        return data
    pad = size - len(data)
    chunks = []
    while pad > 0:  # APP15 segments of at most 65533 payload bytes, after SOI
        n = min(pad, 65533)
        chunks.append(b"\xff\xef" + (n + 2).to_bytes(2, "big") + b"\0" * n)
        pad -= n + 4
    return data[:2] + b"".join(chunks) + data[2:]


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def make_obelics_parquet(path: str, *, n_docs: int = 5, max_segments: int = 6, seed: int = 0,
                         image_urls: list[str] | None = None) -> list[dict[str, Any]]:
    """Write one OBELICS-layout Parquet file (``texts``, ``images``, ``metadata``,
    ``general_metadata``, ``doc_quality``) and return the documents as in
    :func:`make_mint_shards`. Images are bytes, or, when ``image_urls`` is given, those URLs in
    turn (the segment's value is then the URL)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    rows, docs = [], []
    url_i = 0
    for d in range(n_docs):
        segs = _document(rng, d, max_segments)
        texts, images, meta, out = [], [], [], []
        for kind, value in segs:
            if kind == "text":
                texts.append(value)
                images.append(None)
                meta.append(None)
                out.append(("text", value))
            else:
                w, h, sd = value
                if image_urls:
                    img: Any = image_urls[url_i % len(image_urls)]
                    url_i += 1
                else:
                    img = encode_image(make_image(w, h, sd))
                texts.append(None)
                images.append(img)
                meta.append({"src": f"https://img.example.org/{d}/{len(meta)}.jpg",
                             "original_width": w, "original_height": h})
                out.append(("image", img))
        general = {"url": f"https://example.org/page/{d}", "warc_record_offset": 1000 * d}
        rows.append({"texts": texts, "images": images, "metadata": json.dumps(meta),
                     "general_metadata": json.dumps(general), "doc_quality": round(rng.random(), 3)})
        docs.append({"sample_id": f"{_stem(path)}-{d}", "segments": out, "meta": meta,
                     "general_metadata": json.dumps(general)})
    img_type = pa.string() if image_urls else pa.binary()
    schema = pa.schema([("texts", pa.list_(pa.string())), ("images", pa.list_(img_type)),
                        ("metadata", pa.string()), ("general_metadata", pa.string()),
                        ("doc_quality", pa.float64())])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return docs


def _stem(path: str) -> str:
    from curator.io import file_stem

    return file_stem(path)


def expected_rows(docs: list[dict[str, Any]]) -> list[tuple[str, int, str, Any]]:
    """``(sample_id, position, modality, text or bytes-or-URL)`` of every content row of
    ``docs``, in reading order: what reading them back must give."""
    out = []
    for doc in docs:
        for i, (kind, value) in enumerate(doc["segments"]):
            out.append((doc["sample_id"], i, kind, value))
    return out


def make_tiny_clip_dir(path: str, seed: int = 0) -> str:
    """A tiny random-weight CLIP in the published Hugging Face layout with both towers and a
    tokenizer (``vocab.json`` + ``merges.txt``: letters and digits, the special tokens at ids 0
    and 1 as in the tiny text config): what ``InterleavedCLIPScoreFilterStage`` loads."""
    from curator_image.testing import make_tiny_clip_model

    make_tiny_clip_model(path, seed=seed)
    if not os.path.isfile(os.path.join(path, "vocab.json")):
        from transformers import CLIPTokenizer

        vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
        for ch in "abcdefghijklmnopqrstuvwxyz0123456789":
            vocab[ch] = len(vocab)
            vocab[f"{ch}</w>"] = len(vocab)
        vocab_file = os.path.join(path, "vocab.json")
        merges_file = os.path.join(path, "merges.txt")
        with open(vocab_file, "w") as fh:
            json.dump(vocab, fh)
        with open(merges_file, "w") as fh:
            fh.write("#version: 0.2\n")
        CLIPTokenizer(vocab_file, merges_file, model_max_length=16).save_pretrained(path)
    return path
