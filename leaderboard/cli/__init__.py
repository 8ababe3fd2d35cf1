"""``lb``: the command-line client of the leaderboard's REST API (click + httpx)."""
