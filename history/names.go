package history

import (
	"fmt"
	"strings"
	"unicode"
)

// MaxName is the longest name of a client, member, scenario or resource.
const MaxName = 64

// MaxLockName is the longest name of a lock: a built-in's, or exec: and
// the command that runs a lock as a process.
const MaxLockName = 1024

// CheckName says what is wrong with a name of a client, member, scenario
// or resource, what saying which (nil: nothing). Such a name becomes a
// path and a word of HTML pages, so it is held to a grammar that is
// safe in both: a letter or digit, then letters, digits, '-', '_', '.'
// and '+', at most MaxName bytes — no '/', no "..", no markup.
func CheckName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s: an empty name", what)
	case len(s) > MaxName:
		return fmt.Errorf("%s %.20q…: a name of %d bytes (at most %d)", what, s, len(s), MaxName)
	case !isAlnum(rune(s[0])):
		return fmt.Errorf("%s %q: a name starts with a letter or a digit", what, s)
	}
	for _, r := range s {
		if !isAlnum(r) && !strings.ContainsRune("-_.+", r) {
			return fmt.Errorf("%s %q: %q is not allowed in a name (letters, digits, '-', '_', '.' and '+')", what, s, r)
		}
	}
	return nil
}

// CheckLockName says what is wrong with a lock's name (nil: nothing). A
// lock run as a process is named by its command, which may hold paths and
// spaces: it becomes a path only through a mapping to safe characters, and
// HTML only escaped, so it is held only to printable characters and
// MaxLockName bytes. Any other lock name is held to CheckName's grammar.
func CheckLockName(s string) error {
	if !strings.Contains(s, ":") {
		return CheckName("lock", s)
	}
	if len(s) > MaxLockName {
		return fmt.Errorf("lock %.20q…: a name of %d bytes (at most %d)", s, len(s), MaxLockName)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("lock %q: the unprintable %q in a name", s, r)
		}
	}
	return nil
}

func isAlnum(r rune) bool { return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }
