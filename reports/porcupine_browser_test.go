package reports_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A client name with markup that reached a check (the history decoder
// refuses it; this is the second wall) is only text in Porcupine's page:
// hovering every operation, whose tooltip Porcupine sets as HTML with the
// model's state in it ("held by CLIENT"), runs nothing.
func TestPorcupinesPageRendersACraftedNameInert(t *testing.T) {
	b := newBrowser(t)
	evil := `"><img src=x onerror="document.title='pwned'">`
	ops := []history.Operation{
		{ID: 1, Client: evil, Op: history.Acquire, Lock: "l", Type: history.Ok, Call: 0, Return: int64(10 * time.Millisecond)},
		{ID: 2, Client: "c2", Op: history.Acquire, Lock: "l", Type: history.Ok, Call: int64(20 * time.Millisecond), Return: int64(30 * time.Millisecond)},
		{ID: 3, Client: evil, Op: history.Release, Lock: "l", Type: history.Ok, Call: int64(40 * time.Millisecond), Return: int64(50 * time.Millisecond)},
	}
	v := models.CheckMutex(ops, nil, time.Second)
	require.Equal(t, models.Fail, v.Result, "two holders at once: the page shows the failed linearization")
	require.True(t, v.HasVisualization())
	page := filepath.Join(t.TempDir(), "mutex.porcupine.html")
	require.NoError(t, v.WriteVisualization(page))
	b.open(page)
	title := eval[string](b, `document.title`)
	// Each operation hovered in turn; what its tooltip said, and whether
	// an element of the history's text appeared in it.
	shown := eval[[]string](b, `(function(){
	  var out = [];
	  document.querySelectorAll('[data-index]').forEach(function (el) {
	    ['mouseover', 'mousemove'].forEach(function (type) {
	      el.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: 10, clientY: 10}));
	    });
	    var tip = document.querySelector('.tooltip');
	    out.push(tip.textContent + (tip.querySelector('img') ? ' [an img element]' : ''));
	  });
	  return out;
	})()`)
	assert.GreaterOrEqual(t, len(shown), len(ops), "every operation was hovered")
	// No element made of the history's text means no handler of it can
	// run, now or once an image fails to load.
	assert.Equal(t, title, eval[string](b, `document.title`), "no script of the history ran")
	all := strings.Join(shown, "\n")
	assert.NotContains(t, all, "[an img element]", "no markup of the history became an element")
	assert.Contains(t, all, "held by "+evil, "the name is shown as text")
}
