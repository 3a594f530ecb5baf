package cluster_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// etcd's HTTP/JSON gateway answers on a client's own link, as a lock
// written against it (etcd3gw, curl) uses it — after a member's restart
// too. (Listening on port 0, the gateway dialled "127.0.0.1:0" and every
// call was 503.)
func TestTheHTTPGatewayAnswers(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m2")
	require.NoError(t, err)
	url := cl.Etcd().Endpoints()[0]
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	post := func(path, body string) string {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, out)
		return string(out)
	}
	post("/v3/kv/put", `{"key":"`+b64("k")+`","value":"`+b64("over http")+`"}`)
	assert.Contains(t, post("/v3/kv/range", `{"key":"`+b64("k")+`"}`), b64("over http"))

	require.NoError(t, c.Kill("m2"))
	require.NoError(t, c.Restart(ctx(t), "m2"))
	assert.Contains(t, post("/v3/kv/range", `{"key":"`+b64("k")+`"}`), b64("over http"), "after a restart")
}
