// Package redisstore runs the Redis locks (package lock/redislock) in the
// scenarios' runner: importing it registers Redis as a scenarios.Backend,
// so that a run can name redis-setnx, redis-watchdog, redlock and the
// known-bad redis-del. A program of etcd locks alone (a team's locktest
// gate) does not import it and links no Redis client.
//
// Each configuration runs on redis-server started for it — a primary and
// two replicas, or Redlock's five independent masters — or on a Redis of
// the user's own (scenarios.Config.Redis).
package redisstore
