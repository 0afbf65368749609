"""The names, keys and paths of a training job, checked once for every way a job is made.

SageMaker's own limits come from CreateTrainingJob's service model (botocore's sagemaker service-2.json:
ChannelName, HyperParameterKey/Value, TrainingEnvironmentKey/Value, DirectoryPath); the container contract adds
what a job needs to run: a channel is the folder /opt/ml/input/data/<name> (so '.' and '..' are refused), and a
hyperparameter key becomes the variable SM_HP_<KEY> (so it cannot hold '='). The estimators apply these when a
field is set and TrainingJobSpec applies them again, so `sagelaunch validate`, `fit` and the local backend refuse
the same inputs, with the same line, before any job folder, registry record or S3 object exists.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from typing import Any, overload

from sagelaunch.jobspec.errors import SagelaunchError, cut, secret_shown, shown

CHANNEL_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")  # ChannelName: [A-Za-z0-9\.\-_]+, 1-64
MAX_CHANNELS = 20  # InputDataConfig
ENV_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,511}$")  # TrainingEnvironmentKey, at most 512
MAX_ENVIRONMENT = 100  # TrainingEnvironmentMap
MAX_ENV_VALUE_CHARS = 512  # TrainingEnvironmentValue
MAX_HYPERPARAMETERS = 100  # HyperParameters
MAX_HYPERPARAMETER_KEY_CHARS = 256  # HyperParameterKey
MAX_HYPERPARAMETER_CHARS = 2500  # HyperParameterValue
MAX_PATH_CHARS = 4096  # DirectoryPath (and Linux's PATH_MAX)
MAX_NESTING = 32  # lists/dicts inside a hyperparameter value: deeper is refused before anything recurses over it
RESERVED_HYPERPARAMETERS = (
    "sagemaker_program", "sagemaker_submit_directory", "sagemaker_region", "sagemaker_job_name",
    "sagemaker_container_log_level",
)
NUL_ALLOWED, NUL_REMOVE = "text without \\x00", "remove it"
NUL_FIX = f"allowed: {NUL_ALLOWED} — {NUL_REMOVE}"
LARGE_SETTINGS = "pass large settings as an input channel or a file in source_dir"


def channel_name(field: str, v: Any) -> str:
    """A channel name SageMaker accepts and that names its own folder under /opt/ml/input/data."""
    if not isinstance(v, str) or not CHANNEL_NAME.match(v):
        raise SagelaunchError(f"{field}={shown(v)} is not a channel name; allowed: 1-64 of A-Z a-z 0-9 . - _ "
                              "(SageMaker's ChannelName), e.g. 'train'", field=field, value=v,
                              allowed="1-64 of A-Z a-z 0-9 . - _", fix="e.g. 'train'")
    if v in (".", ".."):
        raise SagelaunchError(f"{field}={v!r} is not a channel name: a channel is the folder /opt/ml/input/data/<name>, "
                              f"and {v!r} would be that folder or its parent; allowed: a name with a letter or digit, "
                              "e.g. 'train'", field=field, value=v, allowed="a name with a letter or digit",
                              fix="e.g. 'train'")
    return v


def channel_count(count: int) -> None:
    if count > MAX_CHANNELS:
        raise SagelaunchError(f"inputs has {count} channels; allowed: at most {MAX_CHANNELS} (SageMaker's "
                              "InputDataConfig) — put related data under one channel's prefix", field="inputs",
                              value=count, allowed=f"at most {MAX_CHANNELS} channels",
                              fix="put related data under one channel's prefix")


@overload
def local_path(field: str, v: str) -> str: ...
@overload
def local_path(field: str, v: None) -> None: ...
def local_path(field: str, v: str | None) -> str | None:
    """A path a process can open: no NUL character, at most MAX_PATH_CHARS (DirectoryPath)."""
    if v is None:
        return v
    if "\x00" in v:
        raise SagelaunchError(f"{field}={v!r} contains a NUL character (\\x00), which no path can hold; {NUL_FIX}",
                              field=field, value=v, allowed=NUL_ALLOWED, fix=NUL_REMOVE)
    if len(v) > MAX_PATH_CHARS:
        raise SagelaunchError(f"{field}={cut(v)!r} has {len(v)} characters; allowed: at most {MAX_PATH_CHARS} "
                              "— use a shorter path", field=field, value=v,
                              allowed=f"at most {MAX_PATH_CHARS} characters", fix="use a shorter path")
    return v


def environment(v: dict[str, Any] | None, field: str = "environment") -> dict[str, Any] | None:
    """TrainingEnvironmentMap's rules; a value is never shown when its name looks like a secret."""
    if v is None:
        return v
    if len(v) > MAX_ENVIRONMENT:
        raise SagelaunchError(f"{field} has {len(v)} variables; allowed: at most {MAX_ENVIRONMENT}", field=field,
                              value=len(v), allowed=f"at most {MAX_ENVIRONMENT} variables", fix="drop some variables")
    for key, value in v.items():
        if not isinstance(key, str) or not ENV_KEY.match(key):
            raise SagelaunchError(f"{field} key {shown(key)} is not a variable name; allowed: [A-Za-z_][A-Za-z0-9_]* "
                                  "(at most 512 characters), e.g. 'MY_SETTING'", field=field, value=key,
                                  allowed="[A-Za-z_][A-Za-z0-9_]* (at most 512 characters)", fix="e.g. 'MY_SETTING'")
        if not isinstance(value, str):
            raise SagelaunchError(f"{field}[{key!r}]={secret_shown(key, value)} is {type(value).__name__}; allowed: "
                                  f"text — quote it, e.g. {field}: {{{key}: '1'}}", field=f"{field}.{key}", value=value,
                                  allowed="text", fix=f"quote it, e.g. {field}: {{{key}: '1'}}")
        if len(value) > MAX_ENV_VALUE_CHARS:
            raise SagelaunchError(f"{field}[{key!r}] is {len(value)} characters; allowed: at most "
                                  f"{MAX_ENV_VALUE_CHARS} — {LARGE_SETTINGS}", field=f"{field}.{key}", value=value,
                                  allowed=f"at most {MAX_ENV_VALUE_CHARS} characters", fix=LARGE_SETTINGS)
        if "\x00" in value:
            raise SagelaunchError(f"{field}[{key!r}]={secret_shown(key, value)} contains a NUL character (\\x00), "
                                  f"which no process environment can hold; {NUL_FIX}", field=f"{field}.{key}",
                                  value=value, allowed=NUL_ALLOWED, fix=NUL_REMOVE)
        _travels(f"{field}[{key!r}]", f"{field}.{key}", key, value)
    return v


