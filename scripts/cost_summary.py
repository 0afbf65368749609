"""Add up a `pytest --cost-report FILE` by test file (or by test with --tests): wall and CPU seconds, largest first.
Usage: python scripts/cost_summary.py FILE [--tests] [--top N]"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("report", type=Path)
    parser.add_argument("--tests", action="store_true", help="one row per test instead of per file")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for line in args.report.read_text().splitlines():
        record = json.loads(line)
        key = record["test"] if args.tests else record["test"].split("::")[0]
        row = totals[key]
        row[0] += record["wall_s"]
        row[1] += record["cpu_own_s"]
        row[2] += record["cpu_children_s"]
    wall = sum(row[0] for row in totals.values())
    cpu = sum(row[1] + row[2] for row in totals.values())
    print(f"{'wall s':>8} {'cpu s':>8} {'own':>7} {'child':>7}  {'where'}")
    for key, (w, own, child) in sorted(totals.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:args.top]:
        print(f"{w:8.1f} {own + child:8.1f} {own:7.1f} {child:7.1f}  {key}")
    print(f"all: wall {wall:.0f} s, CPU {cpu:.0f} s (own and reaped children) over {len(totals)} rows")


if __name__ == "__main__":
    main()
