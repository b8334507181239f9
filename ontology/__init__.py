"""The per-time-point stage: background loading, materialisation with expiry tags, events."""
