"""The reference pages' code blocks run on Curator as a user types them, so docs and product cannot
drift apart.

Every block of /work/shared/reference/*.txt that uses the new API is transcribed below verbatim
(indentation restored where the page's rendering lost it) and checked against the page when the
page is there. A test runs its page's "session" as a user would: a prelude (what the page leaves
to the user: data generated locally, ``args``, paths, imports), the blocks it builds on, then the
block, with every ``from nemo_curator... import X`` mapped to the Curator module that exports
``X``. Paths under ``/data`` become a temporary directory and download URLs point at a real HTTP
server on 127.0.0.1. A block that cannot run yet because a feature is missing is
``xfail(strict=True)`` naming the feature, so it turns red once it passes.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import importlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REFERENCE = Path("/work/shared/reference")
OUR_MODULES = ("curator", "curator_text", "curator_image", "curator_web", "curator.dedup",
               "curator_text.dedup", "curator.stages.file_partitioning")

GUIDE = "001_bf8c72ba0cd7c83b.txt"
BACKENDS = "002_f6be24129fecd8aa.txt"
RESOURCES = "003_a48496396a07f64c.txt"
STREAMING = "004_105ab158a8225273.txt"
FAQ = "000_63a7cfcd369b3099.txt"


@dataclass(frozen=True)
class Block:
    page: str
    name: str
    code: str
    needs: tuple[str, ...] = ()  # blocks of the same page run before this one
    xfail: str | None = None  # the missing feature that stops it


BLOCKS = [
    # ---- 001 migration guide: text ------------------------------------------------------------
    Block(GUIDE, "text_client", '''\
# New: Ray
from nemo_curator.core.client import RayClient
ray_client = RayClient()
ray_client.start()
'''),
    Block(GUIDE, "text_stages", '''\
# New: Define stages
stages = [
    TinyStoriesDownloadExtractStage(raw_dir, split=args.split),
    Modify(modifier_fn=QuotationUnifier()),
    Modify(modifier_fn=UnicodeReformatter()),
    ScoreFilter(filter_obj=WordCountFilter(min_words=80)),
    ScoreFilter(filter_obj=IncompleteStoryFilter()),
    JsonlWriter(curated_dir),
]
''', needs=("text_client",)),
    Block(GUIDE, "text_run", '''\
# New: Create pipeline with stages
pipeline = Pipeline(
    name="tinystories",
    description="Download and curation pipeline for the TinyStories dataset.",
    stages=stages,
)

# Create executor
executor = XennaExecutor()

# Execute pipeline
pipeline.run(executor)
''', needs=("text_client", "text_stages")),
    Block(GUIDE, "text_stop", '''\
# Stop Ray client
ray_client.stop()
''', needs=("text_client", "text_stages", "text_run")),
    # ---- 001 migration guide: image -----------------------------------------------------------
    Block(GUIDE, "image_read", '''\
# New: Read images from webdataset tar files
read_stage = ImageReaderStage(
    task_batch_size=args.task_batch_size,
    num_threads=16,
    num_gpus_per_worker=0.25,
)
'''),
    Block(GUIDE, "image_embed", '''\
# New: Generate CLIP embeddings for images
img_embedding_stage = ImageEmbeddingStage(
    model_dir=args.model_dir,
    num_gpus_per_worker=args.embedding_gpus_per_worker,
    model_inference_batch_size=args.embedding_batch_size,
    remove_image_data=False,
    verbose=args.verbose,
)
'''),
    Block(GUIDE, "image_aesthetic", '''\
# New: Generate aesthetic quality scores and filter
aesthetic_filter_stage = ImageAestheticFilterStage(
    model_dir=args.model_dir,
    num_gpus_per_worker=args.aesthetic_gpus_per_worker,
    model_inference_batch_size=args.aesthetic_batch_size,
    score_threshold=args.aesthetic_threshold,
    verbose=args.verbose,
)
'''),
    Block(GUIDE, "image_semdedup", '''\
# New: Semantic Deduplication
semantic_dedup_stage = SemanticDeduplicationStage(
    id_field="image_id",
    embedding_field="image_embedding",
    n_clusters=100,
    eps=0.01,
)
'''),
    Block(GUIDE, "image_stop", '''\
# New: Stop Ray client
ray_client.stop()
''', needs=("text_client",)),
    Block(GUIDE, "image_run", '''\
# New: Define pipeline
pipeline = Pipeline(
    name="image_curation",
    description="Curate images with embeddings and quality scoring",
    stages=[
        read_stage,
        img_embedding_stage,
        semantic_dedup_stage,
    ],
)

# Create executor
executor = XennaExecutor()

# Execute pipeline
pipeline.run(executor)
''', needs=("text_client", "image_read", "image_embed", "image_semdedup")),
    # ---- 002 execution backends ---------------------------------------------------------------
    Block(BACKENDS, "fuzzy", '''\
from nemo_curator.stages.deduplication.fuzzy.workflow import FuzzyDeduplicationWorkflow

workflow = FuzzyDeduplicationWorkflow(
    input_path="/data/documents",
    cache_path="/data/cache",
    output_path="/data/output",
    text_field="text",
    perform_removal=True,
    num_bands=20,
    minhashes_per_band=13,
)

# The workflow automatically uses RayActorPoolExecutor for GPU-accelerated stages
results = workflow.run()
'''),
    Block(BACKENDS, "ray_data", '''\
from nemo_curator.backends.experimental.ray_data import RayDataExecutor

executor = RayDataExecutor()
results = pipeline.run(executor)
'''),
    Block(BACKENDS, "minimal", '''\
from nemo_curator.pipeline import Pipeline
from nemo_curator.backends.xenna import XennaExecutor

# Build your pipeline
pipeline = Pipeline(name="curator_pipeline")
# pipeline.add_stage(stage1)
# pipeline.add_stage(stage2)

# Run with Xenna (recommended)
executor = XennaExecutor(config={"execution_mode": "streaming"})
results = pipeline.run(executor)

print(f"Completed with {len(results) if results else 0} output tasks")
'''),
    # ---- 003 resources ------------------------------------------------------------------------
    Block(RESOURCES, "stages", '''\
from nemo_curator.stages.core import ProcessingStage
from nemo_curator.stages.function_definitions import processing_stage
from nemo_curator.stages.resources import Resources
from nemo_curator.tasks import DocumentBatch
class TokenizerStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    name: str = "TokenizerStage"
    resources: Resources = Resources(cpus=1.0) # CPU-only — no GPU needed
    def __init__(self):
        super().__init__()
        # ... stage logic ...
class ModelStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    name: str = "ModelStage"
    def __init__(self, model_path: str):
        super().__init__()
        # ... stage logic ...
        pass
@processing_stage(name="custom_filter", resources=Resources(cpus=1))
def custom_filter_stage(task: DocumentBatch) -> DocumentBatch:
    # ... filter logic ...
    pass
model_stage = ModelStage(model_path="path/to/model").with_(resources=Resources(gpus=1))
'''),
    Block(RESOURCES, "cpu_gpu", '''\
# CPU-only: tokenization, filtering, I/O
# Runs on any worker, doesn't block GPU resources
@processing_stage(name="tokenizer", resources=Resources(cpus=1))
def tokenizer_stage(task: DocumentBatch) -> DocumentBatch:
    pass
# GPU: model inference, embeddings
# Scheduled only on GPU-equipped nodes
model_stage = ModelStage(model_path="path/to/model").with_(resources=Resources(gpus=1))
''', needs=("stages",)),
    Block(RESOURCES, "fractional", '''\
# 4 workers share one GPU via fractional allocation
model_stage = ModelStage(model_path="path/to/model").with_(resources=Resources(gpus=0.25))
# Or reserve a specific amount of GPU memory
model_stage = ModelStage(model_path="path/to/model").with_(resources=Resources(gpu_memory_gb=10))
''', needs=("stages",)),
    # ---- 004 streaming vs batch ---------------------------------------------------------------
    Block(STREAMING, "batch_size", '''\
from nemo_curator.stages.resources import Resources

# Configure batch size on a stage
word_count_stage = WordCountStage().with_(batch_size=128)
'''),
]

NOT_RUN = {  # fenced python blocks of the guide that are not run, with why
    "# Old": "the Dask API the guide migrates away from",
    "# Close Dask client": "the Dask API the guide migrates away from",
    "# New workflow: Modular, Ray-based pipeline": "a skeleton with placeholder stage names "
                                                   "(ReaderStage, WriterStage)",
}
BY_NAME = {(b.page, b.name): b for b in BLOCKS}
FILL_INS = {  # what a page leaves to the user ("# ... stage logic ..."): a stage's process()
    RESOURCES: [("        # ... stage logic ...\n",
                 "        # ... stage logic ...\n    def process(self, task):\n        return task\n")],
    # the user's stages where the page comments them out (a pipeline needs stages, in NeMo too)
    BACKENDS: [("# pipeline.add_stage(stage1)\n# pipeline.add_stage(stage2)\n",
                "pipeline.add_stage(stage1)\npipeline.add_stage(stage2)\n")],
}


# ---- imports: NeMo's module paths -> ours ---------------------------------------------------
@functools.cache
def _home(name: str) -> str | None:
    for mod in OUR_MODULES:
        if getattr(importlib.import_module(mod), name, None) is not None:
            return mod
    return None


def map_imports(code: str) -> str:
    """``from nemo_curator.x import A, B`` -> one import per name from the Curator module that
    exports it (left as is when none does, so running it names the missing name)."""

    def repl(m: re.Match) -> str:
        names = [n.strip() for n in m.group(2).split(",") if n.strip()]
        homes = [_home(n) for n in names]
        if None in homes:
            return m.group(0)
        return "\n".join(f"from {h} import {n}" for h, n in zip(homes, names, strict=True))

    return re.sub(r"^from (nemo_curator\S*) import ([^\n(]+)$", repl, code, flags=re.M)


def run_session(page: str, name: str, ns: dict[str, Any], tmp: Path) -> dict[str, Any]:
    block = BY_NAME[(page, name)]
    for dep in (*block.needs, name):
        code = map_imports(BY_NAME[(page, dep)].code).replace('"/data/', f'"{tmp}/data/')
        for old, new in FILL_INS.get(page, []):
            code = code.replace(old, new)
        exec(compile(code, f"<{page}:{dep}>", "exec"), ns)
    return ns


# ---- the pages are transcribed faithfully ---------------------------------------------------
def _squash(text: str) -> str:
    return re.sub(r"\s+", "", re.sub(r"^\d+", "", text, flags=re.M))


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"{b.page[:3]}-{b.name}")
def test_block_is_on_its_page(block: Block) -> None:
    page = REFERENCE / block.page
    if not page.exists():
        pytest.skip(f"{page} is not on this machine")
    assert _squash(block.code) in _squash(page.read_text("utf-8"))


def test_every_new_api_block_of_the_guide_is_covered() -> None:
    page = REFERENCE / GUIDE
    if not page.exists():
        pytest.skip(f"{page} is not on this machine")
    fenced = re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), flags=re.S)
    ours = {_squash(b.code) for b in BLOCKS if b.page == GUIDE}
    for code in fenced:
        reason = [why for head, why in NOT_RUN.items() if code.lstrip().startswith(head)]
        assert reason or _squash(code) in ours, f"block not run by this test:\n{code}"


def test_faq_has_no_code_to_run() -> None:
    page = REFERENCE / FAQ
    if not page.exists():
        pytest.skip(f"{page} is not on this machine")
    text = page.read_text("utf-8")
    assert "```" not in text and not re.search(r"^(from|import) \w", text, flags=re.M)


# ---- prelude helpers --------------------------------------------------------------------------
@pytest.fixture
def ray_address(ray_cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """The docs call ``RayClient()`` / executors with no address: point them at the session's
    cluster (never at another cluster that ``address="auto"`` might find)."""
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster.address)
    return ray_cluster.address


@pytest.fixture
def http_dir(tmp_path: Path):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path / "www"``; yields (dir, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _story(i: int, words: int, end: str) -> str:
    body = " ".join(f"word{i}x{k}" for k in range(words - 2))
    return f"\u201cHello\u201d said {body}{end}"


TEXT_IMPORTS = '''\
from nemo_curator.pipeline import Pipeline
from nemo_curator.backends.xenna import XennaExecutor
from nemo_curator.stages.text.download import TinyStoriesDownloadExtractStage
from nemo_curator.stages.text.modifiers import Modify, QuotationUnifier, UnicodeReformatter
from nemo_curator.stages.text.filters import ScoreFilter, WordCountFilter, IncompleteStoryFilter
from nemo_curator.stages.text.io.writer import JsonlWriter
'''


def _xfail(name: str, page: str = GUIDE) -> Any:
    block = BY_NAME.get((page, name))
    reason = block.xfail if block else None
    return pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=reason)]
                        * bool(reason))


@pytest.mark.ray
@pytest.mark.parametrize("name", [_xfail(n) for n in ("text_client", "text_stages", "text_run",
                                                      "text_stop", "image_stop", "local")])
def test_guide_text_pipeline(name: str, tmp_path: Path, ray_address: str, http_dir,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's text session; ``local``: its stages block run on the default executor."""
    import curator_web.tinystories as ts

    www, base = http_dir
    stories = [_story(0, 90, "."), _story(1, 85, "!"), _story(2, 95, ""),  # 2: incomplete
               _story(3, 10, "."), _story(4, 100, ".")]  # 3: too short
    (www / "TinyStories-valid.txt").write_text("\n<|endoftext|>\n".join(stories), "utf-8")
    monkeypatch.setitem(ts.TINYSTORIES_URLS, "valid", f"{base}/TinyStories-valid.txt")
    ns: dict[str, Any] = {"args": argparse.Namespace(split="valid"),
                          "raw_dir": str(tmp_path / "raw"), "curated_dir": str(tmp_path / "out")}
    exec(map_imports(TEXT_IMPORTS), ns)
    if name == "local":
        run_session(GUIDE, "text_stages", ns, tmp_path)
        assert ns["Pipeline"](name="tinystories", stages=ns["stages"]).run().ok
    else:
        run_session(GUIDE, name, ns, tmp_path)
    if name in ("text_run", "text_stop", "local"):
        rows = [json.loads(line) for f in sorted((tmp_path / "out").glob("*.jsonl"))
                for line in f.read_text("utf-8").splitlines()]
        expected = {_story(i, n, e).replace("\u201c", '"').replace("\u201d", '"')
                    for i, n, e in [(0, 90, "."), (1, 85, "!"), (4, 100, ".")]}
        assert {r["text"].strip() for r in rows} == expected
    if name == "text_stages":
        assert [type(s).__name__ for s in ns["stages"]][0] == "TinyStoriesDownloadExtractStage"


