package redislock

import (
	_ "embed"
	"os"
	"path/filepath"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// deadlineScript is deadline-lock.sh: a Redis lock over redis-cli, run as
// a program, that tells its holder when its own count of the key's TTL
// runs out, on the clock its argument names.
//
//go:embed deadline-lock.sh
var deadlineScript []byte

// NewWallDeadline is redis-wall-deadline, known-bad: deadline-lock.sh
// counting its key's TTL on the wall clock, run as a program (it needs
// redis-cli, which comes with redis-server). A holder whose clock is set
// back is told a minute late that its key expired.
func NewWallDeadline(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	const file = "deadline-lock.sh"
	f := execFactory([]string{"sh", "-c", `exec sh "$` + process.EnvDir + `/` + file + `" wall`}, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, file), deadlineScript, 0o644)
	})
	return f(servers, name, opts)
}
