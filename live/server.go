package live

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/locklab/locklab/reports"
)

//go:embed page.html
var pageHTML []byte

// Handler serves the lab's page and what it asks for:
//
//	GET  /               the page (everything embedded: it needs no network)
//	GET  /events         server-sent events: the State, at every change
//	GET  /state          the State now, as JSON
//	GET  /view?resource= the report's page of one resource's run so far
//	POST /do   line=     run a command line (400: the reader's one-line error)
//	POST /reset lock=    start again, with that lock
//	POST /load scenario= start again, stepping through a catalog scenario
//	POST /next           run the loaded scenario's next step
//	GET  /exercises      the guided exercises; POST /exercise name= works on one
//	GET  /save           what was done, as a scenario file
//
// The lab drives a cluster (the user's own with --endpoints) from a port
// any program on the machine can reach, and any page a browser shows can
// send it requests. It serves only requests made to a loopback host
// (127.0.0.1, localhost, ::1: a name that resolves there, DNS rebinding,
// is refused, reads included), changes nothing for a page of another
// origin (Go's CrossOriginProtection: 403), is framed by no page of
// another origin (frame-ancestors 'self'), and takes no request body over
// MaxRequest.
func (l *Lab) Handler() http.Handler {
	return guard(l.routes())
}

// MaxRequest is the largest request body the lab takes: a command line, a
// lock's or a lesson's name.
const MaxRequest = 64 << 10

// guard refuses what the lab must not serve (see Handler).
func guard(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "locklab lab: a request from a page of another origin changes nothing here", http.StatusForbidden)
	}))
	return cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No page of another origin frames the lab (clickjacking its
		// buttons); its own page frames its /view.
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'self'")
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if !loopback(r.Host) {
			http.Error(w, fmt.Sprintf("locklab lab: serves only 127.0.0.1, localhost and ::1, not Host %.100q", r.Host), http.StatusForbidden)
			return
		}
		if r.ContentLength > MaxRequest {
			http.Error(w, fmt.Sprintf("locklab lab: a request of %d bytes; at most %d", r.ContentLength, MaxRequest), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequest)
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					http.Error(w, fmt.Sprintf("locklab lab: a request over %d bytes", MaxRequest), http.StatusRequestEntityTooLarge)
					return
				}
				http.Error(w, "locklab lab: "+firstLine(err.Error()), http.StatusBadRequest)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
}

// loopback says whether host (a request's Host: name or address, and a
// port) names this machine's loopback interface.
func loopback(host string) bool {
	name, _, err := net.SplitHostPort(host)
	if err != nil {
		name = host
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(name, "[]"))
	return ip != nil && ip.IsLoopback()
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// routes are the lab's pages and commands (see Handler).
func (l *Lab) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pageHTML) //nolint:errcheck // the browser went away
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, l.State()) })
	mux.HandleFunc("GET /events", l.serveEvents)
	mux.HandleFunc("GET /view", l.serveView)
	mux.HandleFunc("GET /scenarios", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, Lessons(l.cfg.Store.Kind())) })
	mux.HandleFunc("POST /do", func(w http.ResponseWriter, r *http.Request) {
		out, err := l.Do(r.Context(), r.FormValue("line"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, out)
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		if err := l.Reset(r.FormValue("lock")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("POST /load", func(w http.ResponseWriter, r *http.Request) {
		if err := l.Load(r.FormValue("scenario")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("GET /exercises", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, Exercises()) })
	mux.HandleFunc("POST /exercise", func(w http.ResponseWriter, r *http.Request) {
		if err := l.Work(r.FormValue("name")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("POST /next", func(w http.ResponseWriter, r *http.Request) {
		st, ok := l.Next(r.Context())
		if !ok {
			http.Error(w, "no lesson step left: load a scenario", http.StatusBadRequest)
			return
		}
		writeJSON(w, st)
	})
	mux.HandleFunc("GET /save", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="lab.txt"`)
		fmt.Fprint(w, l.Save())
	})
	return mux
}

// serveEvents streams the State at every change until the page goes.
func (l *Lab) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	last := -1
	for {
		changed, version := l.changes()
		if version != last {
			last = version
			b, err := json.Marshal(l.State())
			if err != nil {
				return
			}
			fmt.Fprintf(w, "event: state\ndata: %s\n\n", b)
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-l.ctx.Done():
			return
		case <-changed:
		case <-time.After(15 * time.Second):
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
}

// serveView writes the report's page of one resource's run so far.
func (l *Lab) serveView(w http.ResponseWriter, r *http.Request) {
	resource := r.URL.Query().Get("resource")
	if resource == "" {
		resource = "unfenced"
	}
	lk, events, rep, err := l.events(resource)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	run := reports.Run{Scenario: "live lab", Lock: lk, Resource: resource, Expected: "-", Verdict: rep.Result(),
		Matches: true, Checks: rep.Verdicts(), Events: events}
	var page bytes.Buffer
	if err := reports.WriteRunPage(&page, run, "the live lab"); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page.Bytes()) //nolint:errcheck // the page was reloaded meanwhile
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the browser went away
}
