"""Job settings a trace cannot tell but the findings need: the SMP pipeline's degree, microbatches and stages per
rank, and gradient accumulation.

Inside a job the profiler records them from the environment (SM_HP_MP_PARAMETERS, the SMP parameters SageMaker and
the local backend deliver as JSON) into each trace file's metadata (TraceMeta.job_settings, an additive field of
schema sagelaunch.profile/1). After the job, `profile analyze`, the report and the browser read them back; the
command line's --pipeline-parallel-degree / --microbatches fill in for profiles without them (Kineto traces, older
artifacts) and override them when given. What sagelaunch's own libraries noted in the job (jobspec.library_marks: the
stages per rank its SMP pipeline runs, the Hugging Face Trainer's gradient_accumulation_steps through our callback)
is recorded beside them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from sagelaunch.jobspec import library_marks
from sagelaunch.jobspec.contract import SM_HP_MP_PARAMETERS

KEYS = ("pipeline_parallel_degree", "microbatches", library_marks.MICROBATCHES_PER_FILL, library_marks.VIRTUAL_STAGES,
        library_marks.GRADIENT_ACCUMULATION_STEPS)
ALIASES = {"partitions": "pipeline_parallel_degree"}  # SMP v1's older name


def from_smp_parameters(params: Any) -> dict[str, int]:
    """The settings among SMP parameters (a dict); values that are not whole numbers ≥ 1 are left out."""
    if not isinstance(params, Mapping):
        return {}
    out: dict[str, int] = {}
    for key, value in params.items():
        key = ALIASES.get(key, key)
        if key in KEYS and isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            out[key] = value
    return out


def from_environment(environ: Mapping[str, str] = os.environ) -> dict[str, int]:
    """The settings of the running job: its SMP parameters and what sagelaunch's libraries noted in this process; {}
    outside a model-parallel job without notes, and the variable's part left out when it is not JSON (the profiler
    never fails training over metadata)."""
    noted = from_smp_parameters(library_marks.settings())
    raw = environ.get(SM_HP_MP_PARAMETERS, "").strip()
    if not raw:
        return noted
    try:
        return {**from_smp_parameters(json.loads(raw)), **noted}
    except ValueError:
        return noted


def of_profile(profile) -> dict[str, int]:
    """The settings recorded in a profile's traces (every rank of a job has the same; the first wins). Its ranks are
    anything with a TraceMeta as `.meta` (RankTrace, or the parallel analysis' per-rank results)."""
    for rt in profile.ranks.values():
        settings = from_smp_parameters(getattr(rt.meta, "job_settings", None))
        if settings:
            return settings
    return {}
