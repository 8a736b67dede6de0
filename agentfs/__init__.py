"""Plain-Python reader of context-offload memory folders (no Django): layout, JSONL, refs, state."""
