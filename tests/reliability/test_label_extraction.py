"""Label extraction (issue 10, point 1): an adaptive participant with the default settings and the default
quota, through the API, for a whole 30-day challenge, recovers no more labels than guessing plus the margin
stated in docs/reliability.md ("Label extraction").

The attacker is ``deploy/attack_labels.py``, run as a command (its own process, its own SQLite database and
clock). Before the fix it read one label per run: 763 of 1,000 labels right after 11 submissions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize("strategy", ["boundary", pytest.param("boosting", marks=pytest.mark.slow)])
def test_an_adaptive_attacker_recovers_no_more_than_guessing_plus_the_margin(tmp_path, strategy: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(PYTHONPATH=str(ROOT), LEADERBOARD_DATA_DIR=str(tmp_path), LEADERBOARD_LOG_LEVEL="ERROR")
    script = str(ROOT / "deploy" / "attack_labels.py")
    done = subprocess.run(
        [sys.executable, script, "--json", "--items", "1000", "--strategy", strategy],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # The attacker used the whole default quota (100 submissions, 5 a day) within the 30 days...
    assert result["quota"] == 100 and result["submissions"] == 100 and result["days"] <= 30, result
    # ...the per-run channel is closed (at most 5 runs, and no run values for a participant)...
    assert result["method"] == {"boundary": "boundary probes", "boosting": "boosting"}[strategy], result
    # ...and it knows little more than a coin flip: at most one label per submission of its quota.
    assert result["within_margin"], result
    assert result["excess"] <= result["quota"], result
