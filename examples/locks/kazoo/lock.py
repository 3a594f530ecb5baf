"""kazoo's Lock (Debian's python3-kazoo) under locklab's process protocol, on ZooKeeper.

Run it with --store zookeeper: the lab gives it LOCKLAB_ZOOKEEPER (the client's
own links to the servers, host:port, its member's first), LOCKLAB_LOCK (the
lock's path) and LOCKLAB_TTL (the session timeout in seconds). The lock is the
library's as shipped: an ephemeral-sequential node under the path, each waiter
watching the one before its own, the node gone with the session. The adapter
answers with the node's path and its creation zxid as the fencing token (the
node's own, read back from the server).
"""
import os
import signal
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss, SessionExpiredError, NoNodeError

HOSTS = os.environ["LOCKLAB_ZOOKEEPER"]
TTL = float(os.environ["LOCKLAB_TTL"])
PATH = os.environ["LOCKLAB_LOCK"]


def main():
    # randomize_hosts=False: the client keeps to its member while it serves.
    zk = KazooClient(hosts=HOSTS, timeout=TTL, randomize_hosts=False)
    lk = None

    def answer(line):
        print(line, flush=True)

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
                    answer("granted key=%s token=%d" % (node, stat.czxid))
                elif line.strip() == "release":
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
