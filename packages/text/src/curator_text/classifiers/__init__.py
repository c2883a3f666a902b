"""Model classifiers: a CPU tokenizer stage + a model stage, from local checkpoints."""

from curator_text.classifiers.base import (
    ClassifierModelStage,
    DistributedDataClassifier,
    HFClassifier,
    HFModelStage,
)
from curator_text.classifiers.fineweb_edu import (
    FineWebEduClassifier,
    FineWebMixtralEduClassifier,
    FineWebModelStage,
    FineWebNemotronEduClassifier,
)
from curator_text.classifiers.named import (
    ContentTypeClassifier,
    DomainClassifier,
    MultilingualDomainClassifier,
    QualityClassifier,
)
from curator_text.classifiers.prompt_task_complexity import PromptTaskComplexityClassifier

CLASSIFIERS = (DistributedDataClassifier, HFClassifier, QualityClassifier, DomainClassifier,
               MultilingualDomainClassifier, ContentTypeClassifier,
               PromptTaskComplexityClassifier, FineWebEduClassifier,
               FineWebMixtralEduClassifier, FineWebNemotronEduClassifier)

__all__ = ["DistributedDataClassifier", "HFClassifier", "QualityClassifier", "DomainClassifier",
           "MultilingualDomainClassifier", "ContentTypeClassifier",
           "PromptTaskComplexityClassifier", "FineWebEduClassifier",
           "FineWebMixtralEduClassifier", "FineWebNemotronEduClassifier",
           "ClassifierModelStage", "HFModelStage", "FineWebModelStage", "CLASSIFIERS"]
