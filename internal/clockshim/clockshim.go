package clockshim

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

//go:embed csrc/shim.c
var source []byte

// ErrNoCompiler says that no C compiler builds the shim, and how to get one.
var ErrNoCompiler = errors.New("no C compiler to build the clock shim (apt-get install gcc)")

// EnvFile names the environment variable that tells the shim its file.
const EnvFile = "LOCKLAB_CLOCK_FILE"

var (
	built    string
	buildErr error
	once     sync.Once
)

// Build returns the path of the shim, building it the first time (once a
// process; kept across processes in the user's cache directory, under a
// name made of its source's hash).
func Build(ctx context.Context) (string, error) {
	once.Do(func() { built, buildErr = build(ctx) })
	return built, buildErr
}

func build(ctx context.Context) (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("the clock shim is built for Linux only, not %s", runtime.GOOS)
	}
	cc := ""
	for _, name := range []string{os.Getenv("CC"), "cc", "gcc", "clang"} {
		if p, err := exec.LookPath(name); name != "" && err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		return "", ErrNoCompiler
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "locklab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	sum := sha256.Sum256(source)
	out := filepath.Join(dir, "clockshim-"+hex.EncodeToString(sum[:6])+".so")
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out, nil
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "shim.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	so := filepath.Join(tmp, "shim.so")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, cc, "-shared", "-fPIC", "-O2", "-o", so, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("clockshim: %s could not build the clock shim: %w: %s", cc, err, msg)
	}
	if err := os.Chmod(so, 0o755); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	// Renamed into place whole: another process building it at the same
	// moment finds either no file or a complete one.
	if err := os.Rename(so, out); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	return out, nil
}

// Clock is one server's clock: the file its shim reads its offset from.
type Clock struct {
	path string

	mu     sync.Mutex
	offset time.Duration
	// ppm is how fast the clock drifts, in parts per million of the
	// machine's time (negative: slow), since from.
	ppm  int64
	from time.Time
}

// The file's fields, little-endian int64s, as csrc/shim.c reads them.
const (
	fieldOffset    = iota // milliseconds
	fieldDriftPPM         // parts per million
	fieldDriftFrom        // the wall clock's milliseconds since the epoch
	fields
)

// New makes a clock whose file is in dir, at no offset.
func New(dir string) (*Clock, error) {
	c := &Clock{path: filepath.Join(dir, "clock-offset")}
	if err := os.WriteFile(c.path, make([]byte, 8*fields), 0o644); err != nil {
		return nil, fmt.Errorf("clockshim: %w", err)
	}
	return c, nil
}

// Env is what a server's environment needs for its clock to be c's: the
// shim preloaded, and its file. shim is Build's path.
func (c *Clock) Env(shim string) []string {
	return []string{"LD_PRELOAD=" + shim, EnvFile + "=" + c.path}
}

// Jump moves the clock by d (negative: back), from its offset now; the
// server reads the new time at its next look.
func (c *Clock) Jump(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set(c.offset + d)
}

// Drift runs the clock at rate times the machine's from now on (2: twice
// as fast; 0.5: half), from where it is: what it drifted before is kept
// as its offset.
func (c *Clock) Drift(rate float64) error {
	if rate <= 0 {
		return fmt.Errorf("clockshim: a clock's rate is above zero, not %v", rate)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	// The drift so far becomes offset, and stops, before the next starts.
	if err := c.write(fieldDriftPPM, 0); err != nil {
		return err
	}
	if err := c.set(c.offsetAt(now)); err != nil {
		return err
	}
	ppm := int64(math.Round((rate - 1) * 1e6))
	if err := c.write(fieldDriftFrom, now.UnixMilli()); err != nil {
		return err
	}
	if err := c.write(fieldDriftPPM, ppm); err != nil {
		return err
	}
	c.ppm, c.from = ppm, now
	return nil
}

// Reset puts the clock back at no offset, and running at the machine's
// rate.
func (c *Clock) Reset() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write(fieldDriftPPM, 0); err != nil {
		return err
	}
	c.ppm = 0
	return c.set(0)
}

// Offset is how far the clock is from the kernel's now.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offsetAt(time.Now())
}

// offsetAt is the clock's offset at now, its drift since it began
// included.
func (c *Clock) offsetAt(now time.Time) time.Duration {
	if c.ppm == 0 {
		return c.offset
	}
	drift := now.UnixMilli() - c.from.UnixMilli()
	return c.offset + time.Duration(drift*c.ppm/1e6)*time.Millisecond
}

// set makes offset the clock's fixed offset.
func (c *Clock) set(offset time.Duration) error {
	if err := c.write(fieldOffset, offset.Milliseconds()); err != nil {
		return err
	}
	c.offset = offset
	return nil
}

// write writes one field of the file in place (never truncating: the shim
// has the file mapped, and a mapped page past a file's end faults).
func (c *Clock) write(field int, v int64) error {
	f, err := os.OpenFile(c.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("clockshim: %w", err)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	_, err = f.WriteAt(b[:], int64(8*field))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clockshim: %w", err)
	}
	return nil
}
