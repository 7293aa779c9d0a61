package render

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/explain"
	"github.com/hyperiso/hyperiso/history"
)

// chromium finds the headless browser (Debian package chromium). Without
// it the test skips, except under CI, where .ci/run installs it.
func chromium(t *testing.T) string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: CI must install the Debian package chromium (apt-get install -y chromium)")
	}
	t.Skip("chromium not found: install the Debian package chromium (apt-get update && apt-get install -y chromium) to run the browser test")
	return ""
}

// screenshot loads page in headless Chromium and returns the decoded PNG.
func screenshot(t *testing.T, browser, page string) image.Image {
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,900", "file://"+page)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "chromium: %s", out)
	f, err := os.Open(shot)
	require.NoError(t, err, "chromium wrote no screenshot: %s", out)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// TestHTMLInBrowser renders the HTML report of a counterexample, loads it
// in headless Chromium and checks that the screenshot shows something: many
// colours and a fair share of non-white pixels (the header bar, the graph,
// the operation chips).
func TestHTMLInBrowser(t *testing.T) {
	browser := chromium(t)
	h := readHistory(t, "../testdata/explain/duplicate-values.jsonl")
	rep, err := explain.Explain(context.Background(), h, history.SER, explain.Options{})
	require.NoError(t, err)
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	require.NoError(t, err)
	require.NoError(t, HTML(f, rep))
	require.NoError(t, f.Close())

	img := screenshot(t, browser, page)
	b := img.Bounds()
	require.Equal(t, 1200, b.Dx())
	require.Equal(t, 900, b.Dy())
	colours := map[[3]uint32]bool{}
	nonWhite, red := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			colours[[3]uint32{r, g, bl}] = true
			if r < 240 || g < 240 || bl < 240 {
				nonWhite++
			}
			// The violated badge and the rw edges are red.
			if r > 150 && g < 90 && bl < 90 {
				red++
			}
		}
	}
	total := b.Dx() * b.Dy()
	t.Logf("screenshot: %d distinct colours, %.1f%% non-white, %d red pixels", len(colours), 100*float64(nonWhite)/float64(total), red)
	require.Greater(t, len(colours), 50, "the page looks blank")
	require.Greater(t, nonWhite, total/10, "the page looks blank")
	require.Greater(t, red, 100, "no red verdict badge or rw edge visible")
}
