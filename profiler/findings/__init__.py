"""Findings: what to change, computed from an analysis result (pure functions; rules.py, thresholds.py)."""

from __future__ import annotations

from sagelaunch.profiler.records import AnalysisResult, Finding
from sagelaunch.profiler.findings.rules import RULES

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def findings(analysis: AnalysisResult) -> list[Finding]:
    """Every rule's findings, most severe first."""
    out = [f for rule in RULES for f in rule(analysis)]
    return sorted(out, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
