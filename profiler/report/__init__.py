"""The dashboard: its data (data.py), the offline HTML report (html.py) and the page code (static/)."""
