#!/usr/bin/python3
"""python-etcd3's Lock with a watchdog that, when its lease is gone, takes a
new one and puts the lock's key back on it, whoever's the key is now: a
holder paused past its lease writes over the next holder's key when it
resumes (a known-bad lock of the lab's tests; run with --refresh)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "locks"))
from locklab_adapter import ENDPOINT, KEY, TTL, serve  # noqa: E402

import etcd3  # noqa: E402
from etcd3 import exceptions  # noqa: E402

client = etcd3.client(host=ENDPOINT.hostname, port=ENDPOINT.port)
lock = etcd3.Lock("lock", ttl=TTL, etcd_client=client)
lock.key = KEY


def refresh():
    if lock.refresh()[0].TTL <= 0:  # the lease is gone: the key is put back (the bug)
        lock.lease = client.lease(TTL)
        client.put(KEY, lock.uuid, lease=lock.lease)


serve(try_acquire=lambda: lock.acquire(timeout=0), watch_once=client.watch_once, timed_out=exceptions.WatchTimedOut,
      release=lock.release, refresh=refresh, lease_id=lambda: lock.lease.id,
      unavailable=(exceptions.ConnectionFailedError, exceptions.ConnectionTimeoutError))
