// Package httpwire reads etcd's HTTP/JSON gateway traffic off the wire, as
// a proxy sees it, and reports what it reads to the hooks package grpcwire
// defines for gRPC: a lock run as a process of its own may speak to etcd
// through the gateway (/v3/lease/grant, /v3/kv/txn, …: etcd3gw in Python,
// for one) rather than through gRPC, and the lab must learn its leases,
// count its requests and answers and see its keep-alives and wake-ups all
// the same.
//
// It follows one cleartext HTTP/1.1 connection in both directions with
// net/http's own reader: each request's path names its gRPC method (the
// gateway's /v3/, /v3beta/ and /v3alpha/ paths alike), its answers come
// back in order, and the JSON bodies of the ones that matter are read: a
// lease grant's answer, the keep-alives sent and their answers, the
// messages of a watch's answer. A connection that is not HTTP/1 (HTTP/2,
// TLS) is not read, and nothing on it is reported.
package httpwire
