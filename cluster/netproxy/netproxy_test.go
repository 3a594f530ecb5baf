package netproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/netproxy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo is an upstream that writes back every line it reads.
func echo(t *testing.T) string { return echoTelling(t, nil) }

// echoTelling is echo that also sends every line it receives on got.
func echoTelling(t *testing.T, got chan<- string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if got == nil {
					io.Copy(c, c)
					return
				}
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					got <- line
					c.Write([]byte(line))
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func proxy(t *testing.T, upstream func() (string, error)) *netproxy.Proxy {
	t.Helper()
	p, err := netproxy.New(upstream)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string) {
	t.Helper()
	_, err := c.Write([]byte(msg + "\n"))
	require.NoError(t, err)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, msg+"\n", line)
}

// requireNothingArrives checks that c reads nothing for 100 ms: the
// absence a held link must show.
func requireNothingArrives(t *testing.T, c net.Conn, r *bufio.Reader, msg string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err := r.ReadString('\n')
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "%s, got %v", msg, err)
}

func TestForwardsOnLoopback(t *testing.T) {
	up := echo(t)
	p := proxy(t, func() (string, error) { return up, nil })
	host, _, err := net.SplitHostPort(p.Addr())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	roundTrip(t, c, bufio.NewReader(c), "hello")
}

func TestCutHoldsThenHealDelivers(t *testing.T) {
	up := echo(t)
	p := proxy(t, func() (string, error) { return up, nil })
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip(t, c, r, "before")

	p.Cut()
	assert.True(t, p.IsCut())
	_, err = c.Write([]byte("held\n"))
	require.NoError(t, err, "a cut does not error on the sender")
	requireNothingArrives(t, c, r, "nothing may cross a cut link")

	p.Heal()
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "held\n", line, "held bytes arrive after heal, intact")
}

func TestNewConnectionWaitsWhileCut(t *testing.T) {
	up := echo(t)
	p := proxy(t, func() (string, error) { return up, nil })
	p.Cut()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("x\n"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	r := bufio.NewReader(c)
	_, err = r.ReadString('\n')
	require.Error(t, err)
	p.Heal()
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "x\n", line)
}

func TestUpstreamDownClosesAtOnce(t *testing.T) {
	p := proxy(t, func() (string, error) { return "", errors.New("member is down") })
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the client must learn at once, not hang")
}

func TestDelayAddsLatency(t *testing.T) {
	up := echo(t)
	p := proxy(t, func() (string, error) { return up, nil })
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip(t, c, r, "warm")
	p.SetDelay(50 * time.Millisecond)
	assert.Equal(t, 50*time.Millisecond, p.Delay())
	t0 := time.Now()
	roundTrip(t, c, r, "slow")
	assert.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond, "each direction is delayed")
}

func TestSeverAndCloseEndConnections(t *testing.T) {
	up := echo(t)
	p, err := netproxy.New(func() (string, error) { return up, nil })
	require.NoError(t, err)
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	roundTrip(t, c, bufio.NewReader(c), "x")
	p.Sever()
	_, err = c.Read(make([]byte, 1))
	assert.Error(t, err)

	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	roundTrip(t, c2, bufio.NewReader(c2), "still accepting")
	p.Cut() // Close must not wait for a held connection
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close twice is fine")
	_, err = net.Dial("tcp", p.Addr())
	assert.Error(t, err, "closed proxy must not listen")
}

// A one-way cut: the request reaches upstream (and takes effect there), the
// answer is held; Sever drops it, so the client sees its connection end and
// never the answer.
func TestCutAnswersLetsRequestsThroughAndSeverDropsTheAnswer(t *testing.T) {
	got := make(chan string, 1)
	up := echoTelling(t, got)
	p := proxy(t, func() (string, error) { return up, nil })
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip(t, c, r, "before")
	<-got

	p.CutAnswers()
	_, err = c.Write([]byte("delete\n"))
	require.NoError(t, err)
	assert.Equal(t, "delete\n", <-got, "the request reaches upstream through a one-way cut")
	requireNothingArrives(t, c, r, "the answer is held")

	p.Sever()
	p.Heal()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	line, err := r.ReadString('\n')
	assert.Error(t, err, "the connection ends")
	assert.Empty(t, line, "and the held answer is never delivered")
}

// With a redial, a connection whose upstream does not listen yet waits for
// it, and then flows; without one, it ends at once.
func TestARefusedUpstreamIsDialledAgainWithARedial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	refused := proxy(t, func() (string, error) { return addr, nil })
	c, err := net.Dial("tcp", refused.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "no redial: the connection ends at once")

	p := proxy(t, func() (string, error) { return addr, nil })
	p.SetRedial(time.Minute)
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.Write([]byte("early\n"))
	require.NoError(t, err)
	ln, err = net.Listen("tcp", addr) // the upstream starts listening
	require.NoError(t, err)
	defer ln.Close()
	up, err := ln.Accept()
	require.NoError(t, err, "the proxy dialled again")
	defer up.Close()
	line, err := bufio.NewReader(up).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "early\n", line, "what the client sent meanwhile arrives")
}
