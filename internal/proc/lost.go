package proc

import (
	"fmt"
	"strings"
	"sync"
)

// Lost is the verb of the line a program prints, unasked, once it learns
// that the grant it answered last is gone (its lease ended, its key
// expired or is another's): the process protocol's Grant.Lost. A program
// that will print it says so in its grant (Tells).
const Lost = "lost"

// TellsLost is the value of a grant's tells= field by which a program
// promises to print Lost.
const TellsLost = "lost"

// told follows one process's latest grant for its Lost: armed by each
// "granted" line, closed by a "lost" line or the process's end, let go by a
// "released" line.
type told struct {
	mu     sync.Mutex
	ch     chan struct{} // the latest grant's Lost; nil once released
	closed bool
	// ended: the process has ended. Its output may still be read after
	// (the pipe holds what it printed last): a grant read then is of a
	// process gone, and its Lost is closed at once.
	ended bool
}

// read takes a line the process printed and reports whether it was
// Lost, which answers no command: a "granted" line arms a new Lost, a
// "released" line lets the last one go (a grant released is no longer
// the program's to tell of).
func (t *told) read(line string) bool {
	verb, _, _ := strings.Cut(line, " ")
	t.mu.Lock()
	defer t.mu.Unlock()
	switch verb {
	case Lost:
		t.closeLocked()
		return true
	case "granted":
		t.ch, t.closed = make(chan struct{}), false
		if t.ended {
			t.closeLocked()
		}
	case "released":
		t.ch, t.closed = nil, false
	}
	return false
}

// tell closes the latest grant's Lost: the process ended.
func (t *told) tell() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	t.closeLocked()
}

func (t *told) closeLocked() {
	if t.ch != nil && !t.closed {
		close(t.ch)
		t.closed = true
	}
}

// latest is the Lost of the grant answered last (nil: none stands).
func (t *told) latest() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ch == nil {
		return nil
	}
	return t.ch
}

// Tells is the Grant.Lost of a's grant, the program's answer just
// received: nil when it promised nothing (no tells=), else closed once the
// program prints Lost or its process ends — by itself (a library that
// exits when it learns its lock was lost), a crash or the lab's stop.
func (l *Program) Tells(a Answer) (<-chan struct{}, error) {
	switch v, ok := a.Fields["tells"]; {
	case !ok:
		return nil, nil
	case v != TellsLost:
		return nil, fmt.Errorf("tells=%s in %q: the one promise a grant can make is tells=%s (it prints %q when it learns the grant is gone)",
			truncate(v), truncate(a.Line), TellsLost, Lost)
	}
	return l.grantLost(), nil
}
