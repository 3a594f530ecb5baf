package proc

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An answer splits into its verb, its k=v words up to the first that is
// none, and the rest as its message. (The processes themselves are tested
// through the locks that run them: package lock and lock/redislock.)
func TestParse(t *testing.T) {
	for line, want := range map[string]Answer{
		"granted key=a value=b token=3": {Verb: "granted", Fields: map[string]string{"key": "a", "value": "b", "token": "3"}},
		"error not-held it is gone":     {Verb: "error", Fields: map[string]string{}, Msg: "not-held it is gone"},
		"error a=b x=y = z":             {Verb: "error", Fields: map[string]string{"a": "b", "x": "y"}, Msg: "= z"},
		"  ":                            {Fields: map[string]string{}},
	} {
		want.Line = line
		assert.Equal(t, want, Parse(line), line)
	}
}
