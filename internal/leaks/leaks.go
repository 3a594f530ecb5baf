package leaks

import "go.uber.org/goleak"

// Known are the goleak options that let those goroutines be: a
// go-zookeeper connection's loop, wedged sending a second error to a
// request already answered one as the connection closed
// (github.com/go-zookeeper/zk pull request 163, open; v1.0.4 has it).
func Known() []goleak.Option {
	return []goleak.Option{goleak.IgnoreTopFunction("github.com/go-zookeeper/zk.(*Conn).flushRequests")}
}