def _image_args(tmp_path: Path) -> argparse.Namespace:
    return argparse.Namespace(task_batch_size=4, model_dir=str(tmp_path / "models"),
                              embedding_gpus_per_worker=0.0, embedding_batch_size=4,
                              aesthetic_gpus_per_worker=0.0, aesthetic_batch_size=4,
                              aesthetic_threshold=0.5, verbose=False)


IMAGE_IMPORTS = '''\
from nemo_curator.pipeline import Pipeline
from nemo_curator.backends.xenna import XennaExecutor
from nemo_curator.stages.image.io.image_reader import ImageReaderStage
from nemo_curator.stages.image.embedders.clip_embedder import ImageEmbeddingStage
from nemo_curator.stages.image.filters.aesthetic_filter import ImageAestheticFilterStage
from nemo_curator.stages.deduplication.semantic import SemanticDeduplicationStage
'''


@pytest.mark.parametrize("block", [
    pytest.param(b, id=b.name, marks=[pytest.mark.xfail(strict=True, reason=b.xfail)] * bool(b.xfail))
    for b in BLOCKS if b.page == GUIDE and b.name in ("image_read", "image_embed",
                                                      "image_aesthetic", "image_semdedup")])
def test_guide_image_stages(block: Block, tmp_path: Path) -> None:
    ns: dict[str, Any] = {"args": _image_args(tmp_path)}
    try:
        exec(map_imports(IMAGE_IMPORTS), ns)
    except ImportError:
        pass  # a missing name fails below, in the block that uses it
    run_session(GUIDE, block.name, ns, tmp_path)
    stage = next(v for k, v in ns.items() if k.endswith("_stage"))
    assert type(stage).__name__ in block.code


