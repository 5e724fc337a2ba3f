"""affinity."""
