"""Data inlined in the self-contained pages (the report, the timeline page) as JSON script blocks."""

from __future__ import annotations

from typing import Any


def json_for_script(data: Any) -> str:
    import orjson

    # "</" would end the <script> block early; "<\/" is the same JSON string
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode().replace("</", "<\\/")
