"""Everything that runs: input discovery, reading, the CLI, reports (and the daemon)."""
