"""Who may call a server on 127.0.0.1 from a browser: the one rule of the profile browser and the local model server.

Any web page the user visits can send requests to 127.0.0.1; the browser labels them. A request whose Origin is
another site's, or whose Sec-Fetch-Site is "cross-site"/"same-site", comes from such a page and is refused. API
clients (curl, boto3, requests, the predictors) send neither header and are unaffected.
"""

from __future__ import annotations

from collections.abc import Collection

ALLOWED_FETCH_SITES = (None, "same-origin", "none")  # "none": the user typed the address or used a bookmark


def cross_site_refusal(origin: str | None, fetch_site: str | None, own_origins: Collection[str]) -> str | None:
    """Why a request must be refused as coming from another site's page; None when it may be answered."""
    if (origin is None or origin in own_origins) and fetch_site in ALLOWED_FETCH_SITES:
        return None
    return f"cross-origin request refused (Origin: {origin}, Sec-Fetch-Site: {fetch_site})"
