package history

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamesThatCouldBecomePathsOrMarkupAreRefused(t *testing.T) {
	for _, ok := range []string{"c1", "paused-holder", "etcd-guarded", "script-x_y.2", "redis+1"} {
		assert.NoError(t, CheckName("client", ok), ok)
	}
	for _, bad := range []string{"", "..", "../s2/payload", "a/b", `"><img src=x onerror=alert(1)>`, "<script>", ".hidden",
		"-flag", "a b", "é", strings.Repeat("a", MaxName+1), "c1\n"} {
		assert.Error(t, CheckName("client", bad), "%q", bad)
	}
	assert.NoError(t, CheckLockName("exec:python3 examples/locks/a.py --ttl 2"))
	assert.NoError(t, CheckLockName("queue"))
	assert.Error(t, CheckLockName("../queue"))
	assert.Error(t, CheckLockName("exec:a\x1b[2Jb"))
	assert.Error(t, CheckLockName("exec:"+strings.Repeat("a", MaxLockName)))
}
