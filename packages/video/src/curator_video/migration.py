"""curator-video's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = ("curator", "curator.stages", "curator.dedup", "curator.utils", "curator.tasks")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.video", ("curator_video", "curator_image", *_CORE)),
        ("nemo_curator.tasks", ("curator_video",)),
        ("nemo_curator.utils", ("curator_video",)),
    ),
    not_offered={
        "nemo_curator.utils.decoder_utils": "NeMo's video decoding internals; curator_video "
                                            "decodes on its own",
    },
)
