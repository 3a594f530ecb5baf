// Package locks holds adapters that put real lock libraries, written by
// others (Debian's and npm's; etcd's, Redis', ZooKeeper's and PostgreSQL's), through locklab's
// process protocol (docs/locks-people-run.md); it has no Go API. Its
// files:
//
//   - locklab_adapter.py: the protocol's loop for a Python library, once —
//     answers acquire and release, waits between tries, and (--refresh)
//     renews the lease while the lock is held;
//   - python-etcd3/lock.py: python-etcd3's Lock (Debian's python3-etcd3)
//     on that loop;
//   - etcd3gw/lock.py: etcd3gw's Lock (Debian's python3-etcd3gw, etcd's
//     HTTP/JSON gateway) on that loop;
//   - node-etcd3/lock.js: npm's etcd3 Lock under Node.js, its modules
//     pinned by package-lock.json (npm ci --prefix examples/locks/node-etcd3);
//   - redis-py/lock.py: redis-py's Lock (Debian's python3-redis) on Redis
//     (locklab run --store redis), as shipped and with --extend;
//   - node-redlock/lock.js: npm's redlock (Redlock over independent
//     masters) under Node.js (locklab run --store redlock), its modules
//     pinned by package-lock.json;
//   - kazoo/lock.py: kazoo's Lock (Debian's python3-kazoo) on ZooKeeper
//     (locklab run --store zookeeper), its node's zxid as the token;
//   - psycopg2/lock.py: a PostgreSQL advisory lock through psycopg2
//     (Debian's python3-psycopg2; locklab run --store postgres), as an
//     application writes it and with --keepalive;
//   - locks_test.go: runs each adapter (the Python ones as the library is
//     and with --refresh) through the lessons that tell them apart and holds each
//     to the table in docs/locks-people-run.md; it skips with one line where the libraries
//     are not installed.
package locks
