package live_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/live"
)

// send makes one request to the lab with the headers given, and returns
// its status and body.
func send(t *testing.T, method, target string, form url.Values, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// A page of another origin changes nothing in the lab, a Host that is not
// a loopback name (DNS rebinding) reads nothing, and a body over
// live.MaxRequest is refused in one short line: the lab's own page, from
// its own origin, does all of it.
func TestTheLabServesOnlyItsOwnPage(t *testing.T) {
	lab, srv := startLab(t)
	connect := url.Values{"line": {"client c1 member=m1"}}

	for _, h := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
	} {
		code, body := send(t, http.MethodPost, srv.URL+"/do", connect, h)
		assert.Equal(t, http.StatusForbidden, code, "%v: %s", h, body)
		for _, path := range []string{"/reset", "/load", "/exercise", "/next"} {
			code, _ := send(t, http.MethodPost, srv.URL+path, url.Values{"lock": {"queue"}, "scenario": {"paused-holder"}}, h)
			assert.Equal(t, http.StatusForbidden, code, "%s from another origin", path)
		}
	}
	for _, path := range []string{"/", "/state", "/save", "/events"} {
		code, body := send(t, http.MethodGet, srv.URL+path, nil, map[string]string{"Host": "evil.example:80"})
		assert.Equal(t, http.StatusForbidden, code, "%s for Host evil.example", path)
		assert.Contains(t, body, `not Host "evil.example:80"`)
	}
	code, _ := send(t, http.MethodPost, srv.URL+"/do", connect, map[string]string{"Host": "rebound.example"})
	assert.Equal(t, http.StatusForbidden, code)
	assert.Empty(t, lab.State().Steps, "a refused request did something")

	code, body := send(t, http.MethodPost, srv.URL+"/do", url.Values{"line": {strings.Repeat("x", live.MaxRequest)}}, nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	assert.Less(t, len(body), 200, "the refusal is one short line, not the line echoed")

	// The page's own requests: same origin, a loopback Host.
	code, body = send(t, http.MethodPost, srv.URL+"/do", connect,
		map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "c1: connected to m1")
	// No page of another origin frames it.
	resp, err := http.Get(srv.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "frame-ancestors 'self'", resp.Header.Get("Content-Security-Policy"))
	assert.Equal(t, "SAMEORIGIN", resp.Header.Get("X-Frame-Options"))
	host := strings.TrimPrefix(srv.URL, "http://127.0.0.1")
	code, _ = send(t, http.MethodGet, srv.URL+"/state", nil, map[string]string{"Host": "localhost" + host})
	assert.Equal(t, http.StatusOK, code)
}
