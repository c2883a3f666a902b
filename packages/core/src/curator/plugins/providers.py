"""Which Curator distribution registers each of the built-in names, so that a name missing from
an install (a text spec in a core-only install) can say which package to install. Core never
imports these packages; tests check every name here is registered by the package it names."""

from __future__ import annotations

__all__ = ["BUILTIN_PROVIDERS", "provider_of"]

_NAMES = {
    "curator-audio": """
        ASRStage AudioBatch AudioClippingStage AudioDecodeStage AudioDirectoryReader
        AudioRMSStage AudioSNRStage AudioSegmentationStage AudioSilenceFractionStage
        GetAudioDurationStage GetPairwiseWerStage ManifestReader ManifestWriterStage
        PreserveByValueStage TorchSquimQualityFilterStage TorchSquimQualityMetricsStage""",
    "curator-image": """
        ImageAestheticFilterStage ImageBatch ImageDuplicateRemovalStage
        ImageEmbeddingStage ImageNSFWFilterStage ImageReaderStage
        ImageSemanticDeduplicationWorkflow ImageWriterStage WebDatasetReaderStage
        WebDatasetShardPartitionStage""",
    "curator-text": """
        AddId AlphaFilter BoilerPlateStringFilter BoilerPlateStringModifier BulletsFilter
        CandidateDocsStage CommonEnglishWordsFilter ContentTypeClassifier
        DistributedDataClassifier DocumentBatch DocumentJoiner DocumentSplitter
        DomainClassifier EllipsisFilter EmbeddingCreatorStage FastTextLabelModifier
        FastTextLangId FastTextQualityFilter Filter FineWebEduClassifier
        FineWebMixtralEduClassifier FineWebNemotronEduClassifier
        FuzzyDeduplicationWorkflow GeneralCommentToCodeFilter HFClassifier
        HTMLBoilerplateFilter HistogramFilter IncompleteStoryFilter JsonlReader
        JsonlWriter LSHBucketsStage LineRemover LongWordFilter MarkdownRemover
        MeanWordLengthFilter MegatronTokenizerWriter MinHashLSHStage Modify
        MultilingualDomainClassifier NewlineNormalizer NonAlphaNumericFilter
        NumberOfLinesOfCodeFilter NumbersFilter ParenthesesFilter ParquetReader
        ParquetWriter PerExtensionFilter PiiModifier PiiRedactionStage
        PornographicUrlsFilter PromptTaskComplexityClassifier PunctuationFilter
        PythonCommentToCodeFilter QualityClassifier QuotationRemover QuotationUnifier
        RepeatedLinesByCharFilter RepeatedLinesFilter RepeatedParagraphsByCharFilter
        RepeatedParagraphsFilter RepeatingDuplicateNGramsFilter RepeatingTopNGramsFilter
        Score ScoreBucketer ScoreFilter Slicer SubstringFilter SymbolsToWordsFilter
        TaskDecontamination TaskNGramCounter TokenCountFilter TokenizerFertilityFilter
        TokenizerStage UnicodeReformatter UrlRemover UrlsFilter WhiteSpaceFilter
        WordCountFilter WordsWithoutAlphabetsFilter XMLHeaderFilter""",
    "curator-video": """
        CaptionGenerationStage ClipAestheticFilterStage ClipEmbeddingStage
        ClipFrameExtractionStage ClipSemanticDedupStage ClipSemanticDeduplicationWorkflow
        ClipTranscodingStage ClipWriterStage FixedStrideSplitStage MotionFilterStage
        SceneCutSplitStage TransNetV2ClipExtractionStage VideoListStage VideoMetadataStage
        VideoReaderStage VideoTask""",
    "curator-web": """
        ArxivDownloadExtractStage ArxivDownloader ArxivExtractor ArxivIterator
        ArxivUrlGenerator CommonCrawlDownloadExtractStage CommonCrawlHTMLExtractor
        CommonCrawlWARCDownloader CommonCrawlWarcIterator DocumentDownloadExtractStage
        JusTextExtractor MainCommonCrawlUrlGenerator ResiliparseExtractor
        TinyStoriesDownloadExtractStage TrafilaturaExtractor WikipediaDownloadExtractStage
        WikipediaDownloader WikipediaExtractor WikipediaIterator WikipediaUrlGenerator""",
}

BUILTIN_PROVIDERS: dict[str, str] = {
    name: dist for dist, names in _NAMES.items() for name in names.split()}
"""Registered name -> the Curator distribution that provides it."""


def provider_of(name: str) -> str | None:
    """The distribution that provides the built-in name (plugin:Name accepted)."""
    return BUILTIN_PROVIDERS.get(name.rsplit(":", 1)[-1])