def lone_surrogate(text: str) -> str | None:
    """The first character of `text` that UTF-8 cannot carry (a lone surrogate, e.g. from a file name read with
    surrogateescape), as \\udcXX; None when the text can travel in a request, a record and an environment."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"\\u{ord(text[error.start]):04x}"
    return None


def _travels(where: str, field: str, key: str, text: str) -> None:
    found = lone_surrogate(text)
    if found is not None:
        fix = "remove it, or write the text it stands for (it often comes from a file name that is not UTF-8)"
        raise SagelaunchError(f"{where}={secret_shown(key, text)} contains a lone surrogate ({found}), which UTF-8 — "
                              f"and so the request, the job record and the job's environment — cannot carry; {fix}",
                              field=field, value=text, allowed="text UTF-8 can encode", fix=fix)


def hyperparameters(v: dict[str, Any] | None) -> dict[str, Any] | None:
    """HyperParameters' rules plus the container's: each key is also the variable SM_HP_<KEY>."""
    if v is None:
        return v
    if len(v) > MAX_HYPERPARAMETERS - 15:  # room for sagemaker_* and distribution entries
        raise SagelaunchError(f"hyperparameters has {len(v)} entries; allowed: at most {MAX_HYPERPARAMETERS - 15}",
                              field="hyperparameters", value=len(v), allowed=f"at most {MAX_HYPERPARAMETERS - 15}",
                              fix="drop some entries")
    for key, value in v.items():
        hyperparameter_key(key)
        _check_encoded_size(key, value)  # before json.dumps: its work is bounded from here on
        try:
            encoded = json.dumps(value)
        except (TypeError, ValueError):
            allowed = "str, int, float, bool, list, dict"
            raise SagelaunchError(
                f"hyperparameters[{key!r}]={secret_shown(key, value)} is not JSON-serialisable; allowed: {allowed}",
                field=f"hyperparameters.{key}", value=value, allowed=allowed, fix="convert it to one of those"
            ) from None
        if len(encoded) > MAX_HYPERPARAMETER_CHARS:
            raise SagelaunchError(f"hyperparameters[{key!r}] encodes to {len(encoded)} characters; allowed: at most "
                                  f"{MAX_HYPERPARAMETER_CHARS} (SageMaker's limit) — {LARGE_SETTINGS}",
                                  field=f"hyperparameters.{key}", value=len(encoded),
                                  allowed=f"at most {MAX_HYPERPARAMETER_CHARS} characters", fix=LARGE_SETTINGS)
        if isinstance(value, str) and (expanded := shell_expansion(value)):
            warnings.warn(ShellExpansionWarning(
                f"hyperparameters[{key!r}]={secret_shown(key, value)}: on SageMaker the training toolkit passes "
                f"hyperparameters to the script through /bin/sh, which expands {expanded} before the script sees "
                f"it; a local job passes it as written. Quote it inside the value ({shlex.quote(value)!r}) to pass it "
                "as written everywhere"), stacklevel=3)
    return v


class ShellExpansionWarning(UserWarning):
    """A hyperparameter value SageMaker's toolkit shell expands (a filename pattern, ~, $) before the script sees it."""


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_EXPANSIONS = ((re.compile(r"[*?]|\[[^\]\s]+\]"), "the filename pattern {} (against the container's working folder)"),
               (re.compile(r"(?:^|(?<=[\s=:]))~"), "{} to the container's home folder"),
               (re.compile(r"\$"), "the variable or substitution {}"))


