"""A kuota command under cProfile, for the benches that start kuota
processes (``--profile``): ``python -c PROFILED OUT kuota-args...`` writes
the process's stats to OUT when it stops (SIGTERM included).

Wall-clock timer: a CPU-time timer is a system call per function event and
inflates call-heavy code tenfold; on a loaded machine the wall time of a
system call also counts the waits for a core. Only the main thread is
profiled (serve's loop, the controller's manager)."""

PROFILED = """
import cProfile, os, runpy, sys
out = sys.argv[1]
sys.argv = ["kuota", *sys.argv[2:]]
prof = cProfile.Profile()
_exit = os._exit
def _dump_and_exit(code):  # (kuota controller ends with os._exit)
    prof.disable()
    prof.dump_stats(out)
    _exit(code)
os._exit = _dump_and_exit
prof.enable()
try:
    runpy.run_module("kuota.cli.main", run_name="__main__")
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""
