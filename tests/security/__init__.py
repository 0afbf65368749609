"""Hostile inputs: archives, S3 keys and what leaves the machine (issue 24)."""