def shell_expansion(value: str) -> str | None:
    """What /bin/sh would expand in `value` outside quotes (a glob, a leading ~, a $), said in words; None if nothing."""
    bare = _QUOTED.sub("", value)
    for pattern, words in _EXPANSIONS:
        if found := pattern.search(bare):
            word = next((w for w in bare.split() if found.group() in w), found.group())
            return words.format(repr(word))
    return None


def hyperparameter_key(key: Any) -> str:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_HYPERPARAMETER_KEY_CHARS:
        raise SagelaunchError(f"hyperparameters key {shown(key)} must be a string of 1-{MAX_HYPERPARAMETER_KEY_CHARS} "
                              "characters", field="hyperparameters", value=key,
                              allowed=f"a string of 1-{MAX_HYPERPARAMETER_KEY_CHARS} characters", fix="rename the key")
    if key in RESERVED_HYPERPARAMETERS or key == "mp_parameters":
        raise SagelaunchError(f"hyperparameters[{key!r}] is set by sagelaunch; use a different name",
                              field="hyperparameters", value=key, allowed="names sagelaunch does not set",
                              fix="use a different name")
    if "\x00" in key:
        raise SagelaunchError(f"hyperparameters key {cut(key)!r} contains a NUL character (\\x00); {NUL_FIX}",
                              field="hyperparameters", value=key, allowed=NUL_ALLOWED, fix=NUL_REMOVE)
    _travels("hyperparameters key", "hyperparameters", key, key)
    if "=" in key:
        fixed = re.sub(r"=+", "_", key)
        raise SagelaunchError(f"hyperparameters key {cut(key)!r} contains '=': the job receives each hyperparameter "
                              f"as the environment variable SM_HP_<KEY>, whose name cannot hold '='; allowed: any other "
                              f"characters — did you mean {cut(fixed)!r}?", field="hyperparameters", value=key,
                              allowed="any characters but '='", fix=f"did you mean {cut(fixed)!r}?")
    return key


def _check_encoded_size(key: str, value: Any) -> None:
    """Bound the work before json.dumps runs: walk the value without recursion and stop as soon as it cannot fit in
    MAX_HYPERPARAMETER_CHARS, nests deeper than MAX_NESTING, or holds a NUL character.

    Each item walked adds at least one character to the count, so the walk ends after a few thousand steps
    whatever the input (a list repeated by reference a billion times, a cycle, 10,000 levels of nesting).
    """
    field = f"hyperparameters[{key!r}]"
    size, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            fix = "flatten it, or pass it as a JSON string the script decodes"
            raise SagelaunchError(f"{field} nests lists/dicts more than {MAX_NESTING} levels deep; allowed: at most "
                                  f"{MAX_NESTING} levels — {fix}", field=f"hyperparameters.{key}",
                                  allowed=f"at most {MAX_NESTING} levels", fix=fix)
        if isinstance(item, dict):
            size += 2 + 2 * len(item)
            children = [*item.keys(), *item.values()] if size <= MAX_HYPERPARAMETER_CHARS else []
        elif isinstance(item, (list, tuple)):
            size += 2 + len(item)
            children = list(item) if size <= MAX_HYPERPARAMETER_CHARS else []
        else:
            if isinstance(item, str):
                _travels(field, f"hyperparameters.{key}", key, item)
            if isinstance(item, str) and "\x00" in item:
                raise SagelaunchError(f"{field} contains a NUL character (\\x00) in {secret_shown(key, item)}; jobs "
                                      "receive hyperparameters as arguments and environment variables, which cannot "
                                      f"hold one; {NUL_FIX}", field=f"hyperparameters.{key}", value=item,
                                      allowed=NUL_ALLOWED, fix=NUL_REMOVE)
            size += len(item) if isinstance(item, str) else 1
            children = []
        if size > MAX_HYPERPARAMETER_CHARS:
            raise SagelaunchError(f"{field} encodes to more than {MAX_HYPERPARAMETER_CHARS} characters; allowed: at "
                                  f"most {MAX_HYPERPARAMETER_CHARS} (SageMaker's limit) — {LARGE_SETTINGS}",
                                  field=f"hyperparameters.{key}",  # the value is not kept: it may be huge
                                  allowed=f"at most {MAX_HYPERPARAMETER_CHARS} characters", fix=LARGE_SETTINGS)
        stack.extend((child, depth + 1) for child in children)
