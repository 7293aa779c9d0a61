package render

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// headless runs Chromium headless on url with the extra arguments and
// returns its standard output.
func headless(t *testing.T, browser, url string, args ...string) []byte {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}, args...)
	cmd := exec.CommandContext(ctx, browser, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.Bytes()
}

// screenshot loads page in headless Chromium and returns the decoded PNG.
func screenshot(t *testing.T, browser, page string) image.Image {
	return screenshotURL(t, browser, "file://"+page, 1200, 900)
}

// screenshotURL loads url in a window of w × h and returns the decoded PNG.
func screenshotURL(t *testing.T, browser, url string, w, h int) image.Image {
	shot := filepath.Join(t.TempDir(), "shot.png")
	out := headless(t, browser, url, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h))
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

// plantedHistory is 3 sessions of 600 transactions, each writing and
// reading a key of its own, with a write skew planted between the 301st
// transaction of session 1 (T301: reads key 1, writes keys 2 and 5) and
// the 21st of session 2 (T621: reads key 2, writes key 1): a timeline of a
// 400-transaction window around 2 transactions, of which only T301
// touches key 5.
func plantedHistory() *history.History {
	b := history.NewBuilder("planted", "test")
	b.InitAllKeys(0)
	id := int64(1)
	for s := int64(1); s <= 3; s++ {
		si := b.Session(s)
		for i := 0; i < 600; i++ {
			t := b.Begin(si, id, history.Committed, history.Pos{})
			switch {
			case s == 1 && i == 300:
				b.Read(t, 1, 0)
				b.Write(t, 2, 1)
				b.Write(t, 5, 1)
			case s == 2 && i == 20:
				b.Read(t, 2, 0)
				b.Write(t, 1, 1)
			default:
				b.Write(t, 1000+id, id)
				b.Read(t, 1000+id, id)
			}
			id++
		}
	}
	return b.Finish()
}

// pixels counts the pixels of img within tol of each channel of c, and
// the rows where they are.
func pixels(img image.Image, c [3]uint32, tol uint32) (n, top, bottom int) {
	b := img.Bounds()
	top, bottom = b.Max.Y, b.Min.Y
	near := func(a, b uint32) bool { return a+tol >= b && b+tol >= a }
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
				n++
				top, bottom = min(top, y), max(bottom, y)
			}
		}
	}
	return n, top, bottom
}

// The timeline's colours (report.html.tmpl): a transaction on the cycle,
// and one off the counterexample.
var (
	cycleFill = [3]uint32{0xf5, 0xb0, 0x41}
	txnFill   = [3]uint32{0xe8, 0xee, 0xf3}
)

