package scenarios_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

func TestReportCarriesLessonsEventsAndReplay(t *testing.T) {
	hist := filepath.Join("..", "reports", "testdata", "paused-holder-unfenced.history.jsonl")
	mine, err := scenarios.FromScript("mine", "mine.txt", "# My lesson.\nheal\n----\nall faults undone\n\ncheck\n----\nunfenced: PASS\n")
	require.NoError(t, err)
	rep, err := scenarios.Report(".", "t", []string{"locklab", "run"}, []scenarios.Result{
		{Scenario: "paused-holder", Lock: "queue", Resource: "unfenced", Verdict: models.Fail, History: hist},
		{Scenario: "mine", Lock: "queue", Resource: "fenced", Verdict: models.Pass},
	}, []scenarios.Scenario{mine})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 2)
	assert.Equal(t, "locklab run", rep.Command)
	assert.Contains(t, rep.Runs[0].Lesson, "A lease is not a lock")
	assert.NotEmpty(t, rep.Runs[0].Events)
	assert.Equal(t, hist, rep.Runs[0].History)
	assert.Empty(t, rep.Runs[0].Replay, "no schedule.json beside the history: nothing to replay")
	assert.Equal(t, "My lesson.", rep.Runs[1].Lesson)

	_, err = scenarios.Report(".", "t", nil, []scenarios.Result{{Scenario: "x", History: "missing.history.jsonl"}}, nil)
	assert.Error(t, err)
}
