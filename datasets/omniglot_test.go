package datasets

import (
	"archive/zip"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// omniDrawing is a 105×105 Omniglot-like drawing: white paper (255) with
// the first ink pixels in raster order black (0).
func omniDrawing(tb testing.TB, ink int) []byte {
	return pngGrey(tb, 105, 105, func(x, y int) uint8 {
		if y*105+x < ink {
			return 0
		}
		return 255
	})
}

// omniFixture lists a small Omniglot: set → alphabet → character → ink
// counts of its drawings (one drawing per count, files d0.png, d1.png, …).
var omniFixture = []struct {
	set, alphabet, character string
	ink                      []int
}{
	// Deliberately listed out of order: the reader must sort.
	{"images_background", "Zeta", "character02", []int{7, 8}},
	{"images_background", "Alpha", "character01", []int{1, 2, 3}},
	{"images_background", "Zeta", "character01", []int{5, 6}},
	{"images_background", "Alpha", "character02", []int{4}},
	{"images_evaluation", "Mid", "character01", []int{9, 10}},
}

// writeOmniFolders writes omniFixture unzipped under dir.
func writeOmniFolders(tb testing.TB, dir string) {
	for _, c := range omniFixture {
		for i, k := range c.ink {
			writeTestFile(tb, filepath.Join(dir, c.set, c.alphabet, c.character, "d"+string(rune('0'+i))+".png"), omniDrawing(tb, k))
		}
	}
}

// writeOmniZips writes omniFixture as official-style zips SET.zip, with
// folder entries as the upstream zips have them.
func writeOmniZips(tb testing.TB, dir string) {
	bySet := map[string]*zip.Writer{}
	bufs := map[string]*bytes.Buffer{}
	for _, c := range omniFixture {
		zw := bySet[c.set]
		if zw == nil {
			bufs[c.set] = new(bytes.Buffer)
			zw = zip.NewWriter(bufs[c.set])
			bySet[c.set] = zw
			zw.Create(c.set + "/")
		}
		zw.Create(c.set + "/" + c.alphabet + "/")
		zw.Create(c.set + "/" + c.alphabet + "/" + c.character + "/")
		for i, k := range c.ink {
			w, err := zw.Create(c.set + "/" + c.alphabet + "/" + c.character + "/d" + string(rune('0'+i)) + ".png")
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(omniDrawing(tb, k))
		}
	}
	for set, zw := range bySet {
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
		writeTestFile(tb, filepath.Join(dir, set+".zip"), bufs[set].Bytes())
	}
}

func sumSample(d *Dataset, i int) float64 {
	s := 0.0
	for _, v := range d.Sample(i) {
		s += float64(v)
	}
	return s
}

func TestOmniglotOrderPolarityAndZip(t *testing.T) {
	folders, zips := t.TempDir(), t.TempDir()
	writeOmniFolders(t, folders)
	writeOmniZips(t, zips)
	wantClasses := []string{"Alpha/character01", "Alpha/character02", "Zeta/character01", "Zeta/character02", "Mid/character01"}
	wantInk := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	wantLabels := []int{0, 0, 0, 1, 2, 2, 3, 3, 4, 4}
	var native [2]*Dataset
	for k, dir := range []string{folders, zips} {
		d, err := ReadOmniglot(dir, OmniglotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		native[k] = d
		if !reflect.DeepEqual(d.Classes, wantClasses) || !reflect.DeepEqual(d.Labels, wantLabels) {
			t.Fatalf("classes %v labels %v, want %v %v", d.Classes, d.Labels, wantClasses, wantLabels)
		}
		if !reflect.DeepEqual(d.Shape, []int{1, 105, 105}) {
			t.Fatalf("shape %v", d.Shape)
		}
		for i, k := range wantInk {
			// Default polarity: 1 = stroke, so a drawing sums to its ink count.
			if s := sumSample(d, i); s != float64(k) {
				t.Fatalf("drawing %d (%s) sums to %g, want ink count %d", i, d.Files[i], s, k)
			}
		}
	}
	if native[0].Files[0] != "images_background/Alpha/character01/d0.png" ||
		native[1].Files[0] != "images_background.zip:images_background/Alpha/character01/d0.png" {
		t.Fatalf("files %q, %q", native[0].Files[0], native[1].Files[0])
	}
	if !reflect.DeepEqual(native[0].X, native[1].X) {
		t.Fatal("folder and zip read differently")
	}

	// Raw polarity: 1 = paper.
	raw, err := ReadOmniglot(folders, OmniglotOptions{RawPolarity: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range wantInk {
		if s := sumSample(raw, i); s != float64(105*105-k) {
			t.Fatalf("raw drawing %d sums to %g, want %d", i, s, 105*105-k)
		}
	}

	// Downsampled to 28×28 by area averaging: ink mass scales by (28/105)².
	small, err := ReadOmniglot(zips, OmniglotOptions{Size: 28})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(small.Shape, []int{1, 28, 28}) {
		t.Fatalf("shape %v", small.Shape)
	}
	for i, k := range wantInk {
		want := float64(k) * 28 * 28 / (105 * 105)
		if s := sumSample(small, i); math.Abs(s-want) > 1e-5 {
			t.Fatalf("28×28 drawing %d sums to %g, want %g", i, s, want)
		}
	}
	// The first drawing has one ink pixel at (0,0): output (0,0) covers
	// 3.75×3.75 source pixels, so it holds 1/3.75².
	if v := small.Sample(0)[0]; math.Abs(float64(v)-1/(3.75*3.75)) > 1e-6 {
		t.Fatalf("28×28 pixel (0,0) = %g, want %g", v, 1/(3.75*3.75))
	}

	// Alphabets as classes; sets in the order asked for.
	byA, err := ReadOmniglot(folders, OmniglotOptions{ByAlphabet: true, Sets: []string{"evaluation", "background"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byA.Classes, []string{"Mid", "Alpha", "Zeta"}) ||
		!reflect.DeepEqual(byA.Labels, []int{0, 0, 1, 1, 1, 1, 2, 2, 2, 2}) {
		t.Fatalf("by alphabet: %v %v", byA.Classes, byA.Labels)
	}
	if s := sumSample(byA, 0); s != 9 {
		t.Fatalf("first evaluation drawing sums to %g, want 9", s)
	}
}

// TestOmniglotBadInput: every malformed input gives one error naming the
// offending path, and no data set.
func TestOmniglotBadInput(t *testing.T) {
	charDir := filepath.Join("images_background", "Alpha", "character01")
	cases := []struct {
		name   string
		break_ func(dir string)
		opts   OmniglotOptions
		want   []string
	}{
		{"non-image", func(dir string) {
			os.WriteFile(filepath.Join(dir, charDir, "notes.txt"), []byte("a note\n"), 0o644)
		}, OmniglotOptions{}, []string{"notes.txt", "not a PNG or JPEG"}},
		{"truncated png", func(dir string) {
			p := filepath.Join(dir, charDir, "d1.png")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, OmniglotOptions{}, []string{"d1.png", "corrupt png"}},
		{"empty character", func(dir string) {
			os.MkdirAll(filepath.Join(dir, "images_background", "Alpha", "character03"), 0o755)
		}, OmniglotOptions{}, []string{"character03", "empty folder"}},
		{"empty alphabet", func(dir string) {
			os.MkdirAll(filepath.Join(dir, "images_background", "Beta"), 0o755)
		}, OmniglotOptions{}, []string{"Beta", "empty folder"}},
		{"stray file", func(dir string) {
			os.WriteFile(filepath.Join(dir, "images_background", "README"), []byte("x"), 0o644)
		}, OmniglotOptions{}, []string{"README", "unexpected file"}},
		{"missing set", func(dir string) {
			os.RemoveAll(filepath.Join(dir, "images_evaluation"))
		}, OmniglotOptions{}, []string{"images_evaluation", "not found"}},
		{"wrong size", func(dir string) {
			os.WriteFile(filepath.Join(dir, charDir, "d2.png"), pngGrey(t, 50, 40, func(x, y int) uint8 { return 0 }), 0o644)
		}, OmniglotOptions{}, []string{"d2.png", "50×40"}},
		{"set twice", func(string) {}, OmniglotOptions{Sets: []string{"background", "images_background"}},
			[]string{"Alpha/character01", "more than one"}},
		{"bad set name", func(string) {}, OmniglotOptions{Sets: []string{"../x"}}, []string{"bad set name"}},
		{"negative size", func(string) {}, OmniglotOptions{Size: -1}, []string{"size -1"}},
	}
	for _, c := range cases {
		dir := t.TempDir()
		writeOmniFolders(t, dir)
		c.break_(dir)
		d, err := ReadOmniglot(dir, c.opts)
		checkReadError(t, c.name, d, err, c.want)
	}
	// A wrong-size drawing is fine when resizing.
	dir := t.TempDir()
	writeOmniFolders(t, dir)
	writeTestFile(t, filepath.Join(dir, charDir, "d2.png"), pngGrey(t, 50, 40, func(x, y int) uint8 { return 0 }))
	if d, err := ReadOmniglot(dir, OmniglotOptions{Size: 10}); err != nil {
		t.Fatal(err)
	} else if s := sumSample(d, 2); math.Abs(s-100) > 1e-4 {
		t.Fatalf("all-ink 50×40 drawing at 10×10 sums to %g, want 100", s)
	}
}

func TestOmniglotBadZip(t *testing.T) {
	build := func(entries map[string][]byte) string {
		dir := t.TempDir()
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for name, data := range entries {
			w, _ := zw.Create(name)
			w.Write(data)
		}
		zw.Close()
		writeTestFile(t, filepath.Join(dir, "images_background.zip"), b.Bytes())
		return dir
	}
	good := omniDrawing(t, 3)
	cases := []struct {
		name    string
		entries map[string][]byte
		want    string
	}{
		{"outside set", map[string][]byte{"other/A/character01/x.png": good}, "not under images_background/"},
		{"too shallow", map[string][]byte{"images_background/A/x.png": good}, "not SET/Alphabet"},
		{"dot-dot", map[string][]byte{"images_background/../A/c/x.png": good}, "bad path"},
		{"empty char", map[string][]byte{"images_background/A/character01/x.png": good, "images_background/A/character02/": nil}, "character02: empty character folder"},
		{"bad image", map[string][]byte{"images_background/A/character01/x.png": []byte("junk")}, "images_background.zip:images_background/A/character01/x.png: not a PNG or JPEG"},
		{"no characters", map[string][]byte{"images_background/": nil}, "no character folders"},
	}
	for _, c := range cases {
		dir := build(c.entries)
		d, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{"background"}})
		if err == nil || d != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Several empty alphabets: the message names the first by name, not
	// the first a map happened to yield.
	for i := 0; i < 20; i++ {
		dir := build(map[string][]byte{"images_background/E/": nil, "images_background/B/": nil, "images_background/D/": nil,
			"images_background/C/character01/x.png": good})
		if _, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{"background"}}); err == nil || !strings.Contains(err.Error(), "images_background/B: empty alphabet folder") {
			t.Fatalf("empty alphabets B, D, E: %v, want the one naming B", err)
		}
	}
	// A zip that is not a zip.
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "images_background.zip"), []byte("PK\x03\x04 truncated"))
	if _, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{"background"}}); err == nil || !strings.Contains(err.Error(), "images_background.zip") {
		t.Errorf("corrupt zip: %v", err)
	}
}

