"""Review notes, "reviewed" marks and the review queue: memviz's own, never in the agent's files."""
