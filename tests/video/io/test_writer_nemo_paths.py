import hashlib
import os

from curator_video import ClipWriterStage

from tests.video.io.test_writer import run


def test_nemo_path_helpers_name_the_directories_the_writer_fills(video_dir, tmp_path):
    out = str(tmp_path)
    run(video_dir, tmp_path)
    for helper in (ClipWriterStage.get_output_path_clips, ClipWriterStage.get_output_path_previews,
                   ClipWriterStage.get_output_path_processed_videos,
                   ClipWriterStage.get_output_path_processed_clip_chunks):
        assert os.listdir(helper(out)), helper.__name__
    assert os.listdir(ClipWriterStage.get_output_path_metas(out, "v0"))
    assert ClipWriterStage.get_output_path_previews("/outputs/") == "/outputs/previews"
    assert ClipWriterStage.get_output_path_clips("s3://b/o", filtered=True) == "s3://b/o/filtered_clips"
    assert ClipWriterStage.get_output_path_ce1_embd(out) == f"{out}/embeddings"
    assert ClipWriterStage.get_output_path_ce1_embd_parquet(out) == f"{out}/embeddings_parquet"
    assert ClipWriterStage.calculate_sha256(b"x") == hashlib.sha256(b"x").hexdigest()
