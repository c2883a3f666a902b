"""Model-stage benchmark: classifier docs/s (CPU; GPU docs/s and GPU busy fraction when CUDA is
present) with a random DeBERTa-v3 checkpoint in NVIDIA's layout, TokenizerStage tokens/s against
the bare tokenizer loop in the same run, and PII redaction docs/s.

    uv run python benchmarks/classifiers.py [--docs 256] [--gpu-docs N] [--size small|base]
                                            [--tok-docs 20000] [--pii-docs 200]
                                            [--workdir benchmarks/results/cls]

``--docs`` documents go through the CPU run and ``--gpu-docs`` (default 8 x ``--docs``) through
the GPU run; ``--docs 0`` skips the CPU run (a base-sized model is slow there). The GPU run also
reports the mean NVML utilisation and the peak GPU memory PyTorch allocated.

``--size small`` (default) is a 4-layer, 256-wide DeBERTa (keeps CPU runs short); ``base`` is
deberta-v3-base's shape (768 x 12) with a 32k-word vocabulary.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import threading
import time

WORDS = ("the of and to in is was for that on with as by at from his her it an were are which "
         "this be or has had not but have also its one after first new two their who been they "
         "she he more during other into time only all over later most city year world school "
         "music river house people water state history system season family team war").split()


def make_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400))) for _ in range(n)]


def build_checkpoint(path: str, size: str) -> str:
    """A random DeBERTa-v3 classifier (config.json + model.safetensors + tokenizer)."""
    import torch
    from curator_text.classifiers.layouts import DebertaHeadModel
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import DebertaV2Config, PreTrainedTokenizerFast

    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    n_vocab = 32000 if size == "base" else len(WORDS) + 4
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    for i in range(len(vocab), n_vocab):
        vocab[f"w{i}"] = i
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                            model_max_length=512).save_pretrained(path)
    hidden, layers = (768, 12) if size == "base" else (256, 4)
    DebertaV2Config(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                    num_attention_heads=hidden // 64, intermediate_size=4 * hidden,
                    max_position_embeddings=512, relative_attention=True, position_buckets=256,
                    pos_att_type=["p2c", "c2p"], position_biased_input=False,
                    norm_rel_ebd="layer_norm", share_att_key=True, type_vocab_size=0,
                    pad_token_id=0).save_pretrained(os.path.join(path, "backbone"))
    torch.manual_seed(0)
    labels = ["High", "Medium", "Low"]
    DebertaHeadModel({"base_model": "backbone", "fc_dropout": 0.2,
                      "id2label": {str(i): x for i, x in enumerate(labels)},
                      "label2id": {x: i for i, x in enumerate(labels)}},
                     model_dir=path).save_pretrained(path)
    return path


class GpuBusy:
    """Samples GPU utilisation (NVML) in a thread while the block runs."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._stop = threading.Event()

    def __enter__(self) -> GpuBusy:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)

        def loop() -> None:
            while not self._stop.wait(0.05):
                self.samples.append(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)

        self._t = threading.Thread(target=loop, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()

    @property
    def fraction(self) -> float:
        return sum(s > 0 for s in self.samples) / max(len(self.samples), 1)

    @property
    def mean(self) -> float:
        """Mean NVML utilisation (0..1): the share of time a kernel was running."""
        return sum(self.samples) / max(len(self.samples), 1) / 100


def bench_classifier(model_dir: str, texts: list[str], gpu: bool) -> dict:
    import pyarrow as pa
    from curator import Pipeline, Resources
    from curator_text import QualityClassifier
    from curator_text.tasks import DocumentBatch

    clf = QualityClassifier(model_dir=model_dir, max_tokens_per_batch=64 * 512,
                            model_inference_batch_size=64,
                            resources=Resources(gpus=1) if gpu else None)
    tasks = [DocumentBatch(task_id=f"b{i}", dataset_name="bench",
                           data=pa.table({"text": texts[i:i + 128]}))
             for i in range(0, len(texts), 128)]
    pipe = Pipeline("cls", stages=[clf])
    pipe.run(initial_tasks=tasks[:1], summary=False)  # warm-up: load the model once
    busy = None
    if gpu:
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    if gpu:
        with GpuBusy() as busy:
            out = pipe.run(initial_tasks=tasks, summary=False)
    else:
        out = pipe.run(initial_tasks=tasks, summary=False)
    secs = time.perf_counter() - start
    assert sum(t.to_pyarrow().num_rows for t in out) == len(texts)
    res = {"device": "cuda" if gpu else "cpu", "docs": len(texts), "seconds": round(secs, 2),
           "docs_per_s": round(len(texts) / secs, 1)}
    if busy is not None:
        import torch

        res["gpu_busy_fraction"] = round(busy.fraction, 3)
        res["gpu_util_mean"] = round(busy.mean, 3)
        res["gpu_max_memory_allocated_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
        res["gpu_name"] = torch.cuda.get_device_name(0)
    return res


def autocast_agreement(model_dir: str, texts: list[str]) -> dict:
    """The same documents through the GPU model stage with fp16 autocast (the default) and in
    fp32: largest probability difference and share of equal labels."""
    import pyarrow as pa
    from curator import Resources
    from curator_text import QualityClassifier
    from curator_text.tasks import DocumentBatch

    batch = DocumentBatch(task_id="a", dataset_name="bench", data=pa.table({"text": texts}))
    probs, labels = {}, {}
    for autocast in (True, False):
        tok, model = QualityClassifier(model_dir=model_dir, score_field="p", autocast=autocast,
                                       model_inference_batch_size=64,
                                       resources=Resources(gpus=1)).decompose()[:2]
        tok.setup()
        model.setup()
        assert model.device == "cuda" and next(model.model.parameters()).is_cuda
        out = model.process(tok.process(batch)).data
        probs[autocast] = [x for row in out["p"].to_pylist() for x in row]
        labels[autocast] = out["quality_pred"].to_pylist()
        model.teardown()
    diff = max(abs(a - b) for a, b in zip(probs[True], probs[False], strict=True))
    same = sum(a == b for a, b in zip(labels[True], labels[False], strict=True)) / len(texts)
    return {"docs": len(texts), "max_abs_prob_diff": round(diff, 5),
            "label_agreement": round(same, 4)}


def bench_tokenizer(model_dir: str, texts: list[str]) -> dict:
    import pyarrow as pa
    from curator_text import TokenizerStage
    from curator_text.models import load_tokenizer
    from curator_text.tasks import DocumentBatch

    tok = load_tokenizer(model_dir)
    start = time.perf_counter()
    n_bare = 0
    for s in range(0, len(texts), 4096):
        n_bare += sum(len(x) for x in tok(texts[s:s + 4096], truncation=True,
                                          max_length=512)["input_ids"])
    bare = time.perf_counter() - start
    stage = TokenizerStage(model_dir, max_seq_length=512)
    stage.setup()
    batch = DocumentBatch(task_id="t", dataset_name="bench", data=pa.table({"text": texts}))
    start = time.perf_counter()
    out = stage.process(batch)
    staged = time.perf_counter() - start
    n_stage = sum(len(x) for x in out.to_pyarrow()["input_ids"].to_pylist())
    assert n_stage == n_bare
    return {"docs": len(texts), "tokens": n_bare,
            "bare_tokens_per_s": round(n_bare / bare), "stage_tokens_per_s": round(n_stage / staged),
            "stage_vs_bare": round(bare / staged, 3)}


def bench_pii(n: int) -> dict:
    from curator_text import PiiModifier

    rng = random.Random(1)
    texts = [" ".join(rng.choice(WORDS) for _ in range(80))
             + f" contact user{i}@example.com or (212) 555-{1000 + i:04d} from 10.0.{i % 255}.1"
             for i in range(n)]
    m = PiiModifier(anonymize_action="replace")
    m.setup()
    start = time.perf_counter()
    found = sum(sum(m.redact(t)[1].values()) for t in texts)
    secs = time.perf_counter() - start
    return {"docs": n, "entities": found, "docs_per_s": round(n / secs, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=256, help="CPU run's documents (0: skip it)")
    ap.add_argument("--gpu-docs", type=int, default=None, help="GPU run's documents (8 x --docs)")
    ap.add_argument("--size", choices=["small", "base"], default="small")
    ap.add_argument("--tok-docs", type=int, default=20_000)
    ap.add_argument("--pii-docs", type=int, default=200)
    ap.add_argument("--workdir", default="benchmarks/results/classifiers")
    args = ap.parse_args()
    os.environ.setdefault("CURATOR_SUMMARY", "0")
    import torch

    model_dir = build_checkpoint(os.path.join(args.workdir, f"deberta-{args.size}"), args.size)
    report: dict = {"size": args.size, "torch_threads": torch.get_num_threads()}

    def section(key: str, value: object) -> None:  # printed as it comes (a later one may fail)
        report[key] = value
        print(json.dumps({key: value}), flush=True)

    if args.docs:
        section("classifier_cpu", bench_classifier(model_dir, make_texts(args.docs), gpu=False))
    if torch.cuda.is_available():
        n_gpu = args.gpu_docs if args.gpu_docs is not None else args.docs * 8
        section("classifier_gpu", bench_classifier(model_dir, make_texts(n_gpu), gpu=True))
        section("autocast_vs_fp32_gpu", autocast_agreement(model_dir, make_texts(2048, seed=3)))
    else:
        section("classifier_gpu", "not run: no CUDA device")
    section("tokenizer", bench_tokenizer(model_dir, make_texts(args.tok_docs, seed=2)))
    if args.pii_docs:
        section("pii", bench_pii(args.pii_docs))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
