package cluster_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate into dir, as PEM files, and returns their paths.
func pki(t *testing.T, dir string) (ca, serverCert, serverKey, clientCert, clientKey string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "locklab test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
		return path
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", keyDER)
	}
	ca = write("ca.crt", "CERTIFICATE", caDER)
	serverCert, serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	clientCert, clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return ca, serverCert, serverKey, clientCert, clientKey
}

// TestExternalModeWithTLS reaches a member that serves clients over TLS and
// demands a client certificate, through the lab's own proxy: the client
// dials the proxy's address but must verify the member's certificate.
func TestExternalModeWithTLS(t *testing.T) {
	dir := t.TempDir()
	ca, srvCert, srvKey, cliCert, cliKey := pki(t, dir)

	ec := embed.NewConfig()
	ec.Name = "tls"
	ec.Dir = filepath.Join(dir, "data")
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{local}, []url.URL{local}
	ec.InitialCluster = "tls=" + local.String()
	secure := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{secure}, []url.URL{secure}
	ec.ClientTLSInfo.CertFile, ec.ClientTLSInfo.KeyFile = srvCert, srvKey
	ec.ClientTLSInfo.TrustedCAFile, ec.ClientTLSInfo.ClientCertAuth = ca, true
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(ec)
	require.NoError(t, err)
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(10 * time.Second):
		t.Fatal("the TLS member did not start")
	}
	endpoint := "https://" + e.Clients[0].Addr().String()

	ctx := ctx(t)
	ext, err := cluster.Connect(ctx, cluster.External{Endpoints: []string{endpoint}, CAFile: ca, CertFile: cliCert, KeyFile: cliKey})
	require.NoError(t, err)
	defer ext.Close()
	cl, err := ext.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx, "k", "v")
	require.NoError(t, err, "a lab client reaches the TLS member through its proxy")
	cl.Cut() // and its link can still be faulted
	assert.True(t, cl.IsCut())
	cl.Heal()
	leader, err := ext.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "m1", leader)

	// Refusals are immediate and say why, in one line.
	_, err = cluster.Connect(ctx, cluster.External{Endpoints: []string{endpoint}, CAFile: ca})
	require.Error(t, err, "without a client certificate the member refuses")
	assert.ErrorContains(t, err, "cannot reach etcd at "+endpoint+": remote error: tls: certificate required")
	otherCA, _, _, otherCert, otherKey := pki(t, t.TempDir())
	_, err = cluster.Connect(ctx, cluster.External{Endpoints: []string{endpoint}, CAFile: otherCA, CertFile: otherCert, KeyFile: otherKey})
	require.Error(t, err, "a member whose certificate the CA did not sign is not trusted")
	assert.ErrorContains(t, err, "certificate signed by unknown authority")
}
