"""Issue 31 item 6: a failed ImageBatch is kept as its images' own files (the encoded bytes it
carries, ``.npy`` for pixels and embeddings) plus JSON naming ``image:ImageBatch``; replay
rebuilds it from those, without a pickle."""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

import numpy as np
from curator import Pipeline, ProcessingStage
from curator_image import ImageBatch, ImageObject
from curator_image.testing import encode_image, make_image
from PIL import Image


@dataclass
class ScoreUnlessBroken(ProcessingStage):
    broken: str = ""
    name: str = "Score"

    def process(self, task: ImageBatch) -> ImageBatch:
        if os.path.exists(self.broken):
            raise RuntimeError("CUDA out of memory")
        for image in task.data:
            image.aesthetic_score = float(image.image_data.mean())
        return task


def test_failed_image_batch_is_kept_as_image_files_and_replayed(tmp_path):
    images = []
    for i in range(2):
        pixels = make_image(i)
        images.append(ImageObject(image_id=f"k{i}", image_path="shard-0.tar", image_data=pixels,
                                  raw=encode_image(pixels), image_ext="jpg", caption=f"c{i}",
                                  metadata={"width": 48}, embedding=np.full(4, i, np.float32)))
    batch = ImageBatch(task_id="shard-0_0", dataset_name="imgs", data=images)
    broken, rej = tmp_path / "broken", tmp_path / "rej"
    broken.touch()
    pipe = Pipeline("i", stages=[ScoreUnlessBroken(str(broken))])
    assert not pipe.run(initial_tasks=[batch], rejected_dir=str(rej), summary=False,
                        raise_on_failure=False).ok

    folder = rej / "Score"
    names = sorted(p.name for p in folder.iterdir())
    assert not any(n.endswith(".pkl") for n in names)
    jpg = folder / "shard-0_0.failed.0-k0.jpg"
    assert jpg.read_bytes() == images[0].raw  # the bytes it carried, as an image file
    height, width = images[0].image_data.shape[:2]
    assert Image.open(io.BytesIO(jpg.read_bytes())).size == (width, height)  # a real JPEG
    doc = json.loads((folder / "shard-0_0.failed.task.json").read_text())
    assert doc["task_class"] == "image:ImageBatch"

    broken.unlink()
    replayed = pipe.replay(str(rej), summary=False)
    assert replayed.ok and isinstance(replayed[0], ImageBatch)
    for got, want in zip(replayed[0].data, images, strict=True):
        assert got.image_id == want.image_id and got.raw == want.raw and got.caption == want.caption
        assert np.array_equal(got.image_data, want.image_data)
        assert np.array_equal(got.embedding, want.embedding) and got.embedding.dtype == np.float32
        assert got.metadata == {"width": 48}
        assert got.aesthetic_score == float(want.image_data.mean())
