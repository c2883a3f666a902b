from curator_video import Clip, Video, VideoMetadata, VideoTask


def test_clip_uuid_is_deterministic_and_depends_on_span():
    a = Clip.from_span("/v/a.mp4", 0.0, 1.0)
    assert a.uuid == Clip.from_span("/v/a.mp4", 0, 1.00001).uuid
    assert a.uuid != Clip.from_span("/v/a.mp4", 1.0, 2.0).uuid
    assert a.uuid != Clip.from_span("/v/b.mp4", 0.0, 1.0).uuid
    assert a.duration == 1.0


def test_filter_clips_moves_dropped_clips_and_counts_items():
    video = Video("/v/a.mp4", VideoMetadata(duration=3, fps=10, width=64, height=48),
                  clips=[Clip.from_span("/v/a.mp4", i, i + 1) for i in range(3)])
    task = VideoTask(task_id="t", dataset_name="d", data=video)
    video.filter_clips([True, False, True], by="Motion")
    assert task.num_items == 2
    assert [c.span[0] for c in video.clips] == [0, 2]
    assert video.filtered_clips[0].filtered_by == "Motion"
    assert video.metadata.resolution == (64, 48)
