"""curator-text: text curation stages for Curator (readers, writers, modifiers, filters,
classifiers)."""

from curator.tasks import EmptyTask, FileGroupTask, Task

from curator_text.classifiers import *  # noqa: F403
from curator_text.classifiers import __all__ as _classifiers_all
from curator_text.decontamination import TaskDecontamination
from curator_text.filters import *  # noqa: F403
from curator_text.filters import __all__ as _filters_all
from curator_text.io import *  # noqa: F403
from curator_text.io import __all__ as _io_all
from curator_text.modifiers import *  # noqa: F403
from curator_text.modifiers import __all__ as _modifiers_all
from curator_text.pii import PiiModifier, PiiRedactionStage
from curator_text.stages import AddId, DocumentJoiner, DocumentSplitter
from curator_text.tasks import DocumentBatch
from curator_text.tokenization import MegatronTokenizerWriter, TokenizerStage

__all__ = ["DocumentBatch", "Task", "EmptyTask", "FileGroupTask", "AddId", "DocumentSplitter",
           "DocumentJoiner", *_io_all, *_filters_all, *_modifiers_all, *_classifiers_all,
           "TokenizerStage", "MegatronTokenizerWriter", "PiiModifier", "PiiRedactionStage",
           "TaskDecontamination"]
