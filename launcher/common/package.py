"""model.tar.gz in the SageMaker PyTorch inference layout.

    model.tar.gz
    ├── config.json, model.safetensors, tokenizer.json, ...   the model, at the top
    └── code/
        ├── inference.py        model_fn / input_fn / predict_fn / output_fn
        └── requirements.txt    installed by the serving container before it imports inference.py

The input is a model folder (what train_sentiment.py saves to SM_MODEL_DIR) or a training job's
model.tar.gz; any code/ folder it already has is replaced.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.common.archive import unpack
from sagelaunch.launcher.common.sourcedir import LeftOut, code_files, dependency_files, folder_files

HANDLER_PATH = "code/inference.py"
# The PyTorch 2.0 inference images ship torch but not transformers; 4.x releases support their
# torch 2.0 and read the tokenizer.json / safetensors files transformers 5 saves.
DEFAULT_REQUIREMENTS = "transformers>=4.40,<5\n"
# training leftovers a server never reads (training_args.bin is a pickle: keep it out of serving)
SKIPPED_FILES = ("training_args.bin",)


def default_inference_script() -> Path:
    """scripts/inference.py: the sentiment handler shipped with sagelaunch."""
    return Path(__file__).resolve().parents[2] / "scripts" / "inference.py"


def is_archive(path: str | Path) -> bool:
    path = Path(path)
    return path.is_file() and tarfile.is_tarfile(path)


def unpack_model(model: str | Path, dest: str | Path) -> Path:
    """A model folder as is, or a model.tar.gz extracted into `dest` by launcher.common.archive's rules."""
    model = Path(str(model).removeprefix("file://"))  # what a local job reports as its model_data
    if model.is_dir():
        return model
    if not is_archive(model):
        fix = "pass the folder the training script saved (SM_MODEL_DIR) or the job's model.tar.gz"
        raise SagelaunchError(f"model={str(model)!r} is neither a folder nor a .tar.gz archive; {fix}", field="model",
                              value=str(model), allowed="a folder or a .tar.gz archive", fix=fix)
    return unpack(model, dest)


def archive_members(archive: str | Path) -> list[str]:
    """The file names inside an archive, normalised (no leading ./)."""
    with tarfile.open(archive) as tar:
        return sorted(m.name.removeprefix("./") for m in tar.getmembers() if m.isfile())


def package_model(
    model: str | Path,
    output: str | Path = "model.tar.gz",
    *,
    entry_point: str | Path | None = None,
    requirements: str | Path | None = None,
) -> Path:
    """Write `output`: the model's files at the top, code/inference.py and code/requirements.txt.

    entry_point: the inference handler (default: scripts/inference.py, the sentiment handler).
    requirements: a requirements.txt for the serving container (default: transformers 4.x).
    """
    handler = Path(entry_point) if entry_point else default_inference_script()
    if not handler.is_file():
        raise SagelaunchError(f"entry_point={str(handler)!r} does not exist; pass the path of your inference.py",
                              field="entry_point", value=str(handler), allowed="an existing file",
                              fix="pass the path of your inference.py")
    if requirements is not None and not Path(requirements).is_file():
        raise SagelaunchError(f"requirements={str(requirements)!r} does not exist; pass a requirements.txt path",
                              field="requirements", value=str(requirements), allowed="an existing file",
                              fix="pass a requirements.txt path")
    output = Path(output)
    with tempfile.TemporaryDirectory(prefix="sagelaunch-package-") as tmp:
        folder = unpack_model(model, Path(tmp) / "model")
        files = [(path, name) for path, name in folder_files(folder, f"model={str(model)!r}")
                 if name.split("/")[0] != "code" and Path(name).name not in SKIPPED_FILES]
        if not files:
            raise SagelaunchError(f"model={str(model)!r} holds no files; expected a saved model (config.json, weights, "
                                  "...)", field="model", value=str(model), allowed="a saved model (config.json, weights, ...)",
                                  fix="pass the folder the training script saved")
        if entry_point is None and not (folder / "config.json").is_file():
            fix = "pass the folder saved by save_pretrained / train_sentiment.py, or your own entry_point"
            raise SagelaunchError(f"model={str(model)!r} has no config.json, so the default sentiment handler cannot "
                                  f"load it; {fix}", field="model", value=str(model), allowed="a folder with config.json",
                                  fix=fix)
        code = Path(tmp) / "code"
        code.mkdir()
        shutil.copyfile(handler, code / "inference.py")
        if requirements is not None:
            shutil.copyfile(requirements, code / "requirements.txt")
        else:
            (code / "requirements.txt").write_text(DEFAULT_REQUIREMENTS)
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".partial")  # never leave a half-written archive behind
        with tarfile.open(partial, "w:gz") as tar:
            for path, name in files:
                tar.add(path, arcname=name)
            tar.add(code / "inference.py", arcname=HANDLER_PATH)
            tar.add(code / "requirements.txt", arcname="code/requirements.txt")
        partial.replace(output)
    return output


