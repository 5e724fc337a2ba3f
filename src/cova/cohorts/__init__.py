"""cohorts."""
