#!/usr/bin/env python3
"""mpi4py's test suite against oxmpi, beside MPICH: `make check-mpi4py`.

    tools/mpi4py_suite.py [--impls oxmpi,mpich] [--ranks 1,2,4] [--subset FILE]
                          [--timeout S] [--summary FILE] [--prefix STAGE]

mpi4py (the latest release on PyPI unless $MPI4PY_VERSION names one) is
fetched once as a source distribution into build/mpi4py/ (its test/ folder
is the suite) and built from it, with `MPICC=<stage>/bin/mpicc` into the
virtual environment build/mpi4py-venv for oxmpi, and with `mpicc.mpich`
into build/mpi4py-venv-mpich for MPICH. Both are kept: a second run builds
nothing (the oxmpi build finds libmpi.so.12 through the staged rpath, so a
rebuilt library needs no rebuilt mpi4py). Without PyPI, or when a virtual
environment cannot be made, prints a notice and exits 77 (skipped).

Every test module (test/test_*.py) runs on its own under the
implementation's mpiexec (oxmpi's staged one, or mpiexec.mpich) on each rank
count, at most --timeout seconds, each rank through
tools/mpi4py_suite/run_tests.py (copied into the test folder), which
records every test's outcome. A
test's outcome in a run is the worst over its ranks (error, fail, pass,
skip); a module run that times out or exits non-zero with tests left
unreported adds `<module> (run)` as an error. Results go to
build/mpi4py/results.txt (`impl ranks test outcome`; each
implementation's also to results-<impl>.txt, which --with-saved reads back
to compare without running it again), a table to
build/mpi4py/summary.md (and to --summary, e.g. docs/mpi4py.md).

Exits 1 when oxmpi fails a test (fail or error) that MPICH does not fail on
the same rank count (when MPICH ran; else any oxmpi failure) and that
tools/mpi4py_suite/expected.txt does not list; 0 otherwise. --subset FILE
runs only the `module ranks` pairs it lists (make check's subset).
$OXMPI_MPI4PY_LOCK names a file each module run holds with flock(1) (for
machines shared between builds).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tools", "mpi4py_suite")
WORK = os.path.join(ROOT, "build", "mpi4py")
RANK_ORDER = {"error": 3, "fail": 2, "xpass": 2, "pass": 1, "xfail": 1, "skip": 0}
BAD = ("fail", "error", "xpass")
# run_tests.py runs from the suite's test folder, as mpi4py's main.py
# does: mpi4py.futures' spawned workers import the main script's folder
# (test_util_pool needs its test module there).
RUNNER = "oxmpi_run_tests.py"


def say(*a):
    print(*a, flush=True)


def skip(why):
    say(f"SKIP: mpi4py's test suite not run: {why}")
    sys.exit(77)


def run(cmd, log, env=None, cwd=None, timeout=1800):
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write("timed out\n")
            return 124


def network_trouble(log):
    text = open(log, encoding="utf-8", errors="replace").read()
    return re.search(
        r"Failed to establish a new connection|Temporary failure in name resolution|"
        r"Could not find a version that satisfies|No matching distribution|ConnectionError|"
        r"Network is unreachable|Read timed out|No module named venv|ensurepip",
        text,
    )


def fetch_sdist():
    """The source distribution in the cache (fetched if none is), unpacked: its test folder."""
    os.makedirs(WORK, exist_ok=True)
    want = os.environ.get("MPI4PY_VERSION")
    pattern = f"mpi4py-{want}.tar.gz" if want else "mpi4py-*.tar.gz"
    have = sorted(glob.glob(os.path.join(WORK, pattern)))
    if not have:
        log = os.path.join(WORK, "download.log")
        spec = f"mpi4py=={want}" if want else "mpi4py"
        say(f"check-mpi4py: downloading {spec}'s source from PyPI into {WORK}")
        rc = run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "mpi4py", spec, "-d", WORK], log, timeout=900)
        have = sorted(glob.glob(os.path.join(WORK, pattern)))
        if rc != 0 or not have:
            skip(f"PyPI is not reachable or pip download failed (see {log})")
    sdist = have[-1]
    name = os.path.basename(sdist)[: -len(".tar.gz")]
    src = os.path.join(WORK, name)
    if not os.path.isdir(os.path.join(src, "test")):
        with tarfile.open(sdist) as t:
            t.extractall(WORK)
    return sdist, src


def make_venv(impl, sdist, mpicc):
    """A virtual environment with mpi4py built from the sdist against one MPI (kept between runs)."""
    venv = os.path.join(ROOT, "build", "mpi4py-venv" if impl == "oxmpi" else f"mpi4py-venv-{impl}")
    py = os.path.join(venv, "bin", "python")
    stamp = os.path.join(venv, "oxmpi-built-from")
    want = f"{os.path.basename(sdist)} {mpicc}\n"
    if os.path.exists(stamp) and open(stamp).read() == want:
        return py
    log = os.path.join(WORK, f"build-{impl}.log")
    open(log, "w").close()
    say(f"check-mpi4py: building {os.path.basename(sdist)} with {mpicc} into {venv} (log {log})")
    shutil.rmtree(venv, ignore_errors=True)
    if run([sys.executable, "-m", "venv", venv], log) != 0:
        skip(f"python3 cannot make a virtual environment (see {log})")
    env = dict(os.environ, MPICC=mpicc)
    env.pop("MPI4PY_BUILD_MPIABI", None)
    rc = run([py, "-m", "pip", "install", "--no-cache-dir", "--no-binary", "mpi4py", sdist], log, env=env)
    if rc != 0:
        if network_trouble(log):
            skip(f"mpi4py's build dependencies are not reachable (see {log})")
        say(f"check-mpi4py: building mpi4py with {mpicc} failed; see {log}")
        subprocess.run(["tail", "-n", "30", log])
        sys.exit(1)
    with open(stamp, "w") as f:
        f.write(want)
    return py


def modules_of(src):
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(src, "test", "test_*.py")))


def run_module(impl, mpiexec, py, src, module, ranks, timeout, logdir):
    """{test id: outcome} of one module on `ranks` ranks."""
    tag = f"{module}.{ranks}"
    scratch = os.path.join(logdir, "cwd", tag)
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    outprefix = os.path.join(scratch, "outcome")
    log = os.path.join(logdir, f"{tag}.log")
    env = dict(os.environ)
    for k in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH"):
        env.pop(k, None)
    cmd = ["timeout", "-k", "5", str(timeout), mpiexec, "-n", str(ranks), py,
           os.path.join(src, "test", RUNNER), os.path.join(src, "test"), outprefix, "-v", module]
    lock = os.environ.get("OXMPI_MPI4PY_LOCK")
    if lock:
        cmd = ["flock", lock] + cmd
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=scratch).returncode
    took = time.monotonic() - start
    results = {}
    done = 0
    for path in glob.glob(outprefix + ".*"):
        for line in open(path, encoding="utf-8", errors="replace"):
            line = line.strip()
            if line == "#done":
                done += 1
                continue
            test, _, outcome = line.rpartition(" ")
            if outcome in RANK_ORDER and RANK_ORDER[outcome] >= RANK_ORDER.get(results.get(test, "skip"), 0):
                results[test] = outcome
    if rc != 0 and (done < ranks or rc == 124):
        results[f"{module} (run)"] = "error"
        why = "timed out" if rc == 124 else f"exit {rc}"
        with open(log, "a") as f:
            f.write(f"\n# {why}; {done} of {ranks} ranks finished\n")
    return results, took, rc


def read_expected():
    """{(ranks or None, test id): reason} from expected.txt (`ranks test: reason`, ranks `*` = any)."""
    exp = {}
    path = os.path.join(HERE, "expected.txt")
    if not os.path.exists(path):
        return exp
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition(": ")
        ranks, _, test = key.partition(" ")
        exp[(None if ranks == "*" else int(ranks), test.strip())] = reason.strip()
    return exp


def expected_reason(exp, ranks, test):
    return exp.get((ranks, test)) or exp.get((None, test))


def write_summary(path, results, impls, rank_counts, exp, version, secs):
    lines = [
        "# mpi4py's test suite on oxmpi and on MPICH",
        "",
        f"Written by `make check-mpi4py` (tools/mpi4py_suite.py): {version} built from",
        "source against each library, its test suite run one module at a time on",
        "1, 2 and 4 ranks with each library's mpiexec. A test counts once per run;",
        "on several ranks its outcome is the worst over the ranks. mpi4py sees",
        "oxmpi as MPICH 4.0.2 (the header's `MPICH_VERSION`), so it skips the",
        "same tests on both (its known MPICH failures), except those that need",
        "`MPI_Comm_spawn` with `MPI_APPNUM` (`test_spawn`, the process pool of",
        "`test_util_pool`), which it skips on MPICH 4.0.2 and runs on oxmpi.",
        "`<module> (run)` marks a module run that timed out (each has at most",
        "`--timeout` seconds) or crashed: the module's tests after that point did",
        "not run and are not counted.",
        "",
        "| run | " + " | ".join(f"{i} pass | {i} fail | {i} error | {i} skip" for i in impls) + " |",
        "|---|" + "---|" * (4 * len(impls)),
    ]
    for n in rank_counts:
        row = [f"{n} rank{'s' if n > 1 else ''}"]
        for i in impls:
            r = results.get((i, n), {})
            vals = list(r.values())
            row += [str(sum(v in ("pass", "xfail") for v in vals)), str(sum(v in ("fail", "xpass") for v in vals)),
                    str(sum(v == "error" for v in vals)), str(sum(v == "skip" for v in vals))]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Time of the run: " + ", ".join(f"{i} {secs.get(i, 0):.0f} s" for i in impls) + ".")
    lines.append("")
    if "oxmpi" in impls:
        only, both = [], []
        for n in rank_counts:
            ox = results.get(("oxmpi", n), {})
            ref = results.get(("mpich", n), {}) if "mpich" in impls else {}
            for t, o in sorted(ox.items()):
                if o not in BAD:
                    continue
                if ref.get(t) in BAD:
                    both.append((n, t, o, ref.get(t)))
                else:
                    only.append((n, t, o))
        lines.append("## Failures of oxmpi that MPICH does not have")
        lines.append("")
        if not only:
            lines.append("None.")
        for n, t, o in only:
            why = expected_reason(exp, n, t) or "not explained yet (not in tools/mpi4py_suite/expected.txt)"
            lines.append(f"- `{t}` on {n} rank{'s' if n > 1 else ''} ({o}): {why}")
        lines.append("")
        if "mpich" in impls:
            lines.append("## Failures of both")
            lines.append("")
            if not both:
                lines.append("None.")
            for n, t, o, r in both:
                why = expected_reason(exp, n, t)
                lines.append(f"- `{t}` on {n} rank{'s' if n > 1 else ''} (oxmpi {o}, MPICH {r})" + (f": {why}" if why else ""))
            lines.append("")
            mpich_only = []
            for n in rank_counts:
                ox = results.get(("oxmpi", n), {})
                for t, o in sorted(results.get(("mpich", n), {}).items()):
                    if o in BAD and ox.get(t) not in BAD:
                        mpich_only.append((n, t, o))
            lines.append("## Failures of MPICH that oxmpi does not have")
            lines.append("")
            lines.append(", ".join(f"`{t}` ({n})" for n, t, o in mpich_only) + "." if mpich_only else "None.")
            lines.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impls", default="oxmpi,mpich",
                    help="implementations to run (none: only compare saved results, with --with-saved)")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--subset", help="file of `module ranks` lines to run (make check)")
    ap.add_argument("--only", action="append", default=[], help="run only these modules")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per module run")
    ap.add_argument("--prefix", default=os.path.join(ROOT, "build", "stage"))
    ap.add_argument("--summary", help="also write the summary here (docs/mpi4py.md)")
    ap.add_argument("--with-saved", help="compare with these implementations' results of an earlier "
                    "run (build/mpi4py/results-<impl>.txt) instead of running them")
    args = ap.parse_args()
    impls = [i for i in args.impls.split(",") if i]
    rank_counts = [int(x) for x in args.ranks.split(",")]

    tools = {"oxmpi": (os.path.join(args.prefix, "bin", "mpicc"), os.path.join(args.prefix, "bin", "mpiexec")),
             "mpich": (shutil.which("mpicc.mpich"), shutil.which("mpiexec.mpich"))}
    for i in impls:
        if not all(tools[i]):
            if i == "oxmpi":
                say(f"check-mpi4py: no staged oxmpi in {args.prefix} (make stage)")
                sys.exit(1)
            say(f"notice: {i} is not installed (mpicc.mpich, mpiexec.mpich); its runs are left out")
    impls = [i for i in impls if all(tools[i])]

    sdist, src = fetch_sdist()
    version = os.path.basename(src)
    pys = {i: make_venv(i, sdist, tools[i][0]) for i in impls}
    shutil.copyfile(os.path.join(HERE, "run_tests.py"), os.path.join(src, "test", RUNNER))

    plan = []
    if args.subset:
        for line in open(args.subset, encoding="utf-8"):
            line = line.split("#")[0].split()
            if line:
                plan.append((line[0], int(line[1])))
    else:
        mods = args.only or modules_of(src)
        plan = [(m, n) for n in rank_counts for m in mods]
        rank_counts = sorted({n for _, n in plan})
    rank_counts = sorted({n for _, n in plan})

    exp = read_expected()
    results = {}
    secs = {}
    rows = []
    for i in impls:
        logdir = os.path.join(WORK, "runs", i)
        os.makedirs(logdir, exist_ok=True)
        say(f"== {version} on {i}")
        start = time.monotonic()
        for module, n in plan:
            res, took, rc = run_module(i, tools[i][1], pys[i], src, module, n, args.timeout, logdir)
            results.setdefault((i, n), {}).update(res)
            bad = sorted(t for t, o in res.items() if o in BAD)
            counts = {o: sum(v == o for v in res.values()) for o in ("pass", "fail", "error", "skip")}
            say(f"  {module} n={n}: {counts['pass']} pass, {counts['fail']} fail, {counts['error']} error, "
                f"{counts['skip']} skip ({took:.1f} s{', exit %d' % rc if rc else ''})")
            for t in bad:
                say(f"    {res[t]}: {t}")
            for t, o in res.items():
                rows.append(f"{i} {n} {t} {o}")
        secs[i] = time.monotonic() - start
        say(f"  {i}: {secs[i]:.0f} s")

    for i in impls:
        with open(os.path.join(WORK, f"results-{i}.txt"), "w", encoding="utf-8") as f:
            f.write("".join(f"{r}\n" for r in sorted(rows) if r.startswith(f"{i} ")))
            f.write(f"# seconds {secs[i]:.0f}\n")
    if args.with_saved:
        # The other implementations' results of an earlier run, beside.
        for i in args.with_saved.split(","):
            path = os.path.join(WORK, f"results-{i}.txt")
            if i in impls or not os.path.exists(path):
                continue
            for line in open(path, encoding="utf-8"):
                if line.startswith("# seconds "):
                    secs[i] = float(line.split()[2])
                    continue
                impl, n, rest = line.strip().split(" ", 2)
                test, _, outcome = rest.rpartition(" ")
                results.setdefault((impl, int(n)), {})[test] = outcome
                rows.append(line.strip())
            impls = [x for x in ("oxmpi", "mpich") if x in impls or x == i]
    with open(os.path.join(WORK, "results.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(rows)) + "\n")
    summary = os.path.join(WORK, "summary.md")
    write_summary(summary, results, impls, rank_counts, exp, version, secs)
    if args.summary:
        shutil.copyfile(summary, args.summary)

    regressions = []
    for n in rank_counts:
        ox = results.get(("oxmpi", n), {})
        ref = results.get(("mpich", n)) if "mpich" in impls else None
        for t, o in sorted(ox.items()):
            if o in BAD and not (ref is not None and ref.get(t) in BAD) and not expected_reason(exp, n, t):
                regressions.append(f"{t} on {n} ranks: {o}")
    say("== counts (pass/fail/error/skip)")
    for n in rank_counts:
        say(f"  {n} ranks: " + "; ".join(
            f"{i} " + "/".join(str(sum(v in grp for v in results.get((i, n), {}).values()))
                               for grp in (("pass", "xfail"), ("fail", "xpass"), ("error",), ("skip",)))
            for i in impls))
    if regressions:
        say(f"check-mpi4py: {len(regressions)} failures of oxmpi that MPICH does not have and expected.txt does not list:")
        for r in regressions:
            say(f"  {r}")
        say(f"logs: {os.path.join(WORK, 'runs')}")
        sys.exit(1)
    say("check-mpi4py: no failure of oxmpi beyond MPICH's and the expected ones")


if __name__ == "__main__":
    main()
