package redisd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/cluster/redisd"
)

func TestCommandsAreReadOffTheWire(t *testing.T) {
	read := redisd.Commands()
	get := "*2\r\n$3\r\nget\r\n$4\r\nlock\r\n"
	del := "*2\r\n$3\r\nDEL\r\n$4\r\nlock\r\n"
	assert.Equal(t, []string{"GET"}, read([]byte(get)))
	// A command split between reads is named by the read that completes it.
	assert.Empty(t, read([]byte(del[:9])))
	assert.Equal(t, []string{"DEL", "GET"}, read([]byte(del[9:]+get)))
	assert.Equal(t, []string{"PING"}, read([]byte("PING\r\n")), "an inline command")
}

func TestAReaderStopsAtWhatIsNotRESP(t *testing.T) {
	read := redisd.Commands()
	assert.Empty(t, read([]byte("*x\r\n")))
	assert.Empty(t, read([]byte("*1\r\n$4\r\nPING\r\n")), "nothing is read after a protocol error")
}

func TestAReaderKeepsAMiBOfOneCommandAtMost(t *testing.T) {
	read := redisd.Commands()
	assert.Empty(t, read([]byte("*2\r\n$3\r\nSET\r\n$2000000\r\n")))
	assert.Empty(t, read(make([]byte, 1<<20+1)))
	assert.Empty(t, read([]byte("*1\r\n$4\r\nPING\r\n")), "nothing is read once a command outgrew the bound")
}

func TestWritesAndRequestsAreToldApart(t *testing.T) {
	writes, requests := redisd.Writes(), redisd.Requests()
	get := []byte("*2\r\n$3\r\nGET\r\n$4\r\nlock\r\n")
	set := []byte("*5\r\n$3\r\nSET\r\n$4\r\nlock\r\n$1\r\nv\r\n$2\r\nNX\r\n$2\r\nPX\r\n")
	assert.False(t, writes(get))
	assert.True(t, requests(get))
	assert.True(t, writes([]byte("*3\r\n$7\r\nEVALSHA\r\n$1\r\nx\r\n$1\r\n0\r\n")), "a script may write")
	assert.False(t, requests(set[:10]))
	assert.True(t, requests(set[10:]))
	assert.False(t, requests([]byte("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")), "a new connection's handshake")
}
