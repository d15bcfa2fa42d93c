#!/usr/bin/env python3
"""Renders the tables of docs/reliability.md from what the tests printed.

Usage: reliability_report.py ROWS UNIT_LOG OUTPUT [--into DOC]

ROWS: lines `label|area|tried|happened|left` (c_tests/run.sh writes them
when OXMPI_TEST_REPORT names the file: every `REPORT|area|tried|happened|left`
line a test printed, after the test's label). UNIT_LOG: the output of
`cargo test` (each passing `fuzz_*` target becomes a row). OUTPUT: the
tables in Markdown. With --into DOC, also replaces what lies between the
markers `<!-- tables:begin -->` and `<!-- tables:end -->` in DOC.

Exits 1 if there is no row at all (the tests did not run, or print no
REPORT line any more).
"""

import os
import re
import sys
import time

AREAS = [
    ("fault", "Faults"),
    ("bad input", "Bad input"),
    ("load", "Load"),
    ("attack", "Attacks"),
]
BEGIN, END = "<!-- tables:begin -->", "<!-- tables:end -->"


def cell(text):
    return text.strip().replace("|", "/") or "-"


def rows_from_tests(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("|")
            if len(parts) != 5:
                continue
            label, area, tried, happened, left = parts
            rows.append((area.strip(), label.strip(), tried, happened, left))
    return rows


def rows_from_fuzz(path, cases):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"test (\S*fuzz_\w+) \.\.\. ok$", line.strip())
            if m:
                name = m.group(1)
                target = name.rsplit("::", 1)[-1][len("fuzz_") :].replace("_", " ")
                rows.append(
                    (
                        "bad input",
                        "cargo test (proptest)",
                        f"fuzz target `{name}`: {target}, {cases} random inputs",
                        "every property held (no panic, no disagreement with the model)",
                        "nothing",
                    )
                )
    return sorted(rows, key=lambda r: r[2])


def machine():
    """One line naming where the rows were measured."""
    u = os.uname()
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        mem = f", {kib // 1024 // 1024} GiB of memory"
    except (OSError, ValueError, IndexError):
        pass
    day = time.strftime("%Y-%m-%d", time.gmtime())
    return f"Measured on {day}: Linux {u.release} on {u.machine}, {os.cpu_count()} cores{mem}."


def render(rows):
    out = [machine(), ""]
    for area, title in AREAS:
        mine = [r for r in rows if r[0] == area]
        if not mine:
            continue
        out.append(f"### {title}\n")
        out.append("| tried | what happened | left behind | test |")
        out.append("|---|---|---|---|")
        for _, label, tried, happened, left in mine:
            out.append(f"| {cell(tried)} | {cell(happened)} | {cell(left)} | {cell(label)} |")
        out.append("")
    others = sorted({r[0] for r in rows} - {a for a, _ in AREAS})
    if others:
        out.append(f"(rows of unknown areas left out: {', '.join(others)})\n")
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    into = None
    if "--into" in args:
        i = args.index("--into")
        into = args[i + 1]
        del args[i : i + 2]
    rows_path, unit_log, output = args
    cases = os.environ.get("PROPTEST_CASES", "256")  # proptest's default
    rows = rows_from_tests(rows_path) + rows_from_fuzz(unit_log, cases)
    if not rows:
        print(f"no REPORT rows in {rows_path} or {unit_log}", file=sys.stderr)
        return 1
    tables = render(rows)
    with open(output, "w") as f:
        f.write(tables + "\n")
    if into:
        with open(into) as f:
            doc = f.read()
        if BEGIN not in doc or END not in doc:
            print(f"{into} lacks the markers {BEGIN} and {END}", file=sys.stderr)
            return 1
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(into, "w") as f:
            f.write(f"{head}{BEGIN}\n{tables}\n{END}{tail}")
    print(f"{len(rows)} rows in {output}" + (f" and {into}" if into else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
