#!/usr/bin/python3
"""etcd3gw's Lock (Debian's python3-etcd3gw 2.0.0: etcd's HTTP/JSON gateway) over locklab's process protocol.

    locklab run --lock "exec:/usr/bin/python3 examples/locks/etcd3gw/lock.py"            # the library as it is
    locklab run --lock "exec:/usr/bin/python3 examples/locks/etcd3gw/lock.py --refresh"  # plus a thread renewing the lease

etcd3gw.Lock.acquire tries once (a new lease and a Txn that puts the key if
it is absent) and says whether it got the lock; the adapter waits between
tries with the library's watch_once on the lock's key.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from locklab_adapter import ENDPOINT, KEY, TTL, serve  # noqa: E402

from etcd3gw import exceptions  # noqa: E402
from etcd3gw.client import Etcd3Client  # noqa: E402
from etcd3gw.lock import Lock  # noqa: E402

client = Etcd3Client(host=ENDPOINT.hostname, port=ENDPOINT.port, api_path="/v3/")  # etcd 3.5 on serves /v3/ only
lock = Lock("lock", ttl=TTL, client=client)
lock.key = KEY  # the lab's prefix, not the library's /locks/

serve(try_acquire=lock.acquire, watch_once=client.watch_once, timed_out=exceptions.WatchTimedOut,
      release=lock.release, refresh=lock.refresh, lease_id=lambda: lock.lease.id,
      unavailable=(exceptions.ConnectionFailedError, exceptions.ConnectionTimeoutError))
