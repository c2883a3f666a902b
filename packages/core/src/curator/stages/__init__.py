"""Stages: the steps of a pipeline."""

from curator.stages.base import CompositeStage, ProcessingStage, StageIO, get_stage_class
from curator.stages.file_partitioning import FilePartitioningStage
from curator.stages.filter import FilterStage
from curator.stages.function import FunctionStage, processing_stage

__all__ = ["ProcessingStage", "CompositeStage", "StageIO", "FunctionStage", "processing_stage",
           "FilePartitioningStage", "FilterStage", "get_stage_class"]
