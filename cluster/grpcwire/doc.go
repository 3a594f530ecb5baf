// Package grpcwire reads etcd's gRPC traffic off the wire, as a proxy sees
// it, to learn the leases the server grants to a client the lab does not
// link: a lock that runs as a process of its own talks to etcd through the
// lab's proxy, and the lab must know its leases to follow them (when one
// ends, the grants resting on it end too) and to end them on purpose. It
// also counts what the lab counts of its own clients: the unary requests
// sent, and the watch responses that carried events (the wake-ups); and it
// sees each keep-alive the client sends, which tells a lock that renews its
// lease from one that lets it lapse.
//
// It follows one cleartext HTTP/2 connection in both directions: the
// request headers name each stream's method (decoded with HPACK, whose
// table is kept per direction), the first gRPC message of the answer on a
// LeaseGrant stream is the LeaseGrantResponse, each message on a Watch
// stream's answer a WatchResponse, and each message the client sends on a
// LeaseKeepAlive stream a LeaseKeepAliveRequest. TLS connections cannot be
// read; they carry no preface the reader recognizes, and it stops.
package grpcwire