// TestOmniglotReal reads all 32,460 real drawings at 28×28 and checks the
// published counts, the documented order, and pixel facts computed
// independently with Python/PIL and NumPy (exact area averaging written
// separately, as A_h · img · A_wᵀ with overlap matrices).
func TestOmniglotReal(t *testing.T) {
	dir, err := datadir.Require("omniglot")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadOmniglot(dir, OmniglotOptions{Size: 28})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 32460 || len(d.Classes) != 1623 {
		t.Fatalf("%d drawings of %d characters, want 32,460 of 1,623", d.Len(), len(d.Classes))
	}
	perClass := make([]int, len(d.Classes))
	for _, y := range d.Labels {
		perClass[y]++
	}
	for c, n := range perClass {
		if n != 20 {
			t.Fatalf("character %s has %d drawings, want 20", d.Classes[c], n)
		}
	}
	bg := 0
	for _, f := range d.Files {
		if strings.HasPrefix(f, "images_background/") {
			bg++
		}
	}
	if bg != 19280 || d.Labels[19279] != 963 || d.Labels[19280] != 964 {
		t.Fatalf("background drawings %d (want 19,280), labels around the boundary %d %d", bg, d.Labels[19279], d.Labels[19280])
	}
	// Reference values (python3 + PIL 9.4 + NumPy): index, file, label,
	// class, ink pixels in the 105×105 original, and at 28×28: sum, sum of
	// squares, three pixels (row, col, value).
	type px struct {
		r, c int
		v    float64
	}
	refs := []struct {
		idx         int
		file, class string
		label, ink  int
		sum, sumsq  float64
		pixels      []px
	}{
		{0, "images_background/Alphabet_of_the_Magi/character01/0709_01.png", "Alphabet_of_the_Magi/character01", 0, 905,
			64.355556, 47.229393, []px{{9, 4, 0.435556}, {9, 5, 0.933333}, {9, 6, 0.915556}}},
		{19280, "images_evaluation/Angelic/character01/0965_01.png", "Angelic/character01", 964, 1731,
			123.093333, 95.567960, []px{{2, 5, 0.062222}, {2, 6, 0.066667}, {2, 7, 0.066667}, {14, 14, 0.097778}}},
		{32459, "images_evaluation/ULOG/character26/1623_20.png", "ULOG/character26", 1622, 455,
			32.355556, 23.288336, []px{{6, 6, 0.022222}, {6, 7, 0.066667}, {7, 6, 0.333333}, {14, 14, 0.244444}}},
		{12345, "images_background/Japanese_(katakana)/character32/0627_06.png", "Japanese_(katakana)/character32", 617, 915,
			65.066667, -1, nil},
	}
	for _, r := range refs {
		if d.Files[r.idx] != r.file || d.Labels[r.idx] != r.label || d.Classes[r.label] != r.class {
			t.Fatalf("sample %d: %s label %d (%s), want %s label %d (%s)", r.idx, d.Files[r.idx], d.Labels[r.idx], d.Classes[d.Labels[r.idx]], r.file, r.label, r.class)
		}
		s, sq := 0.0, 0.0
		for _, v := range d.Sample(r.idx) {
			s += float64(v)
			sq += float64(v) * float64(v)
		}
		// Mass conservation: the 28×28 sum is ink × (28/105)².
		if math.Abs(s-float64(r.ink)*28*28/(105*105)) > 1e-3 || math.Abs(s-r.sum) > 1e-3 {
			t.Errorf("sample %d: sum %g, want %g (ink %d)", r.idx, s, r.sum, r.ink)
		}
		if r.sumsq >= 0 && math.Abs(sq-r.sumsq) > 1e-3 {
			t.Errorf("sample %d: sum of squares %g, want %g", r.idx, sq, r.sumsq)
		}
		for _, p := range r.pixels {
			if v := float64(d.Sample(r.idx)[p.r*28+p.c]); math.Abs(v-p.v) > 1e-5 {
				t.Errorf("sample %d pixel (%d,%d) = %g, want %g", r.idx, p.r, p.c, v, p.v)
			}
		}
	}
	// Native resolution, raw polarity, for one character (a folder that
	// links to the real one): the first ink pixel of 0709_01.png in raster
	// order is (row 34, col 17).
	link := t.TempDir()
	os.MkdirAll(filepath.Join(link, "images_background", "Alphabet_of_the_Magi"), 0o755)
	if err := os.Symlink(filepath.Join(dir, "images_background", "Alphabet_of_the_Magi", "character01"),
		filepath.Join(link, "images_background", "Alphabet_of_the_Magi", "character01")); err != nil {
		t.Fatal(err)
	}
	one, err := ReadOmniglot(link, OmniglotOptions{Sets: []string{"background"}, RawPolarity: true})
	if err != nil {
		t.Fatal(err)
	}
	first, ink := -1, 0
	for i, v := range one.Sample(0) {
		if v != 0 && v != 1 {
			t.Fatalf("raw pixel %d = %g, want 0 or 1 (1-bit PNG)", i, v)
		}
		if v == 0 {
			ink++
			if first < 0 {
				first = i
			}
		}
	}
	if ink != 905 {
		t.Fatalf("%d ink pixels, want 905", ink)
	}
	if first != 34*105+17 || one.Len() != 20 {
		t.Fatalf("first ink pixel at %d (want %d), %d drawings", first, 34*105+17, one.Len())
	}
}

