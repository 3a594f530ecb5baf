package zklock

import (
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closed reports whether ch closes within d.
func closed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// A client without a session for a whole session timeout tells its
// holder; a deaf one waits for ZooKeeper's word, which a client that
// reaches no server never hears; a released grant is no longer followed.
func TestAHolderWithoutItsSessionForATimeoutIsTold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nobody answers there: the client never has a session
	c, _, err := zk.Connect([]string{addr}, time.Second, zk.WithLogger(silent{}))
	require.NoError(t, err)
	defer c.Close()

	var ts tells
	assert.True(t, closed(ts.follow(c, 7, 1, 100*time.Millisecond, false), 2*time.Second), "told a timeout after")
	assert.False(t, closed(ts.follow(c, 7, 2, 100*time.Millisecond, true), 400*time.Millisecond), "deaf: never told")
	ts.stop(2)
	lost := ts.follow(c, 7, 3, time.Hour, false)
	ts.stopAll()
	assert.False(t, closed(lost, 100*time.Millisecond), "no longer followed")
}

// silent is a logger that says nothing.
type silent struct{}

func (silent) Printf(string, ...any) {}
