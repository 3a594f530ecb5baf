package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run's page lies beside its history inside the report's directory, and
// under runs/ when its history lies outside it or there is none.
func TestRunPagesStayInTheReport(t *testing.T) {
	for history, want := range map[string]string{
		"paused-holder/etcd-mutex/1/unfenced.history.jsonl": "paused-holder/etcd-mutex/1/unfenced.html",
		"h.jsonl":                      "h.html",
		"../elsewhere/h.history.jsonl": "runs/run-3.html",
		"/abs/h.history.jsonl":         "runs/run-3.html",
		"":                             "runs/run-3.html",
	} {
		assert.Equal(t, want, pageOf(Run{History: history}, 3), history)
	}
	assert.Equal(t, "../../../x/y%20z.html", href("a/b/c", "x/y z.html"))
	assert.Equal(t, "x/y.html", href(".", "x/y.html"))
}
