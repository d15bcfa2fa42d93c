#!/usr/bin/env python3
"""The layer rule of src/lib.rs, checked: a module may use only the layers
below it. Reads every Rust file under src/ and reports each path into a
higher layer (`crate::x`, `oxmpi::x`, or `super::` climbing out of the
layer), with file and line. Exit 0 when there is none, 1 otherwise.

    tools/check_layers.py [ROOT]     check ROOT/src (default: the repository)
    tools/check_layers.py --self-test    prove that it finds a violation
"""
import os
import re
import sys
import tempfile

# Lowest first. A layer may use the ones before it in this list.
LAYERS = ["mpi_abi", "config", "bootstrap", "transport", "core", "abi", "std_abi"]
# The launcher is a program of its own beside the library: it may use these.
LAUNCHER_USES = {"mpi_abi", "config", "bootstrap", "transport"}

PATH = re.compile(r"\b(crate|oxmpi)::([a-z_][a-z0-9_]*)")
SUPERS = re.compile(r"\b((?:super::)+)([a-z_][a-z0-9_]*)")


def code_of(line):
    """The line without its `//` comment (string contents are kept: a path
    inside a string literal is rare and then worth a look)."""
    at = line.find("//")
    return line if at < 0 else line[:at]


def module_path(rel):
    """src-relative file -> its module path as a list (src/core/p2p/mod.rs ->
    ['core', 'p2p'])."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def owner(rel):
    """Which layer (or 'launcher', or None for lib.rs) a file belongs to."""
    parts = rel.split(os.sep)
    if parts[0] == "bin":
        return "launcher"
    first = parts[0][:-3] if parts[0].endswith(".rs") else parts[0]
    return first if first in LAYERS else None


def allowed(layer, target):
    if target not in LAYERS:
        return True  # std paths, macros' helpers, crate-level items
    if layer == "launcher":
        return target in LAUNCHER_USES
    return LAYERS.index(target) <= LAYERS.index(layer)


def check(src):
    problems = []
    for dirpath, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(".rs"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, src)
            layer = owner(rel)
            if layer is None:
                continue
            module = module_path(rel)
            with open(full, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    code = code_of(line)
                    if re.search(r"\b(crate|oxmpi)::\{", code):
                        problems.append(f"src/{rel}:{lineno}: a grouped `crate::{{...}}` path; "
                                        f"write one `use` per layer so this check can read it")
                    targets = [m.group(2) for m in PATH.finditer(code)
                               if not (layer == "launcher") or m.group(1) == "oxmpi"]
                    for m in SUPERS.finditer(code):
                        depth = m.group(1).count("super::")
                        # A file's own module is `module`; mod.rs files are
                        # their directory's module, so super climbs from there.
                        base = module[:len(module) - depth]
                        if layer != "launcher" and len(base) == 0:
                            targets.append(m.group(2))
                    for target in targets:
                        if not allowed(layer, target):
                            problems.append(
                                f"src/{rel}:{lineno}: {layer} uses {target}, a higher layer: {line.strip()}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, "src")
        os.makedirs(os.path.join(src, "transport", "shm"))
        os.makedirs(os.path.join(src, "core"))
        with open(os.path.join(src, "transport", "shm", "ring.rs"), "w") as f:
            f.write("use crate::mpi_abi::constants::*;\n// crate::abi in a comment\n"
                    "fn f() { crate::core::runtime::lock(); }\n")
        with open(os.path.join(src, "core", "comm.rs"), "w") as f:
            f.write("use crate::transport::ProcessId;\nuse super::super::abi::x;\n")
        found = check(src)
        expected = ["src/transport/shm/ring.rs:3", "src/core/comm.rs:2"]
        ok = len(found) == 2 and all(any(p.startswith(e + ":") for p in found) for e in expected)
        print("\n".join(found))
        print("self-test:", "ok" if ok else "FAILED")
        return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.join(root, "src"))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} use(s) of a higher layer; the order is {' < '.join(LAYERS)} (see src/lib.rs)")
        return 1
    print(f"layers respected: {' < '.join(LAYERS)}; the launcher uses {', '.join(sorted(LAUNCHER_USES))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