@pytest.mark.ray
def test_guide_image_pipeline(tmp_path: Path, ray_address: str) -> None:
    """The guide's image session on Xenna, every model under one ``model_dir`` root laid out as
    NeMo Curator's (``openai/clip-vit-large-patch14``, the aesthetic and NSFW hub ids). The
    guide's reader has no input (NeMo's own tutorial puts a FilePartitioningStage first): as
    written the run stops at once saying what to add; with that stage 0 it runs."""
    from curator.executors.base import SourceStageError
    from curator_image.testing import (
        TINY_CLIP_EMBED_DIM,
        make_tiny_model_dir,
        make_webdataset_shards,
    )

    args = _image_args(tmp_path)
    make_tiny_model_dir(args.model_dir)
    # 2 shards of 4 images; the last image of each shard repeats its first: 6 of 8 are kept
    make_webdataset_shards(str(tmp_path / "shards"), n_shards=2, per_shard=4, duplicates=1)
    ns: dict[str, Any] = {"args": args}
    exec(map_imports(IMAGE_IMPORTS), ns)
    with pytest.raises(SourceStageError, match=r"no shards to read.*FilePartitioningStage"):
        run_session(GUIDE, "image_run", ns, tmp_path)
    exec(map_imports("from nemo_curator.stages.file_partitioning import "
                     "FilePartitioningStage\n"), ns)
    pipeline = ns["pipeline"]
    pipeline.stages.insert(0, ns["FilePartitioningStage"](  # NeMo's tutorial's stage 0
        file_paths=str(tmp_path / "shards"), files_per_partition=1, file_extensions=[".tar"]))
    result = pipeline.run(ns["executor"])
    assert result.ok and result.stats.executor == "xenna"
    images = sorted((i for t in result for i in t.data), key=lambda i: i.image_id)
    assert [i.image_id for i in images] == [f"{s:05d}{k:04d}" for s in (0, 1) for k in range(3)]
    assert all(i.image_embedding.shape == (TINY_CLIP_EMBED_DIM,) for i in images)
    # the aesthetic stage of the guide loads from the same root and scores every image
    run_session(GUIDE, "image_aesthetic", ns, tmp_path)
    stage = ns["aesthetic_filter_stage"]
    stage.setup()
    scores = stage.score_items(result[0], result[0].data)
    assert len(scores) == len(result[0].data) and all(isinstance(x, float) for x in scores)


