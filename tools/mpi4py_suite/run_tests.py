"""One rank's run of mpi4py's test suite (test/main.py) that records every
test's outcome: run by tools/mpi4py_suite.py under mpiexec as

    python run_tests.py TESTDIR OUTPREFIX [main.py arguments, test names]

Each rank writes OUTPREFIX.<rank> with one line per test, `id outcome`
(outcome: pass, fail, error, skip, xfail, xpass), as soon as each test
ends (a rank that hangs or dies keeps what it ran), then `#done`, and
exits 0 whatever the tests' outcomes.
"""
import os
import sys
import unittest

out = None


def record(test, outcome):
    global out
    if out is None:
        from mpi4py import MPI

        out = open(f"{outprefix}.{MPI.COMM_WORLD.Get_rank()}", "w", encoding="utf-8")
    out.write(f"{test.id()} {outcome}\n")
    out.flush()


class Recording(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        record(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        record(test, "fail")

    def addError(self, test, err):
        super().addError(test, err)
        record(test, "error")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        record(test, "skip")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        record(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        record(test, "xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            record(test, "fail" if failed else "error")


class Runner(unittest.TextTestRunner):
    resultclass = Recording

    def run(self, test):
        result = super().run(test)
        if out is not None:
            out.write("#done\n")
            out.flush()
        return result


# mpi4py.futures' workers import the parent's main module under another
# name (test_util_pool): only a run as the main program runs the tests.
if __name__ == "__main__":
    testdir, outprefix = sys.argv[1], sys.argv[2]
    sys.argv = [os.path.join(testdir, "main.py")] + sys.argv[3:]
    sys.path.insert(0, testdir)
    sys.dont_write_bytecode = True
    import main  # mpi4py's own test driver

    # Exit 0 after failed tests too: the outcome files tell them, and a
    # launcher ends the whole job when one rank exits non-zero, which would
    # cut the other ranks' runs short. A non-zero exit is then a crash.
    try:
        main.main(module=None, testRunner=Runner)
    except SystemExit:
        pass
