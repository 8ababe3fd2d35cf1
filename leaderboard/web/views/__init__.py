"""The site's views: thin, one service or selector call each; pages read stored snapshots."""
