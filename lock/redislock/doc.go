// Package redislock holds the Redis locks people use, run against real
// Redis (see cluster/redisd) through go-redis: redis-setnx (SET key value
// NX PX ttl, released by comparing the value), redis-watchdog (the same,
// renewed every TTL/3 while held, as Redisson's watchdog does), redlock
// (the Redlock algorithm over independent masters, by go-redsync/redsync),
// and the known-bad redis-del (released by a plain DEL: the oversell of a
// holder that outlived its key).
//
// The locks are not yet in the scenario catalog: the lab runs them in this
// package's tests, against real servers, on the faults that tell them
// apart.
package redislock