// TestTimelineInBrowser renders the report of a write skew planted in an
// 1800-transaction history, whose timeline shows a 400-transaction window,
// and screenshots it in headless Chromium with the timeline in view. The
// screenshot must show the two cycle transactions' boxes (their colour is
// the timeline's alone) among many other boxes, in a band of the page with
// many colours. Then the page's controls, through the URL parameters its
// script honours: ?zoom=2 doubles the boxes (4× the area), ?key=5 dims
// T621 and every box off key 5 (in the screenshot and in the DOM Chromium
// dumps after the script ran).
func TestTimelineInBrowser(t *testing.T) {
	browser := chromium(t)
	rep, err := explain.Explain(context.Background(), plantedHistory(), history.SER, explain.Options{})
	require.NoError(t, err)
	ce := rep.Explanation.Counterexamples[0]
	require.Equal(t, 2, ce.Size)
	require.Equal(t, explain.TimelineTxns, ce.Timeline.Shown)
	require.ElementsMatch(t, []string{"1", "2", "5"}, ce.Timeline.Keys)
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	require.NoError(t, err)
	require.NoError(t, HTML(f, rep))
	require.NoError(t, f.Close())
	url := "file://" + page

	// The timeline in view: the page down to it fits 1200 × 1300 (with
	// room to spare for other fonts).
	img := screenshotURL(t, browser, url, 1200, 1300)
	cyc, top, bottom := pixels(img, cycleFill, 6)
	other, _, _ := pixels(img, txnFill, 3)
	require.Greater(t, cyc, 0, "no transaction of the cycle visible: the timeline is not in view or not drawn")
	band := image.Rect(0, max(0, top-150), 1200, min(img.Bounds().Max.Y, bottom+150))
	colours := map[[3]uint32]bool{}
	nonWhite := 0
	for y := band.Min.Y; y < band.Max.Y; y++ {
		for x := band.Min.X; x < band.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				nonWhite++
			}
		}
	}
	t.Logf("timeline screenshot: %d pixels of the cycle's boxes (rows %d–%d), %d of other boxes; around them %d distinct colours, %.1f%% non-white",
		cyc, top, bottom, other, len(colours), 100*float64(nonWhite)/float64(band.Dx()*band.Dy()))
	box := 48 * 30 // the least box: 48 × 30 px at zoom 1
	require.Greater(t, cyc, 2*box*7/10, "the two cycle boxes are not both visible")
	require.Greater(t, other, 20*box/2, "the window's other transactions are not visible")
	require.Greater(t, len(colours), 40, "the timeline looks blank")
	require.Greater(t, nonWhite, band.Dx()*band.Dy()/10, "the timeline looks blank")

	// Zoom 2: the cycle's boxes grow about 4 times (some may be cut off
	// by the scrolled area's edge).
	zoomed := screenshotURL(t, browser, url+"?zoom=2", 1200, 1300)
	cyc2, _, _ := pixels(zoomed, cycleFill, 6)
	t.Logf("?zoom=2: %d pixels of the cycle's boxes (%.1f×)", cyc2, float64(cyc2)/float64(cyc))
	require.Greater(t, float64(cyc2), 2.5*float64(cyc), "zoom did not enlarge the timeline")

	// Key 5: T621 and the other boxes dimmed, T301 not.
	filtered := screenshotURL(t, browser, url+"?key=5", 1200, 1300)
	cyc5, _, _ := pixels(filtered, cycleFill, 6)
	other5, _, _ := pixels(filtered, txnFill, 3)
	t.Logf("?key=5: %d pixels of the cycle's boxes, %d of other boxes", cyc5, other5)
	require.InDelta(t, float64(cyc)/2, float64(cyc5), float64(cyc)/5, "the key filter should dim one of the two cycle boxes")
	require.Less(t, other5, other/10, "the key filter should dim the boxes off the key")

	// The same in the DOM after the script ran.
	dom := string(headless(t, browser, url+"?zoom=2&key=5", "--dump-dom"))
	w := regexp.MustCompile(`<svg [^>]*class="tl" [^>]*width="(\d+)" height="(\d+)" data-w="(\d+)" data-h="(\d+)"`).FindStringSubmatch(dom)
	require.NotNil(t, w, "no timeline in the dumped DOM")
	atoi := func(s string) int { n, err := strconv.Atoi(s); require.NoError(t, err); return n }
	require.Equal(t, 2*atoi(w[3]), atoi(w[1]), "zoom 2 doubles the width")
	require.Equal(t, 2*atoi(w[4]), atoi(w[2]), "zoom 2 doubles the height")
	require.Contains(t, dom, `<output class="tl-zout">200%</output>`)
	txns := regexp.MustCompile(`<g class="tl-txn([^"]*)" data-keys="([^"]*)"`).FindAllStringSubmatch(dom, -1)
	require.Len(t, txns, explain.TimelineTxns)
	dimmed := 0
	for _, m := range txns {
		touches := strings.Contains(html.UnescapeString(m[2]), `"5"`)
		require.Equal(t, !touches, strings.Contains(m[1], "dim"), "%s %s", m[1], m[2])
		if !touches {
			dimmed++
		}
	}
	require.Equal(t, explain.TimelineTxns-1, dimmed)
	for _, m := range regexp.MustCompile(`<g class="tl-edge([^"]*)" data-key="([^"]*)"`).FindAllStringSubmatch(dom, -1) {
		require.Equal(t, m[2] != "5", strings.Contains(m[1], "dim"), "edge on key %s", m[2])
	}
}
