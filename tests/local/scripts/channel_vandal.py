"""Does to its channel what some preprocessing scripts do: appends to, truncates, renames, deletes and adds files,
changes modes and links; records in <model dir>/vandal.json what the filesystem allowed (a read-only view refuses)."""
import json
import os
from pathlib import Path

root = Path(os.environ["SM_CHANNEL_TRAIN"])
done: dict[str, str] = {}


def attempt(what: str, action) -> None:
    try:
        action()
        done[what] = "ok"
    except OSError as error:
        done[what] = error.strerror or str(error)


files = sorted(p for p in root.rglob("*") if p.is_file())
attempt("append", lambda: files[0].open("ab").write(b"changed by the job"))
attempt("truncate", lambda: files[1].open("wb").close())
attempt("rename", lambda: files[2].rename(files[2].with_name("renamed.bin")))
attempt("delete", lambda: files[3].unlink())
attempt("chmod", lambda: os.chmod(files[4], 0o777))
attempt("create", lambda: (root / "new.txt").write_text("new"))
attempt("rmtree", lambda: [p.unlink() for p in sorted(root.rglob("*")) if p.is_file()])
Path(os.environ["SM_MODEL_DIR"], "vandal.json").write_text(json.dumps(done))
print("vandal", json.dumps(done), flush=True)
