"""The timeline: host -> device model (model.py), browser payload (payload.py), Perfetto export (perfetto.py)."""
