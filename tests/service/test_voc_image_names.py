"""A VOC-style task keeps the whole map from image names to the ids 1..N that results files use (it was
cut at 2,000 characters, so a participant of a large task could not map the later images)."""

from __future__ import annotations

from leaderboard.challenges.services import challenge_create, task_create
from tests.service.factories import user


def test_a_large_voc_task_stores_every_image_name_in_order(transactional_db) -> None:  # type: ignore[no-untyped-def]
    names = [f"VOC2007_{k:06d}_a_rather_long_image_name" for k in range(400, 0, -1)]  # not sorted
    rows = ["image,category,xmin,ymin,xmax,ymax,difficult"]
    rows += [f"{n},{'car' if k % 2 else 'person'},10,10,60,50,0" for k, n in enumerate(names)]
    challenge = challenge_create(organizer=user("org"), slug="voc-big", title="VOC big", resamples=100)
    task = task_create(
        challenge=challenge, slug="det", title="VOC", metric="voc_ap50",
        truth=("\n".join(rows) + "\n").encode(), truth_name="truth.csv",
    )  # fmt: skip
    task.refresh_from_db()
    assert len(",".join(names)) > 2000
    assert task.vision["image_names"] == names  # id k is names[k - 1], in order of first appearance
    assert task.item_ids == [str(k) for k in range(1, len(names) + 1)]
    assert "image_names" in task.vision["conventions"]["image_ids"]
