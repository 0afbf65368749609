"""Prints --lines lines of --line_bytes bytes, then one line of --long_line_bytes bytes (no newline), then exits."""
import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--lines", type=int, default=10)
parser.add_argument("--line_bytes", type=int, default=100)
parser.add_argument("--long_line_bytes", type=int, default=0)
args = parser.parse_args()

body = "é" + "x" * (args.line_bytes - 13)  # a 2-byte character: pieces of a split line must stay valid UTF-8
batch = 1000
for start in range(0, args.lines, batch):
    sys.stdout.write("".join(f"{i:09d} {body}\n" for i in range(start, min(start + batch, args.lines))))
if args.long_line_bytes:
    sys.stdout.write("L" * args.long_line_bytes)
sys.stdout.flush()
