"""curator-text: text curation stages for Curator (readers, writers, modifiers, filters,
classifiers).

Every name is imported on first use (:func:`curator._lazy.lazy_exports`): ``import
curator_text`` loads nothing, and a pipeline loads only the modules of the stages it names."""

from curator._lazy import lazy_exports

from curator_text.classifiers import __all__ as _classifiers_all
from curator_text.filters import __all__ as _filters_all
from curator_text.io import __all__ as _io_all
from curator_text.modifiers import __all__ as _modifiers_all

_EXPORTS = {
    **dict.fromkeys(["EmptyTask", "FileGroupTask", "Task"], "curator.tasks"),
    "DocumentBatch": "curator_text.tasks",
    # the subpackages' own lazy tables say where each of their names lives
    **dict.fromkeys(_classifiers_all, "curator_text.classifiers"),
    **dict.fromkeys(_filters_all, "curator_text.filters"),
    **dict.fromkeys(_io_all, "curator_text.io"),
    **dict.fromkeys(_modifiers_all, "curator_text.modifiers"),
    "TaskDecontamination": "curator_text.decontamination",
    **dict.fromkeys(["PiiModifier", "PiiRedactionStage"], "curator_text.pii"),
    **dict.fromkeys(["AddId", "DocumentJoiner", "DocumentSplitter"], "curator_text.stages"),
    **dict.fromkeys(["MegatronTokenizerWriter", "TokenizerStage"], "curator_text.tokenization"),
}

__all__ = ["DocumentBatch", "Task", "EmptyTask", "FileGroupTask", "AddId", "DocumentSplitter",
           "DocumentJoiner", *_io_all, *_filters_all, *_modifiers_all, *_classifiers_all,
           "TokenizerStage", "MegatronTokenizerWriter", "PiiModifier", "PiiRedactionStage",
           "TaskDecontamination"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
