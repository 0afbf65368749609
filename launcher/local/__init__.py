"""Pieces of the local backend: channels, preflight checks, per-host plans, the supervisor, logs, artifacts."""