def repack_model(
    model: str | Path,
    output: str | Path,
    *,
    entry_point: str,
    source_dir: str | Path | None = None,
    dependencies: tuple[str, ...] | list[str] = (),
) -> Path:
    """The SageMaker SDK v2's repack: the model's files with the serving code under code/.

    source_dir (a folder, or a sourcedir.tar.gz such as a training job's uploaded code) becomes code/
    (entry_point is a file in it); without one, entry_point is copied into code/. Each dependency goes
    to code/lib/<name>. The files of source_dir, entry_point and dependencies are chosen by the packing
    rule training uses (launcher.common.sourcedir): credentials, VCS data and links out of their folder never ship.
    """
    output = Path(output)
    with tempfile.TemporaryDirectory(prefix="sagelaunch-repack-") as tmp:
        folder = Path(tmp) / "model"
        if unpack_model(model, folder) != folder:  # a model folder: work on a copy of what may ship
            for path, name in folder_files(Path(str(model).removeprefix("file://")), f"model={str(model)!r}"):
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, folder / name)
        code = folder / "code"
        _add_code(code, entry_point, source_dir, dependencies)
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".partial")
        with tarfile.open(partial, "w:gz") as tar:
            for path, name in folder_files(folder, f"model={str(model)!r}"):  # an archive's own credentials too
                tar.add(path, arcname=name)
        partial.replace(output)
    return output


def _add_code(code: Path, entry_point: str, source_dir: str | Path | None, dependencies) -> None:
    """Lay the serving code into the model's code/ folder (v2's repack layout, sourcedir's packing rule)."""
    left_out = LeftOut("source_dir" if source_dir is not None else "entry_point")
    files: list[tuple[Path, str]] = []
    if source_dir is not None and is_archive(source_dir):
        unpack(source_dir, code)  # code packed already (a training job's sourcedir.tar.gz)
    elif source_dir is not None:
        if not Path(source_dir).is_dir():
            raise SagelaunchError(f"source_dir={str(source_dir)!r} is not a folder; pass the folder of your "
                                  "inference code (entry_point must be a file in it)", field="source_dir",
                                  value=str(source_dir), allowed="a folder", fix="pass the folder of your inference code")
        shutil.rmtree(code, ignore_errors=True)
        files = list(code_files(source_dir, entry_point, left_out=left_out))
    elif Path(entry_point).is_file():
        files = list(code_files(None, entry_point, left_out=left_out))
    elif not (code / entry_point).is_file():
        raise SagelaunchError(f"entry_point={entry_point!r}: no such file (from {Path.cwd()}) and none in the "
                              "model's code/; pass the path of your inference script", field="entry_point",
                              value=entry_point, allowed="an existing file", fix="pass the path of your inference script")
    taken = [p.relative_to(code).as_posix() for p in code.rglob("*") if p.is_file()] + [name for _, name in files]
    files += dependency_files(dependencies, taken=taken, left_out=left_out, under="lib")
    left_out.warn()
    for path, name in files:
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, code / name)
    if not (code / Path(entry_point).name).is_file() and not (code / entry_point).is_file():
        raise SagelaunchError(f"entry_point={entry_point!r} is not in source_dir={str(source_dir)!r}; pass a file "
                              "inside source_dir, relative to it", field="entry_point", value=entry_point,
                              allowed=f"a file in source_dir={str(source_dir)!r}", fix="pass a file inside source_dir, relative to it")
