#!/usr/bin/env python3
"""MPICH 4.0.2's test suite (test/mpi of its Debian source package) built
and run against oxmpi: `make check-mpich`.

    tools/mpich_suite.py [--folders init,pt2pt,...] [--modes oxmpi,ld_library_path,ld_preload]
                         [--expected FILE] [--jobs-timeout-scale N] [--only NAME ...]

Fetches the source with `apt-get source mpich` into a cache folder outside
the tree ($OXMPI_MPICH_SRC, default ~/.cache/oxmpi/mpich-src) unless it is
there; without it (no deb-src line, no network) prints a notice and exits
77 (skipped).

Modes (each its own build folder under build/mpich-suite/):
- oxmpi: every program built with oxmpi's mpicc, run with oxmpi's mpiexec;
- ld_library_path, ld_preload: built with MPICH's mpicc.mpich, run with
  oxmpi's mpiexec and oxmpi's libmpi.so.12 found through LD_LIBRARY_PATH,
  or preloaded (the drop-in paths);
- mpich: MPICH itself (mpicc.mpich, mpiexec.mpich), for its counts beside
  oxmpi's in the per-folder table.

Each entry of a folder's `testlist` (name, ranks, arg=, env=, timeLimit=,
mpiexecarg=, resultTest=; `xfail=` entries are reported, not run; lines
naming a feature folder or a configure variable are left out) runs with
oxmpi's mpiexec. It passes by MPICH's rule: exit 0, at least one output
line, and every line `No Errors` (or `No errors`; resultTest=TestStatus and TestErrFatal:
a non-zero exit). Results go to build/mpich-suite/<mode>/results.txt and a
per-folder table beside MPICH's own counts if given.

The expected result of every entry is in tools/mpich_suite/expected.txt
(`folder/name ranks [args]: pass` or `: fail <reason>`). Exits 1 when an
entry expected to pass fails (a regression), 0 otherwise; entries that
pass but are expected to fail are listed, to be marked `pass`. With
--write-expected, rewrites the file from this run, keeping the reasons of
entries that still fail.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tools", "mpich_suite")
DEFAULT_FOLDERS = "init,pt2pt,part,group,info,errhan,attr,comm,coll,datatype,threads,topo,rma,io,errors,mpi_t,spawn"
SRC_CACHE = os.environ.get("OXMPI_MPICH_SRC", os.path.expanduser("~/.cache/oxmpi/mpich-src"))


def say(*a):
    print(*a, flush=True)


def fetch_source():
    """The test/mpi folder of the source package, fetched if needed."""
    for d in sorted(os.listdir(SRC_CACHE)) if os.path.isdir(SRC_CACHE) else []:
        t = os.path.join(SRC_CACHE, d, "test", "mpi")
        if d.startswith("mpich-") and os.path.isdir(t):
            return t
    os.makedirs(SRC_CACHE, exist_ok=True)
    say(f"check-mpich: fetching MPICH's source package into {SRC_CACHE}")
    try:
        r = subprocess.run(["apt-get", "source", "-qq", "mpich"], cwd=SRC_CACHE, capture_output=True, text=True)
    except OSError as e:
        r = None
        why = str(e)
    if r is None or r.returncode != 0:
        why = r.stderr.strip().splitlines()[-1] if r is not None and r.stderr.strip() else "apt-get failed"
        say(f"SKIP: MPICH's source is not reachable ({why}); add a deb-src line for this Debian suite")
        sys.exit(77)
    return fetch_source()


def makefile_rules(folder):
    """{program: (sources, cppflags, ldadd)} from the folder's Makefile.am."""
    rules = {}
    path = os.path.join(folder, "Makefile.am")
    if not os.path.exists(path):
        return rules
    text = open(path).read().replace("\\\n", " ")
    for line in text.splitlines():
        m = re.match(r"^(\w+)_(SOURCES|CPPFLAGS|LDADD|CFLAGS)\s*=\s*(.*)$", line.strip())
        if not m:
            continue
        prog, what, value = m.groups()
        value = value.replace("$(AM_CPPFLAGS)", "").replace("$(LDADD)", "").strip()
        entry = rules.setdefault(prog, {"SOURCES": None, "CPPFLAGS": "", "LDADD": "", "CFLAGS": ""})
        entry[what] = value
    return rules