def test_backends_fuzzy_dedup(tmp_path: Path) -> None:
    docs = tmp_path / "data" / "documents"
    docs.mkdir(parents=True)
    base = "the quick brown fox jumps over the lazy dog near the river bank every single morning"
    rows = [{"id": 0, "text": base}, {"id": 1, "text": base + " today"},
            {"id": 2, "text": "a completely different sentence about apples and oranges in june"}]
    (docs / "part.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    ns = run_session(BACKENDS, "fuzzy", {}, tmp_path)
    out = tmp_path / "data" / "output"
    kept = [json.loads(line)["text"] for f in sorted(out.rglob("*.jsonl"))
            for line in f.read_text("utf-8").splitlines()]
    assert ns["results"] is not None
    assert len(kept) == 2 and rows[2]["text"] in kept  # one of the two near-duplicates removed


@pytest.mark.ray
def test_backends_ray_data(tmp_path: Path, ray_address: str) -> None:
    from curator_text import DocumentBatch, JsonlReader

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": f"doc {i}"}) + "\n" for i in range(3)), "utf-8")
    pre = '''\
from nemo_curator.pipeline import Pipeline

pipeline = Pipeline(name="example_pipeline", description="Curator pipeline")
pipeline.add_stage(JsonlReader(src))
'''
    ns: dict[str, Any] = {"JsonlReader": JsonlReader, "src": str(src)}
    exec(map_imports(pre), ns)
    run_session(BACKENDS, "ray_data", ns, tmp_path)
    results = list(ns["results"])
    assert sum(t.num_items for t in results if isinstance(t, DocumentBatch)) == 3


@pytest.mark.ray
def test_backends_minimal_xenna(tmp_path: Path, ray_address: str,
                                capsys: pytest.CaptureFixture) -> None:
    """The page's minimal Xenna run, with the user's two stages where it comments them out."""
    from curator_text import JsonlReader, JsonlWriter

    src = tmp_path / "in"
    src.mkdir()
    for f in range(2):
        (src / f"{f}.jsonl").write_text(
            "".join(json.dumps({"text": f"doc {f} {i}"}) + "\n" for i in range(3)), "utf-8")
    ns: dict[str, Any] = {"stage1": JsonlReader(str(src)),
                          "stage2": JsonlWriter(str(tmp_path / "out"))}
    xenna_env = ("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES", "RAY_MAX_LIMIT_FROM_API_SERVER")
    before = {k: os.environ.get(k) for k in xenna_env}
    run_session(BACKENDS, "minimal", ns, tmp_path)
    # Xenna sets these in the driver for good; undone, so later clusters are as asked
    assert {k: os.environ.get(k) for k in xenna_env} == before
    assert ns["results"].ok and ns["results"].stats.executor == "xenna"
    assert f"Completed with {len(ns['results'])} output tasks" in capsys.readouterr().out
    rows = [json.loads(line)["text"] for f in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in f.read_text("utf-8").splitlines()]
    assert sorted(rows) == sorted(f"doc {f} {i}" for f in range(2) for i in range(3))


def test_resources_stages(tmp_path: Path) -> None:
    ns = run_session(RESOURCES, "stages", {}, tmp_path)
    assert ns["TokenizerStage"]().resources.cpus == 1.0
    assert ns["model_stage"].resources.gpus == 1
    assert ns["custom_filter_stage"].name == "custom_filter"
    assert ns["custom_filter_stage"].resources.cpus == 1


def test_resources_cpu_and_gpu_stages(tmp_path: Path) -> None:
    ns = run_session(RESOURCES, "cpu_gpu", {}, tmp_path)
    assert ns["tokenizer_stage"].resources.gpus == 0
    assert ns["model_stage"].resources.requires_gpu


def test_resources_fractional(tmp_path: Path) -> None:
    ns = run_session(RESOURCES, "fractional", {}, tmp_path)
    assert ns["model_stage"].resources.gpu_memory_gb == 10


def test_streaming_batch_size(tmp_path: Path) -> None:
    from curator import ProcessingStage

    class WordCountStage(ProcessingStage):  # the user's own stage the page refers to
        name = "WordCountStage"

        def process(self, task):
            return task

    ns = run_session(STREAMING, "batch_size", {"WordCountStage": WordCountStage}, tmp_path)
    assert ns["word_count_stage"].batch_size == 128
    assert WordCountStage().batch_size != 128  # with_ returned a modified copy


# ---- NeMo Curator's image docs: the reader's and writer's parameters -------------------------
def test_image_reader_and_writer_take_nemo_parameters(tmp_path: Path) -> None:
    from curator import Pipeline
    from curator_image import ImageReaderStage, ImageWriterStage
    from curator_image.testing import make_webdataset_shards

    shards = make_webdataset_shards(str(tmp_path / "shards"), n_shards=1, per_shard=5,
                                    duplicates=0)
    out = tmp_path / "out"
    read = ImageReaderStage(shards, task_batch_size=5, verbose=True, num_threads=2,
                            num_gpus_per_worker=0.25)
    write = ImageWriterStage(output_dir=str(out), images_per_tar=2, remove_image_data=True,
                             verbose=True, deterministic_name=True)
    written = Pipeline("nemo_image_io", stages=[read, write]).run()
    assert written.ok
    tars = sorted(p.name for p in out.glob("*.tar"))
    assert len(tars) == 3 and len(list(out.glob("*.parquet"))) == 3  # 5 images, 2 per tar
    before = {i.image_id: i.raw for t in Pipeline("r", stages=[ImageReaderStage(shards)]).run()
              for i in t.data}
    after = {i.image_id: i.raw for t in Pipeline("r", stages=[ImageReaderStage(str(out))]).run()
             for i in t.data}
    assert after == before and len(after) == 5
    with pytest.raises(Exception, match="images_per_tar"):
        ImageWriterStage(output_dir=str(out), images_per_tar=0)
