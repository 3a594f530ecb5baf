// Package redislock holds the Redis locks people use, run against real
// Redis (see cluster/redisd) through go-redis: redis-setnx (SET key value
// NX PX ttl, released by comparing the value), redis-watchdog (the same,
// renewed every TTL/3 while held, as Redisson's watchdog does), redlock
// (the Redlock algorithm over independent masters, by go-redsync/redsync),
// and the known-bad redis-del (released by a plain DEL: the oversell of a
// holder that outlived its key), redis-get-del (released by GET, then
// DEL: two commands) and redis-setnx-expire (taken by SETNX, then given
// its expiry by PEXPIRE: two commands) and redis-deaf (its holder told
// only by a renewal's answer) — and, through Exec, a Redis lock of
// anyone's run as a program over the lab's process protocol (EnvRedis).
//
// They keep package lock's contract (lock.Locker, lock.Grant with the
// grant's Value, lock.Options): a Factory is a lock.Factory of the lab's
// Redis clients. Each is described once (Lock, in locks.go: its line, its
// factory, how many masters it takes, what it fails by design, the bug of
// a known-bad one). Package scenarios/redisstore puts them in the scenario
// catalog's runs, and a user's own through locktest.Store("redis").
package redislock
