package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/netproxy"
)

// An armed acquire next=lost lets the write through, then cuts the
// client's links at the first request after it — not at a read that holds
// no request, and only once.
func TestTheRequestAfterTheWriteIsTheOneHeld(t *testing.T) {
	p, err := netproxy.New(func() (string, error) { return "127.0.0.1:1", nil })
	require.NoError(t, err)
	defer p.Close()
	c := &client{links: []*netproxy.Proxy{p}, requestCut: make(chan struct{})}
	cut := func() bool {
		select {
		case <-c.requestCut:
			return true
		default:
			return false
		}
	}

	c.nextAfterWrite(false, true)
	assert.False(t, p.IsCut(), "not armed: nothing happens")
	c.afterWrite.Store(nextArmed)
	c.nextAfterWrite(false, true)
	assert.False(t, p.IsCut(), "a request before the write passes")
	c.nextAfterWrite(true, true)
	assert.False(t, p.IsCut(), "the write itself passes")
	c.nextAfterWrite(false, false)
	assert.False(t, p.IsCut(), "a read holding no request (a ping) passes")
	c.nextAfterWrite(false, true)
	assert.True(t, p.IsCut(), "the request after the write is held")
	assert.True(t, cut())
	assert.Equal(t, nextCut, c.afterWrite.Load())
	c.nextAfterWrite(false, true) // once: the channel is not closed twice
}
