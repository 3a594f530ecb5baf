package registry

import (
	"slices"
	"sync"
)

// A List holds registered values; its zero value is empty and ready.
type List[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add adds v after the others.
func (l *List[T]) Add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, v)
}

// AddFirst adds v before the others.
func (l *List[T]) AddFirst(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append([]T{v}, l.items...)
}

// All are the values, in order, a fresh slice each call.
func (l *List[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// Reset makes the values items: what a test that registers one of its
// own puts back (see All).
func (l *List[T]) Reset(items []T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = slices.Clone(items)
}
