"""FilePartitioningStage lives in core (shared by every modality); re-exported here."""

from curator.stages.file_partitioning import FilePartitioningStage

__all__ = ["FilePartitioningStage"]
