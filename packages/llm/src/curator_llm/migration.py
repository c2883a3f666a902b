"""curator-llm's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import MigrationRules

__all__ = ["MIGRATION_RULES"]

_SERVE_NOT_OFFERED = (
    "Curator's InferenceServer offers one backend, llama.cpp's OpenAI-compatible server for GGUF "
    "models on CPU (LlamaCppServerConfig / LlamaCppModelConfig; NeMo's default is vLLM on Ray "
    "Serve). vLLM cannot be installed or tested on the machines Curator is built on, so its "
    "backends are not offered: run vLLM (or NIM, or any OpenAI-compatible server) yourself and "
    "point OpenAIClient(base_url=..., api_key=...) at it")

_DATA_DESIGNER_NOT_OFFERED = (
    "NeMo Data Designer stages need the nemo-data-designer service; not offered. The "
    "Nemotron-CC stages of curator_llm.synthetic.nemotron_cc call any OpenAI-compatible server")

MIGRATION_RULES = MigrationRules(
    modules=(
        # --- clients (issue 44a) ---
        ("nemo_curator.models.client", ("curator_llm.client", "curator_llm")),
        ("nemo_curator.models.client.llm_client",
         ("curator_llm.client.llm_client", "curator_llm.client")),
        ("nemo_curator.models.client.openai_client",
         ("curator_llm.client.openai_client", "curator_llm.client")),
        # --- served models (issue 44a) ---
        ("nemo_curator.core.serve", ("curator_llm.serve", "curator_llm")),
        ("nemo_curator.core.serve.server", ("curator_llm.serve.server", "curator_llm.serve")),
        ("nemo_curator.core.serve.base", ("curator_llm.serve.base", "curator_llm.serve")),
        ("nemo_curator.core.serve.constants",
         ("curator_llm.serve.constants", "curator_llm.serve")),
        # --- synthetic-data stages (issue 44b) ---
        ("nemo_curator.stages.synthetic", ("curator_llm.synthetic",)),
        ("nemo_curator.stages.synthetic.nemotron_cc", ("curator_llm.synthetic.nemotron_cc",)),
        ("nemo_curator.stages.synthetic.nemotron_cc.base",
         ("curator_llm.synthetic.nemotron_cc.base",)),
        ("nemo_curator.stages.synthetic.nemotron_cc.nemotron_cc",
         ("curator_llm.synthetic.nemotron_cc.nemotron_cc",)),
        ("nemo_curator.stages.synthetic.nemotron_cc.prompts",
         ("curator_llm.synthetic.nemotron_cc.prompts",)),
        ("nemo_curator.stages.synthetic.qa_multilingual_synthetic",
         ("curator_llm.synthetic.qa_multilingual_synthetic",)),
        ("nemo_curator.stages.math.modifiers.llm_cleanup", ("curator_llm.stages.cleanup",)),
        ("nemo_curator.stages.text.experimental.translation",
         ("curator_llm.stages.translation",)),
    ),
    renames={
        # --- issue 44b ---
    },
    not_offered={
        # --- served models (issue 44a) ---
        "nemo_curator.core.serve.ray_serve": _SERVE_NOT_OFFERED,
        "nemo_curator.core.serve.dynamo": _SERVE_NOT_OFFERED,
        # (their configs re-exported as nemo_curator.core.serve.RayServeModelConfig etc. are not
        # listed by full name: core's migrate takes every component of a not_offered key for a
        # NeMo module name, and would rewrite `from nemo_curator.core.serve import
        # RayServeModelConfig` into a module import; unlisted, the import is kept and reported)
        "nemo_curator.core.serve.placement": "Ray placement groups for served models belong "
        "to the Ray Serve / Dynamo backends, which are not offered",
        "nemo_curator.core.serve.subprocess_mgr": "internal to NeMo's Ray backends; Curator's "
        "llama.cpp backend runs its server as a child process of the driver",
        # --- issue 44b ---
        "nemo_curator.stages.synthetic.nemo_data_designer": _DATA_DESIGNER_NOT_OFFERED,
        "nemo_curator.stages.synthetic.nemotron_cc.nemo_data_designer":
            _DATA_DESIGNER_NOT_OFFERED,
        "nemo_curator.stages.synthetic.omni": "the OCR synthetic-data stages need a "
        "vision-language model server and NeMo's OCR models; not offered",
        "nemo_curator.stages.text.experimental.translation.evaluation": "faithfulness and "
        "text-quality scoring of translations are not offered; TranslationStage translates only",
        "nemo_curator.stages.text.experimental.translation.backends": "only LLM translation "
        "through Curator's clients is offered (no AWS, Google or NMT backends)",
        "nemo_curator.stages.text.experimental.translation.FaithEvalFilter":
            "faithfulness scoring of translations is not offered",
        "nemo_curator.stages.text.experimental.translation.FaithThresholdFilterStage":
            "faithfulness scoring of translations is not offered",
        "nemo_curator.stages.text.experimental.translation.TextQualityMetricStage":
            "text-quality scoring of translations is not offered",
    },
    shim={
        # --- clients (issue 44a) ---
        "nemo_curator.models.client": ("curator_llm.client",),
        "nemo_curator.models.client.llm_client": ("curator_llm.client.llm_client",),
        "nemo_curator.models.client.openai_client": ("curator_llm.client.openai_client",),
        "nemo_curator.core.serve": ("curator_llm.serve",),
        "nemo_curator.core.serve.server": ("curator_llm.serve.server",),
        # --- issue 44b ---
        "nemo_curator.stages.synthetic.nemotron_cc.base":
            ("curator_llm.synthetic.nemotron_cc.base",),
        "nemo_curator.stages.synthetic.nemotron_cc.nemotron_cc":
            ("curator_llm.synthetic.nemotron_cc.nemotron_cc",),
        "nemo_curator.stages.synthetic.nemotron_cc.prompts":
            ("curator_llm.synthetic.nemotron_cc.prompts",),
        "nemo_curator.stages.synthetic.qa_multilingual_synthetic":
            ("curator_llm.synthetic.qa_multilingual_synthetic",),
    },
)
