"""kazoo's Lock (Debian's python3-kazoo) under locklab's process protocol, on ZooKeeper.

Run it with --store zookeeper: the lab gives it LOCKLAB_ZOOKEEPER (the client's
own links to the servers, host:port, its member's first), LOCKLAB_LOCK (the
lock's path) and LOCKLAB_TTL (the session timeout in seconds). The lock is the
library's as shipped: an ephemeral-sequential node under the path, each waiter
watching the one before its own, the node gone with the session. The adapter
answers with the node's path and its creation zxid as the fencing token (the
node's own, read back from the server).

--tell=suspended or --tell=lost answers each grant with tells=lost and prints
"lost" (the protocol's Grant.Lost) when kazoo's connection state says so:
suspended, at SUSPENDED (the connection is gone: the session, and the lock
with it, may end any moment), as kazoo's documentation asks of a lock's
holder; lost, only at LOST (the session expired, which a client cut off from
the ensemble hears once it reconnects).
"""
import argparse
import os
import signal
import sys
import threading

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss, SessionExpiredError, NoNodeError

HOSTS = os.environ["LOCKLAB_ZOOKEEPER"]
TTL = float(os.environ["LOCKLAB_TTL"])
PATH = os.environ["LOCKLAB_LOCK"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tell", choices=["suspended", "lost"])
    args = parser.parse_args()
    # randomize_hosts=False: the client keeps to its member while it serves.
    zk = KazooClient(hosts=HOSTS, timeout=TTL, randomize_hosts=False)
    lk = None
    out = threading.Lock()  # kazoo's listener prints from its own thread
    held = threading.Event()

    def answer(line):
        with out:
            print(line, flush=True)

    def listen(state):
        told = state == KazooState.LOST or (args.tell == "suspended" and state == KazooState.SUSPENDED)
        with out:  # never between a grant's held.set() and its answer
            if args.tell and told and held.is_set():
                held.clear()
                print("lost", flush=True)

    zk.add_listener(listen)
    tells = " tells=lost" if args.tell else ""

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    zk.start(timeout=30)
    lk = zk.Lock(PATH)
    answer("# ready")  # up: the lab takes the silence from now on for waiting
    try:
        for line in sys.stdin:
            try:
                if line.strip() == "acquire":
                    lk.acquire(blocking=True)
                    node = PATH + "/" + lk.node
                    stat = zk.exists(node)
                    if stat is None:
                        answer("error not-held %s is gone" % node)
                        continue
                    with out:
                        held.set()
                        print("granted key=%s token=%d%s" % (node, stat.czxid, tells), flush=True)
                elif line.strip() == "release":
                    held.clear()
                    lk.release()
                    answer("released")
            except NoNodeError as e:
                answer("error not-held %s" % e)
            except SessionExpiredError as e:
                answer("error expired %s" % type(e).__name__)
            except ConnectionLoss as e:
                answer("error unavailable %s" % type(e).__name__)
            except Exception as e:
                answer("error %s: %s" % (type(e).__name__, e))
    finally:
        try:
            zk.stop()
            zk.close()
        except Exception:
            pass


if __name__ == "__main__":
    main()
