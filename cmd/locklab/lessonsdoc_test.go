package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lessonsPage is the reference the catalog generates.
const lessonsPage = "../../docs/lessons.md"

// docs/lessons.md says what the catalog, the checks and the known-bad
// locks are, in the lab's own words: the part below its own is what
// writeLessonsPage makes of them today, so a lesson, check or known-bad
// lock added or changed and not written to the page fails here
// (LOCKLAB_UPDATE_DOCS=1 writes it).
func TestTheLessonsPageIsTheCatalog(t *testing.T) {
	b, err := os.ReadFile(lessonsPage)
	require.NoError(t, err)
	own, _, ok := strings.Cut(string(b), generatedBegin)
	require.True(t, ok, "%s has no line %q", lessonsPage, generatedBegin)
	var gen strings.Builder
	writeLessonsPage(&gen)
	want := own + gen.String()
	if os.Getenv("LOCKLAB_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(lessonsPage, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, string(b), "%s is not the catalog's: LOCKLAB_UPDATE_DOCS=1 go test ./cmd/locklab -run TestTheLessonsPageIsTheCatalog writes it", lessonsPage)
}
