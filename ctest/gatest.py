"""What the Python tests of ctest share: one way to record a check, print it and end with an exit code.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from gatest import check, finish

check() is worded as what must hold ("ok   what" / "FAIL what"); fail_unless() as the failure, printed only
when it happens. finish() exits 1 when a check failed, and also when none was made: a test whose expectations
came out empty proves nothing."""
import sys

failures = []  # the failed checks' words, in order (a test may report them again at its end)
made = 0       # checks made, passed or not


def check(cond, what):
    """Records a check worded as what must hold; prints it; returns cond."""
    global made
    made += 1
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return bool(cond)


def fail_unless(cond, failure):
    """Records a check worded as its failure: printed ("FAIL failure") only when cond is false."""
    global made
    made += 1
    if not cond:
        print("FAIL " + failure)
        failures.append(failure)
    return bool(cond)


def status():
    """1 when a check failed or none was made, else 0; prints one closing line."""
    if made == 0:
        print("FAIL no check was made: the test proves nothing")
        return 1
    print(f"{len(failures)} of {made} checks failed" if failures else f"all {made} checks passed")
    return 1 if failures else 0


def finish():
    """Ends the test with status()."""
    sys.exit(status())
