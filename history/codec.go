package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/bounded"
)

// MaxLine is the longest line Read accepts.
const MaxLine = 1 << 20

// Writer streams a history to a temporary file beside its final path; Commit
// renames it into place, so a file under the final name is always complete.
// It is a Sink. Not safe for concurrent use on its own: a Recorder serialises
// its writes.
type Writer struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	enc  *json.Encoder
}

// Create starts a history file at path with header h (its Format is set).
func Create(path string, h Header) (*Writer, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("history: %w", err)
	}
	w := &Writer{path: path, f: f, bw: bufio.NewWriterSize(f, 64<<10)}
	w.enc = json.NewEncoder(w.bw)
	h.Format = FormatVersion
	if err := w.enc.Encode(h); err != nil {
		w.Abort()
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	return w, nil
}

// Write appends one event.
func (w *Writer) Write(e Event) error {
	if err := w.enc.Encode(e); err != nil {
		return fmt.Errorf("history: %s: %w", w.path, err)
	}
	return nil
}

// Commit flushes, syncs and renames the file into place.
func (w *Writer) Commit() error {
	err := errors.Join(w.bw.Flush(), w.f.Sync(), w.f.Close())
	if err == nil {
		err = os.Rename(w.f.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("history: %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file; nothing appears under the final name.
func (w *Writer) Abort() error {
	w.f.Close()
	return os.Remove(w.f.Name())
}

// Encode writes a whole history to out, for tests and small histories.
func Encode(out io.Writer, h Header, events []Event) error {
	enc := json.NewEncoder(out)
	h.Format = FormatVersion
	if err := enc.Encode(h); err != nil {
		return err
	}
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// ReadFile reads and validates the history file at path, a regular file
// of at most bounded.History bytes.
func ReadFile(path string) (Header, []Event, error) {
	f, err := bounded.Open(path, bounded.History)
	if err != nil {
		return Header{}, nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads and validates a history; name is used in errors, which read
// "name:line: what is wrong".
func Decode(r io.Reader, name string) (Header, []Event, error) {
	s := NewScanner(r, name)
	var events []Event
	for s.Scan() {
		events = append(events, s.Event())
	}
	return s.Header(), events, s.Err()
}

// Scanner reads a history one event at a time, validating as it goes, so a
// large file is never held whole.
type Scanner struct {
	name   string
	sc     *bufio.Scanner
	line   int
	header Header
	ev     Event
	err    error
	v      validator
	ended  bool // a final value or the run's error was read
}

// NewScanner reads r; name is used in errors.
func NewScanner(r io.Reader, name string) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	s := &Scanner{name: name, sc: sc, v: newValidator()}
	s.readHeader()
	return s
}

func (s *Scanner) fail(format string, args ...any) {
	s.err = fmt.Errorf("%s:%d: %s", s.name, s.line, fmt.Sprintf(format, args...))
}

func (s *Scanner) next() ([]byte, bool) {
	for s.sc.Scan() {
		s.line++
		if b := bytes.TrimSpace(s.sc.Bytes()); len(b) > 0 {
			return b, true
		}
	}
	if err := s.sc.Err(); err != nil {
		s.line++
		if errors.Is(err, bufio.ErrTooLong) {
			s.fail("line longer than %d bytes", MaxLine)
		} else {
			s.fail("%v", err)
		}
	}
	return nil, false
}

func (s *Scanner) readHeader() {
	b, ok := s.next()
	if s.err != nil {
		return
	}
	if !ok {
		s.line = max(s.line, 1)
		s.fail("empty file: want a locklab history header")
		return
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		s.fail("not a locklab history: the first line is not a JSON object (%v)", err)
		return
	}
	if _, ok := probe["locklab_history"]; !ok {
		s.fail("not a locklab history: the first line has no \"locklab_history\" version")
		return
	}
	if err := strictUnmarshal(b, &s.header); err != nil {
		s.fail("header: %v", err)
		return
	}
	if s.header.Format < oldestFormat || s.header.Format > FormatVersion {
		s.fail("unsupported history format version %d (this locklab reads versions %d to %d)", s.header.Format, oldestFormat, FormatVersion)
		return
	}
	if msg := checkHeader(s.header); msg != "" {
		s.fail("header: %s", msg)
	}
}

// Header is the file's header line.
func (s *Scanner) Header() Header { return s.header }

// Scan reads the next event; false at the end or on the first error.
func (s *Scanner) Scan() bool {
	if s.err != nil {
		return false
	}
	b, ok := s.next()
	if !ok {
		if s.err == nil && s.header.Version != "" && !s.ended {
			s.fail("the history ends before its run did: a run of locklab ends every history with the resource's " +
				"final value or the run's error, and this one has neither (a file cut short?)")
		}
		return false
	}
	var e Event
	if err := strictUnmarshal(b, &e); err != nil {
		s.fail("malformed event: %v", err)
		return false
	}
	if msg := s.v.check(e, s.line); msg != "" {
		s.fail("%s", msg)
		return false
	}
	s.ev = e
	s.ended = s.ended || e.Type == Final || e.Type == Observed && e.What == ObservedRunError
	return true
}

// Event is the event Scan just read.
func (s *Scanner) Event() Event { return s.ev }

// Err is the first error, naming file and line; nil at a clean end.
func (s *Scanner) Err() error { return s.err }

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}
