package history_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// FuzzDecode feeds the reader arbitrary bytes: it must never panic, and
// whatever it accepts must survive a round trip and pair without panicking.
// Run longer with: go test ./history -run XXX -fuzz FuzzDecode -fuzztime 1m
func FuzzDecode(f *testing.F) {
	seeds := []string{
		header,
		header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire","lock":"l"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"acquire","lock":"l","token":41}`,
		header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"cs"}` + "\n" +
			`{"t":2,"type":"info","id":1,"client":"c1","op":"cs","value":3,"error":"timeout"}`,
		header + "\n" + `{"t":1,"type":"fault-start","id":1,"fault":"kill-leader"}` + "\n" +
			`{"t":2,"type":"fault-end","id":1,"fault":"kill-leader","target":"m2"}`,
		header + "\n" + `{"t":5,"type":"lease-lost","id":0,"client":"c1","alive_until":3}`,
		header + "\n" + `{"t":1,"type":"ok","id":4,"client":"c1","op":"acquire"}`,
		`{"locklab_history":3}`,
		`{"locklab_history":2,"seed":1}` + "\n" + `{"t":1,"type":"fault-start","id":1,"fault":"partition m1 | m2 m3","spec":{"kind":"partition","groups":[["m1"],["m2","m3"]]}}`,
		`{"locklab_history":1,"seed":-1}`,
		"\n\n" + header + "\n\n",
		header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"write","token":5,"value":2}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"write","accepted":false,"reason":"stale"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, events, err := history.Decode(bytes.NewReader(data), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz:"), "errors name the file: %v", err)
			return
		}
		history.Pair(events)
		history.FaultWindows(events)
		var buf bytes.Buffer
		require.NoError(t, history.Encode(&buf, h, events))
		h2, events2, err := history.Decode(&buf, "again")
		require.NoError(t, err, "what was read must read again after writing")
		h.Format = history.FormatVersion // written in the current format
		require.Equal(t, h, h2)
		require.Equal(t, len(events), len(events2))
	})
}