// FuzzOmniglotZip: arbitrary zip bytes are listed and decoded without a
// panic; whatever is accepted follows the SET/Alphabet/character/file
// layout.
func FuzzOmniglotZip(f *testing.F) {
	f.Add(zipOf(nil, map[string][]byte{"images_background/A/character01/x.png": omniDrawing(f, 2)}))
	f.Add(zipOf(nil, map[string][]byte{"images_background/A/character01/": nil, "images_background/A/character02/y.png": []byte("junk")}))
	f.Add(zipOf(nil, map[string][]byte{"images_background/../x/y/z.png": nil, "__MACOSX/images_background/._a": nil}))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		chars, err := omniglotZip(zr, "images_background.zip", "images_background")
		if err != nil {
			return
		}
		n := 0
		for _, ch := range chars {
			if ch.alphabet == "" || ch.character == "" || len(ch.files) == 0 {
				t.Fatalf("bad character accepted: %+v", ch)
			}
			for _, it := range ch.files {
				if !strings.HasPrefix(it.name, "images_background.zip:images_background/"+ch.alphabet+"/"+ch.character+"/") {
					t.Fatalf("entry %q outside its character", it.name)
				}
				if n < 4 { // decode a few: must not panic
					if b, err := it.read(); err == nil {
						_, release, _ := decodeImage(b, 1<<16)
						release()
					}
				}
				n++
			}
		}
	})
}

// TestOmniglotParallelDeterministic: on one core or all, the same data
// set, bit for bit.
func TestOmniglotParallelDeterministic(t *testing.T) {
	dir := t.TempDir()
	for c := 0; c < 6; c++ {
		for i := 0; i < 7; i++ {
			writeTestFile(t, filepath.Join(dir, "images_background", "A", "character0"+string(rune('1'+c)), "d"+string(rune('a'+i))+".png"),
				pngGrey(t, 105, 105, func(x, y int) uint8 { return uint8((x*(c+1) + y*(i+2)) % 256) }))
		}
	}
	opts := OmniglotOptions{Sets: []string{"background"}, Size: 28}
	prev := runtime.GOMAXPROCS(1)
	one, err := ReadOmniglot(dir, opts)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 3; rep++ {
		many, err := ReadOmniglot(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, many) {
			t.Fatal("parallel read differs from the serial one")
		}
	}
}
