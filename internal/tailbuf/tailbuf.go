package tailbuf

import (
	"regexp"
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

// LastError is the last line kept that reads as an error — it names an
// error, an exception, a panic or a fatal condition — or, if none does,
// the last line: what a program that died said of why, rather than what
// its runtime printed after (Node's version banner after a stack trace, a
// stack's last frame).
func (t *Buffer) LastError() string {
	var last string
	for _, l := range strings.Split(t.String(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if errorLine.MatchString(l) && !stackFrame.MatchString(l) {
			last = l
		}
	}
	if last == "" {
		return t.Last(1)
	}
	return last
}

// errorLine is a line that names an error; stackFrame one of a stack
// trace's frames, which may name an error's type in passing.
var (
	errorLine  = regexp.MustCompile(`(?i)(error|exception|panic|fatal)`)
	stackFrame = regexp.MustCompile(`^(at |File "|goroutine |\S+\.go:\d+)`)
)

// Reset forgets everything written.
func (t *Buffer) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = nil
}
