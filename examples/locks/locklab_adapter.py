"""locklab's process protocol for a Python lock library, in one loop.

An adapter gives serve() what its library does: try to take the lock once,
watch the lock's key for a change (to try again), release, and (if asked to
keep the lease alive: --refresh) renew the lease; serve() answers the lab's
commands on standard input with the grants, releases and errors the
protocol asks for (see locklab's docs/any-language.md).
"""
import os
import signal
import sys
import threading
from urllib.parse import urlparse

ENDPOINT = urlparse(os.environ["LOCKLAB_ENDPOINTS"])  # the client's own link to the cluster
TTL = int(os.environ["LOCKLAB_TTL"])  # lease seconds
KEY = os.environ["LOCKLAB_LOCK"] + "/lock"  # under the lab's prefix, as the lab asks
REFRESH = "--refresh" in sys.argv[1:]


def serve(try_acquire, watch_once, timed_out, release, refresh, lease_id, unavailable=(), wait_bound=TTL):
    """Answers the lab's commands until its standard input closes.

    try_acquire() -> bool takes the lock if it is free; between tries,
    watch_once(key, timeout=wait_bound) waits for a change of the lock's
    key (raising timed_out when none came in wait_bound seconds; None waits
    for as long as it takes, as a library's own blocking acquire may); release() -> bool
    gives it back (False: not held); refresh() renews the lease; lease_id()
    names it. Exceptions of the classes in unavailable are answered as
    "error unavailable" (the outcome is unknown), any other as a plain
    error.
    """
    held = threading.Event()
    stopping = threading.Event()

    def refresher():
        # A third of the TTL apart, while the lock is held.
        while not stopping.wait(TTL / 3):
            if held.is_set():
                try:
                    refresh()
                except Exception as e:  # the next acquire or release tells the lab
                    print("refresh:", e, file=sys.stderr)

    def wait():
        try:
            watch_once(KEY, timeout=wait_bound)
        except timed_out:
            pass

    def answer(line):
        print(line, flush=True)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    if REFRESH:
        threading.Thread(target=refresher, daemon=True).start()
    # Up: the lab takes the silence from now on for waiting, not start-up.
    answer("# ready")
    try:
        for line in sys.stdin:
            try:
                if line.strip() == "acquire":
                    while not try_acquire():
                        wait()
                    held.set()
                    answer("granted key=%s lease=%d" % (KEY, lease_id()))
                elif line.strip() == "release":
                    held.clear()
                    answer("released" if release() else "error not-held the key %s does not hold this lock's value" % KEY)
            except unavailable as e:
                answer("error unavailable %s" % e)
            except Exception as e:
                answer("error %s: %s" % (type(e).__name__, e))
    finally:
        stopping.set()
        if held.is_set():
            try:
                release()
            except Exception:
                pass
