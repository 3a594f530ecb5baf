#!/usr/bin/python3
"""python-etcd3's Lock (Debian's python3-etcd3 0.12.0) over locklab's process protocol.

    locklab run --lock "exec:/usr/bin/python3 examples/locks/python-etcd3/lock.py"            # the library as it is
    locklab run --lock "exec:/usr/bin/python3 examples/locks/python-etcd3/lock.py --refresh"  # plus a thread renewing the lease

etcd3.Lock.acquire cannot wait with the tenacity Debian ships (8.2): its wait
callback takes two arguments where tenacity passes one, so any acquire that
has to wait raises TypeError. The adapter therefore tries once
(acquire(timeout=0) never calls the callback) and waits as the library's
acquire(timeout=None) does: watch_once on the lock's key with no timeout, so
what the lab judges is the wait users get (a watch from no start revision
misses a delete that lands between the failed try and the watch, and waits
for the next change of the key).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from locklab_adapter import ENDPOINT, KEY, TTL, serve  # noqa: E402

import etcd3  # noqa: E402
from etcd3 import exceptions  # noqa: E402

client = etcd3.client(host=ENDPOINT.hostname, port=ENDPOINT.port)
lock = etcd3.Lock("lock", ttl=TTL, etcd_client=client)
lock.key = KEY  # the lab's prefix, not the library's /locks/

serve(try_acquire=lambda: lock.acquire(timeout=0), watch_once=client.watch_once, timed_out=exceptions.WatchTimedOut,
      release=lock.release, refresh=lock.refresh, lease_id=lambda: lock.lease.id,
      unavailable=(exceptions.ConnectionFailedError, exceptions.ConnectionTimeoutError), wait_bound=None)
