"""A PostgreSQL advisory lock through psycopg2 (Debian's python3-psycopg2),
under locklab's process protocol.

Run it with --store postgres: the lab gives it LOCKLAB_POSTGRES (a libpq
connection string of the client's own link, with the session settings every
client gets: its idle timeouts), LOCKLAB_LOCK (the advisory key, a bigint)
and LOCKLAB_TTL. The lock is what an application writes with psycopg2: one
connection in autocommit, pg_advisory_lock to take it, pg_advisory_unlock to
give it back, a sequence's nextval taken while held as the fencing token. A
session kept alive while it holds (--keepalive: a SELECT 1 a third of the
idle timeout apart) is what survives a server that ends idle sessions.
"""
import os
import signal
import sys
import threading

import psycopg2

DSN = os.environ["LOCKLAB_POSTGRES"]
KEY = int(os.environ["LOCKLAB_LOCK"])
TTL = float(os.environ["LOCKLAB_TTL"])
KEEPALIVE = "--keepalive" in sys.argv[1:]
SEQ = "locklab_fence_%x" % (KEY & 0xFFFFFFFFFFFFFFFF)


def main():
    state = {"conn": None}
    held = threading.Event()
    stopping = threading.Event()
    mu = threading.Lock()  # one statement on the connection at a time

    def conn():
        c = state["conn"]
        if c is None or c.closed:
            c = psycopg2.connect(DSN)
            c.autocommit = True
            with c.cursor() as cur:
                try:
                    cur.execute("CREATE SEQUENCE IF NOT EXISTS " + SEQ)
                except psycopg2.Error:
                    pass  # another client made it at the same moment
            state["conn"] = c
        return c

    def keepalive():
        while not stopping.wait(TTL / 3):
            if held.is_set():
                try:
                    with mu, state["conn"].cursor() as cur:
                        cur.execute("SELECT 1")
                except Exception as e:  # the next release tells the lab
                    print("keepalive:", e, file=sys.stderr)

    def answer(line):
        print(line, flush=True)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    if KEEPALIVE:
        threading.Thread(target=keepalive, daemon=True).start()
    answer("# ready")  # up: the lab takes the silence from now on for waiting
    try:
        for line in sys.stdin:
            cmd = line.strip()
            try:
                if cmd == "acquire":
                    c = conn()
                    with c.cursor() as cur:
                        cur.execute("SELECT pg_advisory_lock(%s)", (KEY,))
                        cur.execute("SELECT nextval(%s), pg_backend_pid()", (SEQ,))
                        token, pid = cur.fetchone()
                    held.set()
                    answer("granted key=%d token=%d lease=%d" % (KEY, token, pid))
                elif cmd == "release":
                    held.clear()
                    with mu, conn().cursor() as cur:
                        cur.execute("SELECT pg_advisory_unlock(%s)", (KEY,))
                        ok = cur.fetchone()[0]
                    answer("released" if ok else "error not-held the session does not hold the lock")
            except (psycopg2.OperationalError, psycopg2.InterfaceError) as e:
                # The connection broke: the session, and every lock it held,
                # went with it.
                state["conn"] = None
                what = "expired" if cmd == "acquire" else "not-held"
                answer("error %s %s" % (what, str(e).strip().replace("\n", " ")))
            except Exception as e:
                answer("error %s: %s" % (type(e).__name__, str(e).strip().replace("\n", " ")))
    finally:
        stopping.set()


if __name__ == "__main__":
    main()
