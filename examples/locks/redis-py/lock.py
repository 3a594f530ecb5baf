"""redis-py's Lock (Debian's python3-redis) under locklab's process protocol, on Redis.

Run it with --store redis: the lab gives it LOCKLAB_REDIS (the client's own
link to the primary, host:port), LOCKLAB_LOCK (the key) and LOCKLAB_TTL (the
key's expiry in seconds). The lock is the library's as shipped: SET NX PX with
a random token, retried every 50 ms, released by a script that deletes the key
only if it still holds the token. It renews nothing and gives no fencing
token; --extend adds a thread that renews the key (Lock.reacquire) a third of
the TTL apart while it is held, as a user who wants a watchdog writes one.
"""
import os
import signal
import sys
import threading

import redis
from redis.exceptions import ConnectionError, LockNotOwnedError, TimeoutError

HOST, PORT = os.environ["LOCKLAB_REDIS"].split(",")[0].rsplit(":", 1)
TTL = float(os.environ["LOCKLAB_TTL"])
KEY = os.environ["LOCKLAB_LOCK"]
EXTEND = "--extend" in sys.argv[1:]


def main():
    r = redis.Redis(host=HOST, port=int(PORT))
    lk = r.lock(KEY, timeout=TTL, sleep=0.05, thread_local=False)
    held = threading.Event()
    stopping = threading.Event()
    mu = threading.Lock()  # one request of the lock's at a time

    def extender():
        while not stopping.wait(TTL / 3):
            if held.is_set():
                try:
                    with mu:
                        lk.reacquire()
                except Exception as e:  # the next release tells the lab
                    print("reacquire:", e, file=sys.stderr)

    def answer(line):
        print(line, flush=True)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    if EXTEND:
        threading.Thread(target=extender, daemon=True).start()
    answer("# ready")  # up: the lab takes the silence from now on for waiting
    try:
        for line in sys.stdin:
            try:
                if line.strip() == "acquire":
                    lk.acquire(blocking=True)
                    held.set()
                    answer("granted key=%s value=%s" % (KEY, lk.local.token.decode()))
                elif line.strip() == "release":
                    held.clear()
                    with mu:
                        lk.release()
                    answer("released")
            except LockNotOwnedError as e:
                answer("error not-held %s" % e)
            except (ConnectionError, TimeoutError) as e:
                answer("error unavailable %s" % e)
            except Exception as e:
                answer("error %s: %s" % (type(e).__name__, e))
    finally:
        stopping.set()
        if held.is_set():
            try:
                lk.release()
            except Exception:
                pass


if __name__ == "__main__":
    main()
