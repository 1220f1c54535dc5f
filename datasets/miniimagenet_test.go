package datasets

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeMiniImageNet writes a tiny miniImageNet in the standard layout:
// images/ with JPEGs named like the real ones, and train.csv/test.csv.
func writeMiniImageNet(tb testing.TB, dir string) {
	img := func(name string, c color.RGBA, w, h int) {
		writeTestFile(tb, filepath.Join(dir, "images", name), jpegFlat(tb, w, h, c))
	}
	img("n0153282900000005.jpg", color.RGBA{250, 10, 10, 255}, 40, 30)
	img("n0153282900000006.jpg", color.RGBA{10, 250, 10, 255}, 30, 40)
	img("n0174965700000001.jpg", color.RGBA{10, 10, 250, 255}, 84, 84)
	img("n0174965700000002.jpg", color.RGBA{128, 128, 128, 255}, 17, 90)
	// A PNG under a .jpg name decodes by content too.
	writeTestFile(tb, filepath.Join(dir, "images", "n0000000100000001.jpg"),
		pngRGBA(tb, 9, 9, func(x, y int) color.NRGBA { return color.NRGBA{0, 0, 255, 255} }))
	// Rows deliberately not grouped in class order.
	writeTestFile(tb, filepath.Join(dir, "train.csv"), []byte("filename,label\n"+
		"n0174965700000001.jpg,n01749657\n"+
		"n0153282900000005.jpg,n01532829\n"+
		"n0153282900000006.jpg,n01532829\n"+
		"n0174965700000002.jpg,n01749657\n"))
	writeTestFile(tb, filepath.Join(dir, "test.csv"), []byte("\ufefffilename,label\r\nn0000000100000001.jpg,n00000001\r\n"))
}

func TestMiniImageNetLayout(t *testing.T) {
	dir := t.TempDir()
	writeMiniImageNet(t, dir)
	d, err := ReadMiniImageNet(dir, "train", 8)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Classes, []string{"n01532829", "n01749657"}) || !reflect.DeepEqual(d.Labels, []int{1, 0, 0, 1}) ||
		!reflect.DeepEqual(d.Shape, []int{3, 8, 8}) || d.Files[0] != "images/n0174965700000001.jpg" {
		t.Fatalf("classes %v labels %v shape %v files %v", d.Classes, d.Labels, d.Shape, d.Files)
	}
	want := [][3]float64{{10, 10, 250}, {250, 10, 10}, {10, 250, 10}, {128, 128, 128}}
	for i, c := range want {
		s := d.Sample(i)
		for ch := 0; ch < 3; ch++ {
			for _, v := range s[ch*64 : (ch+1)*64] {
				if math.Abs(float64(v)-c[ch]/255) > 4.0/255 {
					t.Fatalf("sample %d channel %d: %g, want %g", i, ch, v, c[ch]/255)
				}
			}
		}
	}
	td, err := ReadMiniImageNet(dir, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if td.Len() != 1 || !reflect.DeepEqual(td.Shape, []int{3, 84, 84}) || td.Sample(0)[2*84*84] != 1 || td.Sample(0)[0] != 0 {
		t.Fatalf("test split: %d samples shape %v", td.Len(), td.Shape)
	}
}

func TestMiniImageNetBadInput(t *testing.T) {
	cases := []struct {
		name   string
		split  string
		break_ func(dir string)
		want   []string
	}{
		{"missing csv", "val", func(string) {}, []string{"split val", "val.csv"}},
		{"missing file", "train", func(dir string) {
			os.Remove(filepath.Join(dir, "images", "n0153282900000006.jpg"))
		}, []string{"train.csv line 4", "n0153282900000006.jpg"}},
		{"bad header", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("file,class\nn0153282900000005.jpg,n01532829\n"), 0o644)
		}, []string{"train.csv", "line 1", "header"}},
		{"three fields", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\nn0153282900000005.jpg,n01532829,x\n"), 0o644)
		}, []string{"line 2", "3 fields"}},
		{"bare quote", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\nn01\"53.jpg,n01532829\n"), 0o644)
		}, []string{"train.csv", "line 2"}},
		{"path in name", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\n../secret.jpg,n01532829\n"), 0o644)
		}, []string{"line 2", "plain name"}},
		{"duplicate", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\nn0153282900000005.jpg,a\nn0153282900000005.jpg,b\n"), 0o644)
		}, []string{"line 3", "already listed on line 2"}},
		{"no rows", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\n"), 0o644)
		}, []string{"no data rows"}},
		{"empty label", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "train.csv"), []byte("filename,label\nn0153282900000005.jpg,\n"), 0o644)
		}, []string{"line 2", "empty"}},
		{"not an image", "train", func(dir string) {
			os.WriteFile(filepath.Join(dir, "images", "n0153282900000005.jpg"), []byte("<html>404</html>"), 0o644)
		}, []string{"images/n0153282900000005.jpg", "not a PNG or JPEG"}},
		{"bad split", "../train", func(string) {}, []string{"bad split name"}},
	}
	for _, c := range cases {
		dir := t.TempDir()
		writeMiniImageNet(t, dir)
		c.break_(dir)
		d, err := ReadMiniImageNet(dir, c.split, 8)
		checkReadError(t, c.name, d, err, c.want)
	}
}

// FuzzParseMiniImageNetCSV: any input parses to valid rows or fails cleanly.
func FuzzParseMiniImageNetCSV(f *testing.F) {
	f.Add("filename,label\nn0153282900000005.jpg,n01532829\nn0153282900000006.jpg,n01532829\n")
	f.Add("\ufefffilename,label\r\na.jpg,x\r\n")
	f.Add("filename,label\n\"a,b.jpg\",x\n")
	f.Add("filename,label\na.jpg,x,y\n")
	f.Add("filename,label\n")
	f.Add("")
	f.Add("filename,label\n../a.jpg,x\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ParseMiniImageNetCSV(strings.NewReader(s))
		if err != nil {
			if rows != nil {
				t.Fatal("rows returned with an error")
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("no rows and no error")
		}
		seen := map[string]bool{}
		prev := 1
		for _, r := range rows {
			if r.Filename == "" || r.Label == "" || strings.ContainsAny(r.Filename, "/\\") || r.Filename == ".." || seen[r.Filename] {
				t.Fatalf("bad row accepted: %+v", r)
			}
			if r.Line <= prev {
				t.Fatalf("line numbers not increasing: %d after %d", r.Line, prev)
			}
			prev = r.Line
			seen[r.Filename] = true
		}
	})
}
