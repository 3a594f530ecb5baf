package pgd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// owner is the user a server runs as where the lab is root (PostgreSQL
// refuses to run as root).
type owner struct{ uid, gid uint32 }

// serverOwner is who the server runs as: the lab's own user (nil), or,
// where the lab is root, the postgres user Debian's package makes, else
// nobody.
func serverOwner() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("pgd: user %s: %w", name, err)
		}
		return &owner{uint32(uid), uint32(gid)}, nil
	}
	return nil, errors.New("pgd: the lab runs as root, which PostgreSQL refuses, and there is no postgres or nobody user to run it as")
}

// own hands dir and everything in it to the owner.
func (o *owner) own(dir string) error {
	if o == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(o.uid), int(o.gid))
	})
}

// apply has cmd run as the owner.
func (o *owner) apply(cmd *exec.Cmd) {
	if o == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: o.uid, Gid: o.gid}
}