def testlist_lines(folder):
    """The lines of the folder's testlist(.in), comments and lines naming a
    configure variable (`@rmadir@`) left out; `@iodir@` is `io`."""
    for name in ("testlist", "testlist.in"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            break
    else:
        return []
    lines = []
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        # Sub-folders of features oxmpi has are named by their directory.
        line = line.replace("@iodir@", "io")
        if line and "@" not in line:
            lines.append(line)
    return lines


def subfolders(src, folder_name):
    """`folder_name` and the sub-folders its testlist names (threads/pt2pt,
    errors/comm...), depth first."""
    out = [folder_name]
    for line in testlist_lines(os.path.join(src, folder_name)):
        words = line.split()
        if len(words) == 1 and os.path.isdir(os.path.join(src, folder_name, words[0])):
            out += subfolders(src, f"{folder_name}/{words[0]}")
    return out


def parse_testlist(folder):
    """Entries of the folder's testlist(.in): dicts with name, ranks, args,
    envs, mpiexecargs, time_limit, xfail, result_test, line."""
    entries = []
    for line in testlist_lines(folder):
        words = line.split()
        if len(words) < 2 or not words[1].isdigit():
            continue  # a sub-folder (see `subfolders`), or a malformed line
        e = {"name": words[0], "ranks": int(words[1]), "args": [], "envs": [], "mpiexecargs": [],
             "time_limit": None, "xfail": None, "result_test": None, "line": line}
        for w in words[2:]:
            if w.startswith("arg="):
                e["args"].append(w[4:])
            elif w.startswith("env="):
                e["envs"].append(w[4:])
            elif w.startswith("mpiexecarg="):
                e["mpiexecargs"].append(w[len("mpiexecarg="):])
            elif w.startswith("timeLimit="):
                e["time_limit"] = int(w[len("timeLimit="):])
            elif w.startswith("xfail="):
                e["xfail"] = w[len("xfail="):]
            elif w.startswith("resultTest="):
                e["result_test"] = w[len("resultTest="):]
        entries.append(e)
    return entries


def key(folder_name, e):
    extra = " ".join(e["args"] + [f"env:{x}" for x in e["envs"]])
    return f"{folder_name}/{e['name']} {e['ranks']}" + (f" {extra}" if extra else "")


class Builder:
    def __init__(self, src, mpicc, out):
        self.src, self.mpicc, self.out = src, mpicc, out
        self.includes = [f"-I{HERE}", f"-I{src}/include", f"-I{src}/dtpools/include"]
        self.libs = None

    def util(self):
        """The objects of the utility libraries (mtest, dtypes), built once."""
        if self.libs is not None:
            return self.libs
        os.makedirs(os.path.join(self.out, "util"), exist_ok=True)
        conf = os.path.join(self.src, "dtpools", "dtpoolsconf.h")
        if not os.path.exists(conf):
            shutil.copy(os.path.join(HERE, "dtpoolsconf.h"), conf)
        objs = []
        dtpools = [f"dtpools/src/{n}" for n in sorted(os.listdir(os.path.join(self.src, "dtpools", "src")))
                   if n.endswith(".c")]
        for name in ["util/mtest.c", "util/mtest_common.c", "util/dtypes.c", "util/mtest_thread.c", *dtpools]:
            obj = os.path.join(self.out, "util", os.path.basename(name)[:-2] + ".o")
            src = os.path.join(self.src, name)
            if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
                r = subprocess.run([self.mpicc, "-O1", "-w", *self.includes, "-c", src, "-o", obj],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    say(f"check-mpich: cannot build {name}:\n{r.stderr[-2000:]}")
                    sys.exit(1)
            objs.append(obj)
        self.libs = objs
        return objs

    def program(self, folder_name, prog, rules):
        """The program's path, built if needed; None and the error if it
        does not compile."""
        folder = os.path.join(self.src, folder_name)
        rule = rules.get(prog, {})
        sources = (rule.get("SOURCES") or f"{prog}.c").split()
        sources = [os.path.join(folder, s) for s in sources if s.endswith(".c")]
        if not sources or not all(os.path.exists(s) for s in sources):
            return None, "no source"
        exe = os.path.join(self.out, folder_name, prog)
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        if os.path.exists(exe) and all(os.path.getmtime(exe) >= os.path.getmtime(s) for s in sources):
            return exe, None
        flags = shlex.split(rule.get("CPPFLAGS", "")) + shlex.split(rule.get("CFLAGS", ""))
        flags = [f for f in flags if not f.startswith("$(")]
        ldadd = [f for f in shlex.split(rule.get("LDADD", "")) if f.startswith("-l")]
        thread_obj = [o for o in self.util() if o.endswith("mtest_thread.o")]
        other = [o for o in self.util() if not o.endswith("mtest_thread.o")]
        cmd = [self.mpicc, "-O1", "-w", *self.includes, *flags, *sources, *other, *thread_obj,
               "-o", exe, "-lm", "-lpthread", *ldadd]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "does not compile: " + " ".join(r.stderr.strip().splitlines()[-3:])[-300:]
        return exe, None


def run_entry(exe, e, mpiexec, env_extra, timeout_scale):
    limit = (e["time_limit"] or 180) * timeout_scale
    env = dict(os.environ)
    env.update(env_extra)
    for kv in e["envs"]:
        k, _, v = kv.partition("=")
        env[k] = v
    env["MPIEXEC_TIMEOUT"] = str(int(limit))
    cmd = [mpiexec, *e["mpiexecargs"], "-n", str(e["ranks"]), exe, *e["args"]]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=os.path.dirname(exe), capture_output=True, text=True, errors="replace",
                           timeout=limit + 10, stdin=subprocess.DEVNULL, env=env)
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as t:
        # Past mpiexec's own time limit: the harness killed it.
        rc, out = -9, ((t.stdout or b"").decode(errors="replace") if isinstance(t.stdout, bytes) else (t.stdout or ""))
    seconds = time.monotonic() - start
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    if e["result_test"] in ("TestStatus", "TestErrFatal"):
        ok = rc != 0 and rc != -9
    elif e["result_test"] == "TestStatusNoErrors":
        ok = rc != 0 and "No Errors" in lines
    else:
        ok = rc == 0 and lines and all(re.fullmatch(r"No [Ee]rrors", l) for l in lines)
    why = "" if ok else f"exit {rc}" + (" (timed out)" if rc in (124, -9) else "") + (": " + " | ".join(lines[:3])[:300] if lines else ": no output")
    return ok, why, seconds


# What a failure's output says, and the reason written for it.
REASONS = [
    (r"MPI_(Win_|Alloc_mem|Free_mem|Put|Get|Accumulate|Rget|Rput)", "RMA is not implemented (issue 18)"),
    (r"MPI_File_|MPI_Register_datarep", "MPI-IO is not implemented (issue 19)"),
    (r"MPI_Neighbor_\w+_init: not implemented",
     "persistent neighborhood collectives (MPI_Neighbor_*_init) are not implemented (issue 17)"),
    (r"MPI_\w+_init: not implemented", "persistent collectives are not implemented (issue 17)"),
    (r"not available on intercommunicators", "nonblocking collectives on intercommunicators (issue 17)"),
    (r"MPI_(Type|Win)_(create|free|set|get|delete)_(keyval|attr)", "datatype and window attributes (issue 17)"),
    (r"MPI_Comm_spawn|MPI_Open_port|MPI_Comm_connect|MPI_Comm_accept|MPI_Publish", "dynamic processes are not implemented"),
    (r"MPI_T_", "MPI_T variables (issue 17)"),
    (r"not implemented in oxmpi yet", "a function not implemented yet (issue 17)"),
]


def reason_for(why):
    for pattern, reason in REASONS:
        if re.search(pattern, why):
            return reason
    return "bug: " + why


def read_expected(path):
    expected = {}
    if not os.path.exists(path):
        return expected
    for raw in open(path):
        line = raw.rstrip("\n")
        if not line or line.startswith("#") or ": " not in line:
            continue
        k, _, verdict = line.partition(": ")
        expected[k] = verdict
    return expected


MODE_ORDER = ["oxmpi", "ld_library_path", "ld_preload", "mpich"]


def folder_table(counts):
    """Rows of a Markdown table: one folder per row, one column per mode,
    `passed/run` in each cell (MPICH beside oxmpi's modes)."""
    modes = [m for m in MODE_ORDER if any(k[0] == m for k in counts)]
    modes += sorted({k[0] for k in counts} - set(modes))
    folders = sorted({k[1] for k in counts})
    rows = ["| folder | " + " | ".join(modes) + " |", "| --- |" + " --- |" * len(modes)]
    totals = {m: [0, 0, 0] for m in modes}
    for folder in folders:
        cells = []
        for m in modes:
            p, f, x = counts.get((m, folder), [0, 0, 0])
            for i, v in enumerate((p, f, x)):
                totals[m][i] += v
            cells.append(f"{p}/{p + f}" + (f" [{x}]" if x else ""))
        rows.append(f"| {folder} | " + " | ".join(cells) + " |")
    rows.append("| **all** | " + " | ".join(
        f"**{t[0]}/{t[0] + t[1]}**" + (f" [{t[2]}]" if t[2] else "") for t in totals.values()) + " |")
    return rows


def behind_mpich(results_all):
    """For each oxmpi mode, the entries MPICH passes that fail there."""
    mpich = {k for k, verdict, _ in results_all.get("mpich", []) if verdict == "pass"}
    behind = {}
    if "mpich" not in results_all:
        return behind
    for mode, results in results_all.items():
        if mode != "mpich":
            behind[mode] = [k for k, verdict, _ in results if verdict == "fail" and k in mpich]
    return behind


def write_report(path, table, results_all, expected, mode_seconds):
    """docs/mpich-suite.md: the per-folder table, each mode's time, the
    entries MPICH passes that oxmpi fails, and every failure, each with its
    expected verdict's reason."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    lines = [
        "# MPICH's test suite on oxmpi",
        "",
        "Written by `make check-mpich` (tools/mpich_suite.py). MPICH 4.0.2's test programs, built",
        "with oxmpi's `mpicc` (**oxmpi**) and with `mpicc.mpich`, the latter run on oxmpi through",
        "`LD_LIBRARY_PATH` and `LD_PRELOAD` (the drop-in modes) and on Debian's MPICH itself",
        "(**mpich**, Hydra, ch4:ucx), every entry with MPICH's pass rule and `MPIEXEC_TIMEOUT`",
        "scaled as the Makefile says. Expected results and the reason for every expected failure:",
        "[tools/mpich_suite/expected.txt](../tools/mpich_suite/expected.txt).",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {commit}",
        f"- machine: {os.cpu_count()} CPUs; timeouts are the entries' own, so a loaded machine",
        "  shows as timeouts (in any mode)",
        "",
        "- time per mode (building and running): " + ", ".join(
            f"{m} {t / 60:.1f} min" for m, t in mode_seconds.items()),
        "",
        "Cells: entries passed / entries run; in brackets, entries MPICH marks `xfail` (reported,",
        "not run).",
        "",
    ] + table + ["", "## Entries MPICH passes that fail on oxmpi", ""]
    behind = behind_mpich(results_all)
    if not behind:
        lines.append("(MPICH was not run.)")
    for mode, keys in behind.items():
        lines.append(f"- **{mode}**: " + (", ".join(f"`{k}`" for k in keys) if keys else "none"))
    lines += ["", "## Failures", ""]
    for mode in MODE_ORDER:
        fails = [(k, why) for k, verdict, why in results_all.get(mode, []) if verdict == "fail"]
        if not fails:
            continue
        lines.append(f"**{mode}** ({len(fails)}):")
        lines.append("")
        for k, why in fails:
            want = expected.get(k, "")
            note = f" — expected: {want}" if want.startswith("fail") else ""
            lines.append(f"- `{k}`: {why[:200]}{note}")
        lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folders", default=DEFAULT_FOLDERS)
    ap.add_argument("--modes", default="oxmpi")
    ap.add_argument("--prefix", default=os.path.join(ROOT, "build", "stage"))
    ap.add_argument("--expected", default=os.path.join(HERE, "expected.txt"))
    ap.add_argument("--write-expected", action="store_true")
    ap.add_argument("--report", help="write the per-folder table and the failures here (Markdown)")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--only", nargs="*", default=[], help="entries whose key starts with one of these")
    ap.add_argument("--subset", default=None, help="a file of entry keys: run only those")
    args = ap.parse_args()

    src = fetch_source()
    mpiexec = os.path.join(args.prefix, "bin", "mpiexec")
    expected = read_expected(args.expected)
    subset = None
    if args.subset:
        subset = {l.strip() for l in open(args.subset) if l.strip() and not l.startswith("#")}
    regressions, newly, counts, results_all, mode_seconds = [], [], {}, {}, {}
    for mode in args.modes.split(","):
        mode_start = time.monotonic()
        run_with = mpiexec
        if mode == "oxmpi":
            mpicc, env_extra = os.path.join(args.prefix, "bin", "mpicc"), {}
        elif mode == "mpich":
            # MPICH itself, for the counts beside oxmpi's.
            mpicc, run_with, env_extra = shutil.which("mpicc.mpich"), shutil.which("mpiexec.mpich"), {}
            if not mpicc or not run_with:
                say("check-mpich: mode mpich skipped: mpicc.mpich or mpiexec.mpich is not installed")
                continue
        else:
            mpicc = shutil.which("mpicc.mpich")
            if not mpicc:
                say(f"check-mpich: mode {mode} skipped: mpicc.mpich is not installed (Debian package libmpich-dev)")
                continue
            lib = os.path.join(args.prefix, "lib")
            env_extra = ({"LD_LIBRARY_PATH": lib} if mode == "ld_library_path"
                         else {"LD_PRELOAD": os.path.join(lib, "libmpi.so.12")})
        out = os.path.join(ROOT, "build", "mpich-suite", mode)
        builder = Builder(src, mpicc, out)
        results = []
        folders = [f for top in args.folders.split(",") for f in subfolders(src, top)]
        for folder_name in folders:
            folder = os.path.join(src, folder_name)
            rules = makefile_rules(folder)
            for e in parse_testlist(folder):
                k = key(folder_name, e)
                if args.only and not any(k.startswith(o) for o in args.only):
                    continue
                if subset is not None and k not in subset:
                    continue
                c = counts.setdefault((mode, folder_name), [0, 0, 0])
                if e["xfail"]:
                    results.append((k, "xfail", f"MPICH marks it xfail={e['xfail']}"))
                    c[2] += 1
                    continue
                exe, why = builder.program(folder_name, e["name"], rules)
                if exe is None:
                    ok, seconds = False, 0.0
                else:
                    ok, why, seconds = run_entry(exe, e, run_with, env_extra, args.timeout_scale)
                c[0 if ok else 1] += 1
                results.append((k, "pass" if ok else "fail", why))
                say(f"{'PASS' if ok else 'FAIL'} [{mode}] {k}" + ("" if ok else f": {why}") + f" ({seconds:.1f} s)")
                want = expected.get(k, "")
                if mode != "mpich" and (mode == "oxmpi" or want.startswith("pass")):
                    if want.startswith("pass") and not ok:
                        regressions.append(f"[{mode}] {k}: {why}")
                    if ok and want.startswith("fail"):
                        newly.append(f"[{mode}] {k}")
        results_all[mode] = results
        mode_seconds[mode] = time.monotonic() - mode_start
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.txt"), "w") as f:
            for k, verdict, why in results:
                f.write(f"{k}: {verdict}{(' ' + why) if why and verdict != 'pass' else ''}\n")
    table = folder_table(counts)
    say("\n== per folder: passed of run (xfail entries, not run, in brackets)")
    for line in table:
        say("  " + line)
    say("  time: " + ", ".join(f"{m} {t / 60:.1f} min" for m, t in mode_seconds.items()))
    for mode, keys in behind_mpich(results_all).items():
        say(f"  MPICH passes, {mode} fails: " + (" ".join(keys) if keys else "none"))
    if args.report:
        write_report(args.report, table, results_all, expected, mode_seconds)
        say(f"check-mpich: wrote {args.report}")
    if args.write_expected and "oxmpi" in results_all:
        with open(args.expected, "w") as f:
            f.write("# Expected results of MPICH's test suite on oxmpi (tools/mpich_suite.py),\n"
                    "# one entry per line: `folder/name ranks [args]: pass` or `: fail <reason>`.\n"
                    "# A failure's reason is the missing feature or the bug; edit it by hand.\n")
            for k, verdict, why in results_all["oxmpi"]:
                old = expected.get(k, "")
                if verdict == "pass":
                    f.write(f"{k}: pass\n")
                elif verdict == "xfail":
                    f.write(f"{k}: xfail {why}\n")
                else:
                    reason = old[len("fail "):] if old.startswith("fail ") else reason_for(why)
                    f.write(f"{k}: fail {reason}\n")
        say(f"check-mpich: wrote {args.expected}")
    if newly:
        say(f"\n== {len(newly)} entries pass that are expected to fail (mark them pass):")
        for n in newly:
            say("  " + n)
    if regressions:
        say(f"\n== {len(regressions)} regressions (expected to pass):")
        for r in regressions:
            say("  " + r)
        return 1
    say("check-mpich: no regressions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
