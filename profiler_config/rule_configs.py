"""`rule_configs` as SageMaker SDK v2 users write it (v2 re-exports smdebug_rulesconfig under that name).

Debugger's built-in rules are functions returning the rule's base configuration (a dict, for
`Rule.sagemaker(...)`); the profiler rules are classes whose arguments become the rule's parameters
(for `ProfilerRule.sagemaker(...)`). Names, defaults and checks are smdebug_rulesconfig 1.0.1's; the
rules' contents are in builtin_rules.json.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchTypeError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint

_RULES_PATH = Path(__file__).with_name("builtin_rules.json")

# function name → built-in rule (smdebug_rulesconfig.debugger_rules.builtin_rules)
DEBUGGER_RULES = {
    "all_zero": "AllZero", "check_input_images": "CheckInputImages", "class_imbalance": "ClassImbalance",
    "confusion": "Confusion", "create_xgboost_report": "CreateXgboostReport", "dead_relu": "DeadRelu",
    "exploding_tensor": "ExplodingTensor", "feature_importance_overweight": "FeatureImportanceOverweight",
    "loss_not_decreasing": "LossNotDecreasing", "nlp_sequence_ratio": "NLPSequenceRatio", "overfit": "Overfit",
    "overtraining": "Overtraining", "poor_weight_initialization": "PoorWeightInitialization",
    "saturated_activation": "SaturatedActivation", "similar_across_runs": "SimilarAcrossRuns",
    "stalled_training_rule": "StalledTrainingRule", "tensor_variance": "TensorVariance", "tree_depth": "TreeDepth",
    "unchanged_tensor": "UnchangedTensor", "vanishing_gradient": "VanishingGradient",
    "weight_update_ratio": "WeightUpdateRatio",
}


@lru_cache(maxsize=1)
def _builtin_rules() -> dict[str, Any]:
    with open(_RULES_PATH, "rb") as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


def _base_config(rule: str) -> dict[str, Any]:
    return copy.deepcopy(_builtin_rules()[rule])


def __getattr__(name: str) -> Any:
    """rule_configs.loss_not_decreasing() and the other built-in rules: one function each."""
    if name in DEBUGGER_RULES:
        rule = DEBUGGER_RULES[name]

        def base_config() -> dict[str, Any]:
            return _base_config(rule)

        base_config.__name__ = base_config.__qualname__ = name
        return base_config
    raise AttributeError(f"rule_configs has no {name!r}"
                         f"{did_you_mean(name, [*DEBUGGER_RULES, *PROFILER_RULES])}")


# ------------------------------------------------------------------ profiler rules
MINUTE_US = 60 * 1000 * 1000
_PERCENT, _POSITIVE, _TEXT = "percentile", "positive", "text"

# class → its parameters in order: (name, default, check)
PROFILER_RULES: dict[str, tuple[tuple[str, Any, str], ...]] = {
    "BatchSize": (("cpu_threshold_p95", 70, _PERCENT), ("gpu_threshold_p95", 70, _PERCENT),
                  ("gpu_memory_threshold_p95", 70, _PERCENT), ("patience", 1000, _POSITIVE),
                  ("window", 500, _POSITIVE), ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "CPUBottleneck": (("threshold", 50, _PERCENT), ("gpu_threshold", 10, _PERCENT), ("cpu_threshold", 90, _PERCENT),
                      ("patience", 1000, _POSITIVE), ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "Dataloader": (("min_threshold", 70, _POSITIVE), ("max_threshold", 200, _POSITIVE),
                   ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "GPUMemoryIncrease": (("increase", 5, _POSITIVE), ("patience", 1000, _POSITIVE), ("window", 10, _POSITIVE),
                          ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "IOBottleneck": (("threshold", 50, _PERCENT), ("gpu_threshold", 10, _PERCENT), ("io_threshold", 50, _PERCENT),
                     ("patience", 1000, _POSITIVE), ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "LoadBalancing": (("threshold", 0.5, _PERCENT), ("patience", 1000, _POSITIVE),
                      ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "LowGPUUtilization": (("threshold_p95", 70, _PERCENT), ("threshold_p5", 10, _PERCENT), ("window", 500, _POSITIVE),
                          ("patience", 1000, _POSITIVE), ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "MaxInitializationTime": (("threshold", 20, _POSITIVE), ("scan_interval_us", MINUTE_US, _POSITIVE)),
    "OverallSystemUsage": (("scan_interval_us", MINUTE_US, _POSITIVE),),
    "StepOutlier": (("stddev", 3, _POSITIVE), ("mode", None, _TEXT), ("n_outliers", 10, _POSITIVE),
                    ("scan_interval_us", MINUTE_US, _POSITIVE)),
}


def _check(rule: str, key: str, value: Any, kind: str) -> None:
    ok = (value is None or isinstance(value, str)) if kind == _TEXT else (
        isinstance(value, (int, float)) and not isinstance(value, bool)
        and (0 <= value <= 100 if kind == _PERCENT else value > 0))
    if not ok:
        allowed = {"percentile": "a number from 0 to 100", "positive": "a number > 0", "text": "a string or None"}[kind]
        raise SagelaunchError(f"{rule}({key}={value!r}): allowed: {allowed}", field=key, value=value, allowed=allowed,
                              fix=f"give {key} {allowed}")


class ProfilerRuleBase:
    """A profiler rule: its name and the parameters the rule evaluator gets (`rule_to_invoke` included)."""

    def __init__(self, **rule_parameters: Any) -> None:
        self.rule_name = type(self).__name__
        rule_parameters["rule_to_invoke"] = type(self).__name__
        self.rule_parameters = rule_parameters


def _profiler_rule_class(rule: str, params: tuple[tuple[str, Any, str], ...]) -> type:
    names = [p[0] for p in params]

    def __init__(self: ProfilerRuleBase, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise SagelaunchTypeError(f"{rule} takes at most {len(names)} positional arguments ({', '.join(names)})",
                                      field=rule, value=args, allowed=", ".join(names), fix="pass the others by name")
        for key in kwargs:
            if key not in names:
                hint = did_you_mean(key, names)
                raise SagelaunchTypeError(f"{rule} has no argument {key!r}{hint}; allowed: {', '.join(names)}",
                                          field=key, value=kwargs[key], allowed=", ".join(names),
                                          fix=fix_from_hint(hint, f"drop {key}"))
        values = {name: default for name, default, _ in params}
        values.update(zip(names, args))
        values.update(kwargs)
        for name, _, kind in params:
            _check(rule, name, values[name], kind)
        ProfilerRuleBase.__init__(self, **values)

    return type(rule, (ProfilerRuleBase,), {"__init__": __init__, "__doc__": f"Profiler rule {rule}."})


for _rule, _params in PROFILER_RULES.items():
    globals()[_rule] = _profiler_rule_class(_rule, _params)


class ProfilerReport(ProfilerRuleBase):
    """Every profiler rule in one report; `<Rule>_<parameter>=value` overrides a rule's parameter."""

    def __init__(self, **rule_parameters: Any) -> None:
        by_name = {r.lower(): r for r in PROFILER_RULES}
        for key, value in rule_parameters.items():
            rule_name, _, parameter = key.partition("_")
            rule = by_name.get(rule_name.lower())
            if not parameter or rule is None:
                hint = did_you_mean(rule_name, list(PROFILER_RULES))
                raise SagelaunchError(f"ProfilerReport({key}=...): keys are <rule>_<parameter>, rule one of "
                                      f"{', '.join(PROFILER_RULES)}{hint}", field=key, value=value,
                                      allowed="<rule>_<parameter>", fix=fix_from_hint(hint, "name a profiler rule"))
            globals()[rule](**{parameter.lower(): value})  # the rule's own checks
        super().__init__(**rule_parameters)
