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
