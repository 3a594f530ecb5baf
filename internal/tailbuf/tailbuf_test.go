package tailbuf_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/tailbuf"
)

func TestLastLinesOfWhatWasWritten(t *testing.T) {
	var b tailbuf.Buffer
	b.Write([]byte("one\n\ntwo\nthr"))
	b.Write([]byte("ee\n"))
	assert.Equal(t, "three", b.Last(1))
	assert.Equal(t, "one | two | three", b.Last(5))
	b.Reset()
	assert.Equal(t, "", b.Last(1))
}

func TestKeepsOnlyTheLastBytes(t *testing.T) {
	var b tailbuf.Buffer
	b.Write([]byte(strings.Repeat("x", tailbuf.Size) + "\nend\n"))
	assert.Len(t, b.String(), tailbuf.Size)
	assert.Equal(t, "end", b.Last(1))
}

// A dead program's error is the line that names it, not what its runtime
// printed after: Node's banner after a stack, a Python traceback's frames.
func TestLastErrorIsTheProgramsError(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"Error: lock lost\n    at Lock.refresh (lock.js:10:5)\n\nNode.js v18.19.0\n", "Error: lock lost"},
		{"Traceback (most recent call last):\n  File \"lock.py\", line 3, in <module>\netcd3.exceptions.ConnectionFailedError: gone\n",
			"etcd3.exceptions.ConnectionFailedError: gone"},
		{"starting\nbye\n", "bye"},
	} {
		var b tailbuf.Buffer
		b.Write([]byte(c.out))
		assert.Equal(t, c.want, b.LastError())
	}
}
