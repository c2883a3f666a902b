"""Model classifiers: a CPU tokenizer stage + a model stage, from local checkpoints (imported
on first use: a pipeline without classifiers loads none of them)."""

from __future__ import annotations

from typing import Any

from curator._lazy import lazy_exports

_BASE = "curator_text.classifiers.base"
_NAMED = "curator_text.classifiers.named"
_FINEWEB_EDU = "curator_text.classifiers.fineweb_edu"

_EXPORTS = {
    **dict.fromkeys(["ClassifierModelStage", "DistributedDataClassifier", "HFClassifier",
                     "HFModelStage"], _BASE),
    **dict.fromkeys(["FineWebEduClassifier", "FineWebMixtralEduClassifier", "FineWebModelStage",
                     "FineWebNemotronEduClassifier"], _FINEWEB_EDU),
    **dict.fromkeys(["ContentTypeClassifier", "DomainClassifier", "MultilingualDomainClassifier",
                     "QualityClassifier"], _NAMED),
    "PromptTaskComplexityClassifier": "curator_text.classifiers.prompt_task_complexity",
}

#: ``CLASSIFIERS`` (built on first use): every classifier class the plugin registers
_CLASSIFIER_NAMES = ("DistributedDataClassifier", "HFClassifier", "QualityClassifier",
                     "DomainClassifier", "MultilingualDomainClassifier", "ContentTypeClassifier",
                     "PromptTaskComplexityClassifier", "FineWebEduClassifier",
                     "FineWebMixtralEduClassifier", "FineWebNemotronEduClassifier")

__all__ = ["DistributedDataClassifier", "HFClassifier", "QualityClassifier", "DomainClassifier",
           "MultilingualDomainClassifier", "ContentTypeClassifier",
           "PromptTaskComplexityClassifier", "FineWebEduClassifier",
           "FineWebMixtralEduClassifier", "FineWebNemotronEduClassifier",
           "ClassifierModelStage", "HFModelStage", "FineWebModelStage", "CLASSIFIERS"]

_getattr, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    if name != "CLASSIFIERS":
        return _getattr(name)
    value = tuple(globals()[n] if n in globals() else _getattr(n) for n in _CLASSIFIER_NAMES)
    globals()[name] = value
    return value
