"""Data inlined in the self-contained pages (the report, the timeline page) as JSON script blocks: the one helper
every page uses, so that no string from a trace can end or comment out the script that holds it."""

from __future__ import annotations

from typing import Any

# Inside <script>, "</script", "<!--" and "<script" change how the HTML parser reads on (an annotation named
# "<!--<script>" kept the block open past its end); U+2028/9 end a line in older JavaScript. Each is written as the
# JSON escape of the same character, so JSON.parse reads back exactly the original string.
_ESCAPES = ((b"&", b"\\u0026"), (b"<", b"\\u003c"), (b">", b"\\u003e"),
            ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def json_for_script(data: Any) -> str:
    import orjson

    text = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    for raw, escaped in _ESCAPES:
        if raw in text:  # these bytes occur in JSON only inside strings: escaping them keeps the JSON valid
            text = text.replace(raw, escaped)
    return text.decode()
