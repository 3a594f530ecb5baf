package cluster_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/poll"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// poster posts JSON bodies to the gateway at url and returns each answer,
// which must be 200 OK.
func poster(t *testing.T, hc *http.Client, url string) func(path, body string) string {
	return func(path, body string) string {
		resp, err := hc.Post(url+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, out)
		return string(out)
	}
}

// etcd's HTTP/JSON gateway answers on a client's own link, as a lock
// written against it (etcd3gw, curl) uses it — after a member's restart
// too. (Listening on port 0, the gateway dialled "127.0.0.1:0" and every
// call was 503.)
func TestTheHTTPGatewayAnswers(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m2")
	require.NoError(t, err)
	post := poster(t, http.DefaultClient, cl.Etcd().Endpoints()[0])
	post("/v3/kv/put", `{"key":"`+b64("k")+`","value":"`+b64("over http")+`"}`)
	assert.Contains(t, post("/v3/kv/range", `{"key":"`+b64("k")+`"}`), b64("over http"))

	require.NoError(t, c.Kill("m2"))
	require.NoError(t, c.Restart(ctx(t), "m2"))
	assert.Contains(t, post("/v3/kv/range", `{"key":"`+b64("k")+`"}`), b64("over http"), "after a restart")
}

// With ReadWire, a program that speaks etcd's HTTP/JSON gateway is read as
// a gRPC one is: the leases granted to it are learned (the lab follows
// them), its keep-alives and their answers noted, its requests and answers
// counted (its wait is seen), and a watch's answer carrying events is a
// wake-up.
func TestReadWireReadsTheHTTPGateway(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	cl.ReadWire()
	url := cl.Etcd().Endpoints()[0]
	hc := &http.Client{Transport: &http.Transport{}} // one keep-alive connection, reused
	defer hc.CloseIdleConnections()
	post := poster(t, hc, url)
	reqs, answered := cl.Requests(), cl.Answered()
	grant := post("/v3/lease/grant", `{"TTL": 5}`)
	grants := cl.LeaseGrants()
	require.Len(t, grants, 1, "the lease granted over HTTP: %s", grant)
	id := grants[0].ID
	assert.Contains(t, grant, fmt.Sprintf(`"%d"`, id))
	assert.Equal(t, 5*time.Second, grants[0].TTL)

	post("/v3/kv/put", fmt.Sprintf(`{"key":"%s","value":"%s","lease":%d}`, b64("k"), b64("v"), id))
	post("/v3/lease/keepalive", fmt.Sprintf(`{"ID":%d}`, id))
	assert.Len(t, cl.Renewals(id), 1, "the keep-alive sent over HTTP")
	assert.Len(t, cl.KeptAlive(id), 1, "and its answer")
	assert.Equal(t, reqs+2, cl.Requests(), "the grant and the put; a keep-alive opens a stream")
	assert.Equal(t, answered+2, cl.Answered())

	// A watch over HTTP: its answer streams, and the put's event wakes it.
	watch, err := hc.Post(url+"/v3/watch", "application/json",
		strings.NewReader(`{"create_request":{"key":"`+b64("k")+`"}}`))
	require.NoError(t, err)
	defer watch.Body.Close()
	other, err := c.NewClient("c2", "m2")
	require.NoError(t, err)
	_, err = other.Etcd().Put(ctx(t), "k", "again")
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx(t), "the watch's wake-up", time.Millisecond, func(context.Context) (bool, error) {
		return cl.WatchEvents() == 1, nil
	}))
}
