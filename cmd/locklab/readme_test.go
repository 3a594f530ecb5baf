package main

import (
	"go/format"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's Go snippets are as gofmt writes them: a user pastes them
// into a file of their own.
func TestReadmeGoIsFormatted(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(b, -1)
	require.NotEmpty(t, blocks)
	for _, m := range blocks {
		src := m[1]
		if !regexp.MustCompile(`(?m)^package `).Match(src) {
			continue // a fragment, not a file
		}
		out, err := format.Source(src)
		require.NoError(t, err, "%s", src)
		assert.Equal(t, string(out), string(src), "gofmt changes this README snippet")
	}
}
