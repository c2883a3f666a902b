"""curator-interleaved's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim.

NeMo's ``nemo_curator.stages.interleaved.X`` is ``curator_interleaved.X`` module for module;
its task module ``nemo_curator.tasks.interleaved`` is ``curator_interleaved.tasks``. The Lance
helpers NeMo keeps in ``nemo_curator.utils.lance`` and its text Lance reader / writer live in
``curator_text.io.lance`` (curator-text owns them; both packages use them).
"""

from __future__ import annotations

from curator.plugins.migration import MigrationRules

__all__ = ["MIGRATION_RULES"]

_N = "nemo_curator.stages.interleaved"
_C = "curator_interleaved"

#: NeMo module (under stages.interleaved) -> Curator module (under curator_interleaved)
_SAME = ("stages", "io", "io.reader", "io.readers", "io.readers.base", "io.readers.parquet",
         "io.readers.webdataset", "io.writers", "io.writers.base", "io.writers.tabular",
         "io.writers.webdataset", "utils", "utils.constants", "utils.image_utils",
         "utils.materialization", "utils.schema", "utils.validation_utils", "filter",
         "filter.blur_filter", "filter.clip_score_filter", "filter.image_to_text_ratio_filter",
         "filter.qrcode_filter", "lance", "lance.reader")

_PDF = "nemo_curator.stages.interleaved.pdf.nemotron_parse"
_NOT_OFFERED_PARSE = (
    "Nemotron-Parse inference is not offered: the model's code is published only on a model "
    "hub (trust_remote_code), which Curator does not load or run. PDFPartitioningStage and "
    "PDFPreprocessStage are offered (curator_interleaved.pdf), and PDFReaderStage / PDFReader "
    "turn PDFs into ordered text and image segments on the CPU (pypdfium2); see "
    "docs/migrating-from-nemo-curator.md")

MIGRATION_RULES = MigrationRules(
    modules=(
        (_N, (_C, f"{_C}.stages", f"{_C}.io", f"{_C}.filter", f"{_C}.utils")),
        *((f"{_N}.{m}", (f"{_C}.{m}",)) for m in _SAME if m != "stages"),
        (f"{_N}.stages", (f"{_C}.stages",)),
        (f"{_N}.pdf", (f"{_C}.pdf",)),
        (_PDF, (f"{_C}.pdf",)),
        (f"{_PDF}.partitioning", (f"{_C}.pdf.partitioning",)),
        (f"{_PDF}.preprocess", (f"{_C}.pdf.preprocess",)),
        ("nemo_curator.tasks.interleaved", (f"{_C}.tasks",)),
        ("nemo_curator.tasks", (_C,)),
        ("nemo_curator.utils.lance", ("curator_text.io.lance",)),
        ("nemo_curator.tasks.lance", ("curator_text.io.lance",)),
        ("nemo_curator.stages.text.io.reader.lance", ("curator_text.io.lance",)),
        ("nemo_curator.stages.text.io.writer.lance", ("curator_text.io.lance",)),
    ),
    not_offered={
        f"{_PDF}.inference": _NOT_OFFERED_PARSE,
        f"{_PDF}.composite": _NOT_OFFERED_PARSE,
        f"{_PDF}.postprocess": _NOT_OFFERED_PARSE,
        f"{_PDF}.NemotronParseInferenceStage": _NOT_OFFERED_PARSE,
        f"{_PDF}.NemotronParsePDFReader": _NOT_OFFERED_PARSE,
        f"{_PDF}.NemotronParsePostprocessStage": _NOT_OFFERED_PARSE,
    },
    shim={
        _N: (_C, f"{_C}.stages"),
        **{f"{_N}.{m}": (f"{_C}.{m}",) for m in _SAME},
        "nemo_curator.tasks.interleaved": (f"{_C}.tasks",),
        "nemo_curator.tasks": (f"{_C}.tasks", "curator_text.io.lance"),
        f"{_PDF}.partitioning": (f"{_C}.pdf.partitioning",),
        f"{_PDF}.preprocess": (f"{_C}.pdf.preprocess",),
        "nemo_curator.utils.lance": ("curator_text.io.lance",),
        "nemo_curator.tasks.lance": ("curator_text.io.lance",),
        "nemo_curator.stages.text.io.reader.lance": ("curator_text.io.lance",),
        "nemo_curator.stages.text.io.writer.lance": ("curator_text.io.lance",),
        # core modules NeMo's interleaved tests import helpers from
        "nemo_curator.core.utils": (f"{_C}.io.readers.base",),
        "nemo_curator.stages.file_partitioning": ("curator.stages.file_partitioning",),
        "nemo_curator.backends.base": ("curator.stages.node_info",),
    },
)
