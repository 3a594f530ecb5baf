package tailbuf

import (
	"strings"
	"sync"
)

// Size is how many bytes a Buffer keeps.
const Size = 4096

// Buffer is an io.Writer that keeps the last Size bytes written to it. Its
// zero value is ready to use; it is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write keeps p's bytes, dropping the oldest beyond Size.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > Size {
		t.buf = t.buf[len(t.buf)-Size:]
	}
	return len(p), nil
}

// String is everything kept.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Last is the last n non-empty lines kept, joined by " | ".
func (t *Buffer) Last(n int) string {
	var lines []string
	for _, l := range strings.Split(t.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}

// Reset forgets everything written.
func (t *Buffer) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = nil
}
