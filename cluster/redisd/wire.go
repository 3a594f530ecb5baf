package redisd

import (
	"bytes"
	"slices"
	"strings"

	"github.com/tidwall/redcon"
)

// maxPending bounds the bytes of one command a wire reader keeps while it
// waits for the rest: a client that sends more than that in one command
// (or what is not RESP at all) is no longer read, and its reads tell
// nothing from then on.
const maxPending = 1 << 20

// readOnly are the commands that change no key: every other command a
// client sends is taken for a write (a script may or may not write; the
// lab cannot tell, so it counts as one).
var readOnly = map[string]bool{
	"GET": true, "MGET": true, "GETRANGE": true, "STRLEN": true, "EXISTS": true, "TYPE": true,
	"TTL": true, "PTTL": true, "EXPIRETIME": true, "PEXPIRETIME": true, "KEYS": true, "SCAN": true,
	"DBSIZE": true, "PING": true, "ECHO": true, "HELLO": true, "AUTH": true, "CLIENT": true,
	"SELECT": true, "INFO": true, "COMMAND": true, "TIME": true, "SCRIPT": true, "WATCH": true,
	"UNWATCH": true, "READONLY": true, "READWRITE": true, "OBJECT": true, "EVAL_RO": true,
	"EVALSHA_RO": true, "HGET": true, "HGETALL": true, "HEXISTS": true, "SMEMBERS": true,
	"SISMEMBER": true, "ZRANGE": true, "ZSCORE": true, "LRANGE": true, "LLEN": true, "WAIT": true,
	"MULTI": true, "DISCARD": true, "QUIT": true, "RESET": true,
}

// Commands returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it returns the names of the
// commands that read completes, upper case, in order. A command split
// between reads is named by the read that completes it — before that read
// is forwarded, so before the server can have the whole command. What is
// not RESP, or a command longer than a MiB, ends the reading: the reader
// names nothing from then on.
func Commands() func([]byte) []string {
	var (
		pending []byte
		broken  bool
		args    [][]byte
	)
	return func(b []byte) []string {
		if broken || len(b) == 0 {
			return nil
		}
		pending = append(pending, b...)
		var names []string
		for {
			complete, a, _, left, err := redcon.ReadNextCommand(pending, args[:0])
			if err != nil {
				broken, pending = true, nil
				return names
			}
			if !complete {
				break
			}
			args = a
			if len(a) > 0 {
				names = append(names, strings.ToUpper(string(a[0])))
			}
			pending = left
		}
		if len(pending) > maxPending {
			broken, pending = true, nil
		} else {
			pending = bytes.Clone(pending) // the caller's buffer is not ours to keep
		}
		return names
	}
}

// Writes returns a reader of one client connection's requests, fed each
// read in order, that reports whether that read completes a command that
// may change a key (see Commands).
func Writes() func([]byte) bool { return completes(func(name string) bool { return !readOnly[name] }) }

// session are the commands of a connection rather than of what its client
// does with it: a new connection's handshake (go-redis sends HELLO, then
// CLIENT SETINFO) is no request of the operation it was opened for.
var session = map[string]bool{
	"HELLO": true, "AUTH": true, "CLIENT": true, "SELECT": true, "READONLY": true, "READWRITE": true,
	"QUIT": true, "RESET": true,
}

// Requests returns a reader of one client connection's requests, fed each
// read in order, that reports whether that read completes a command other
// than the connection's own (see session): every command a Redis client
// sends is answered, and the client waits on it.
func Requests() func([]byte) bool { return completes(func(name string) bool { return !session[name] }) }

// completes returns a reader of one connection's requests that reports
// whether a read completes a command that counts.
func completes(counts func(name string) bool) func([]byte) bool {
	read := Commands()
	return func(b []byte) bool { return slices.ContainsFunc(read(b), counts) }
}
