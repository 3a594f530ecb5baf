// Package leaks names the goroutines a test's leak check (goleak) lets
// outlive a test because a library the lab uses leaves them behind by a
// bug of its own, each with where the bug is reported: the lab's own
// goroutines are never among them.
package leaks

import "go.uber.org/goleak"

// Known are the goleak options that let those goroutines be: a
// go-zookeeper connection's loop, wedged sending a second error to a
// request already answered one as the connection closed
// (github.com/go-zookeeper/zk pull request 163, open; v1.0.4 has it).
func Known() []goleak.Option {
	return []goleak.Option{goleak.IgnoreTopFunction("github.com/go-zookeeper/zk.(*Conn).flushRequests")}
}
