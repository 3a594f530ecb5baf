// Package etcdctl gives locks that run as processes etcd's own command-line
// client, built from the etcdctl Go module into the program that runs them:
// nothing is downloaded or installed. A program that runs such locks (the
// built-in etcdctl lock among them) calls Serve first thing in main (a test
// binary, in TestMain); the lab then puts a command named etcdctl on each
// lock process's PATH, which is the program itself started again as
// etcdctl. Only such a program links etcdctl (and its cobra) in:
// package lock/etcdlock offers it through OfferTool and never imports this one.
package etcdctl
