"""The parsed columns of a Kineto trace, cached so that a second analyze/report/ui skips the JSON.

Key: the trace's size and mtime (nanoseconds) and FORMAT; a trace that changes gets a new parse. Where: the user's
cache folder, ``$XDG_CACHE_HOME/sagelaunch/traces`` (``~/.cache/…``), under a name derived from the trace's absolute
path — never beside the user's data (a cache is bigger than the gzipped trace it saves parsing). Off with
``SAGELAUNCH_PROFILE_CACHE=0``; where the cache folder cannot be written, traces are parsed each time.

Format: an uncompressed ``.npz`` of the numpy columns plus the dictionaries and TraceMeta as JSON. Not Parquet,
measured: importing pyarrow costs ~0.2 s of CPU, more than decoding the 15 MB V100 trace (~0.1 s), while numpy
is already loaded and np.load reads the 45k-event columns in ~4 ms. Only traces of at least MIN_JSON_BYTES are
cached: below that, parsing is as quick as reading the cache. This module imports numpy only inside load/save.
"""

from __future__ import annotations

import json
import os
import zlib  # a small C module: hashlib's OpenSSL would add ~3 ms to every analyze
from pathlib import Path

from sagelaunch.profiler.schema import RankTrace, TraceMeta

FORMAT = 1  # bump when the cached columns or their meaning change
MIN_JSON_BYTES = 1 << 20
CACHE_ENV = "SAGELAUNCH_PROFILE_CACHE"


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _key(path: Path) -> str:
    st = path.stat()
    return f"{FORMAT}:{st.st_size}:{st.st_mtime_ns}"


def cache_file(path: Path) -> Path:
    """Where `path`'s parse is cached."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sagelaunch" / "traces"
    where = str(path.resolve()).encode()
    digest = f"{zlib.crc32(where):08x}{zlib.adler32(where):08x}"  # a name per folder; the key inside decides
    return base / f"{digest}-{path.name}.npz"


def cached(path: Path) -> Path | None:
    """The cache file holding `path`'s current parse, or None (no cache, stale, or caching off)."""
    if not enabled():
        return None
    try:
        key = _key(path)
    except OSError:
        return None
    candidate = cache_file(path)
    try:
        with open(candidate, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    # the key is the archive's first member's name
    return candidate if f"sagelaunch-cache:{key};".encode() in head else None


def load(path: Path, cache_file: Path):
    """The RankTrace stored in `cache_file` (None when it cannot be read: the caller parses the trace)."""
    import zipfile  # lazy: with bz2, lzma and shutil (~10 ms), only when a cache file is read; np.load needs it then

    import numpy as np

    try:
        with np.load(cache_file, allow_pickle=False) as z:
            cols = {k[4:]: z[k] for k in z.files if k.startswith("col_")}
            info = json.loads(bytes(z["info"]).decode())
            order = z["source_order"] if "source_order" in z.files else None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None
    meta = TraceMeta.from_dict(info["meta"])
    meta.source = str(path)
    return RankTrace(meta=meta, columns=cols, names=info["names"], cats=info["cats"], dtypes=info["dtypes"],
                     source_order=order)


def save(path: Path, rank) -> Path | None:
    """Store `rank` (parsed from `path`) in the user's cache folder; None when it cannot be written."""
    import numpy as np

    key = _key(path)
    info = {"meta": rank.meta.to_dict(), "names": rank.names, "cats": rank.cats, "dtypes": rank.dtypes}
    arrays = {f"sagelaunch-cache:{key};": np.zeros(0, np.int8)}  # first member: its name carries the key
    arrays.update({f"col_{k}": v for k, v in rank.columns.items()})
    arrays["info"] = np.frombuffer(json.dumps(info).encode(), dtype=np.uint8)
    if rank.source_order is not None:
        arrays["source_order"] = rank.source_order
    target = cache_file(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]  # numpy's stub reads the members as its allow_pickle flag
        os.replace(tmp, target)  # readers never see half a cache
        return target
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
    return None
