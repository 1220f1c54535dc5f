package predict

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// TestSymlinkedFolders: symbolic links to folders are followed the same
// way by the image-folder reader and by -images: a folder named by a link
// (was "no image files in linkdir", and dropped silently beside other
// files), a class folder that is a link, and a link to a folder inside a
// class folder (was counted as a "non-image" file by the reader, skipped
// by -images); a link back to a folder it is in is skipped, counted in
// Report.LinkLoops, never walked without end.
func TestSymlinkedFolders(t *testing.T) {
	base := t.TempDir()
	write := func(rel string, v uint8) {
		g := image.NewGray(image.Rect(0, 0, 5, 4))
		for i := range g.Pix {
			g.Pix[i] = v + uint8(i)
		}
		var b bytes.Buffer
		must(t, png.Encode(&b, g))
		p := filepath.Join(base, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b.Bytes(), 0o644))
	}
	write("data/cat/a.png", 10)
	write("data/cat/z.png", 20)
	write("elsewhere/dogs/d.png", 30)
	write("elsewhere/more/m1.png", 40)
	write("elsewhere/more/m2.png", 50)
	at := func(rel string) string { return filepath.Join(base, filepath.FromSlash(rel)) }
	must(t, os.Symlink(at("elsewhere/dogs"), at("data/dog")))         // a class folder that is a link
	must(t, os.Symlink(at("elsewhere/more"), at("data/cat/more")))    // a link to a folder inside a class
	must(t, os.Symlink(at("data/cat"), at("data/cat/loop")))          // back to its own folder
	must(t, os.Symlink(at("data"), at("data/dog/../../data/cat/up"))) // back to the root
	must(t, os.Symlink(at("data"), at("datalink")))                   // the root named by a link

	d, err := datasets.ReadImageFolder(os.DirFS(at("datalink")), at("datalink"), datasets.ImageFolderOptions{Size: 4})
	must(t, err)
	wantFiles := []string{"cat/a.png", "cat/more/m1.png", "cat/more/m2.png", "cat/z.png", "dog/d.png"}
	if !slices.Equal(d.Files, wantFiles) {
		t.Fatalf("reader: %q, want %q", d.Files, wantFiles)
	}
	if d.Report == nil || d.Report.LinkLoops != 2 || d.Report.NotImage != 0 || !strings.Contains(d.Report.Summary(), "2 symbolic link(s) to a folder they are in (loops)") {
		t.Fatalf("reader's report %+v: %q", d.Report, d.Report.Summary())
	}
	for _, root := range []string{"data", "datalink"} {
		var want []string
		for _, f := range d.Files {
			want = append(want, filepath.Join(at(root), filepath.FromSlash(f)))
		}
		got, err := ExpandImages([]string{at(root)})
		must(t, err)
		if !slices.Equal(got, want) {
			t.Errorf("-images %s: %q, the reader reads %q", root, got, want)
		}
		// Beside a file, the linked folder is not dropped.
		got, err = ExpandImages([]string{at("elsewhere/dogs/d.png"), at(root)})
		must(t, err)
		if len(got) != 1+len(want) {
			t.Errorf("-images d.png %s: %q", root, got)
		}
	}
	m := imageFolderModel(t, d)
	preds, err := m.PredictFiles(Inputs{Images: []string{at("datalink")}}, Options{})
	must(t, err)
	if len(preds) != len(wantFiles) || Failed(preds) != 0 {
		t.Fatalf("predictions %+v", preds)
	}
}

// A symbolic link to a folder above the walk's root (the parent of -images'
// folder, of data_dir) is a loop too: skipped and counted. It was walked
// once — -images top/imgs read imgs/a.png twice and top/other/secret.png,
// never asked for; the reader read every image of the data set a second
// time under class "cat" (dog's b.png mislabelled).
func TestSymlinkAboveRoot(t *testing.T) {
	base := t.TempDir()
	write := func(rel string) {
		var b bytes.Buffer
		must(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, 5, 4))))
		p := filepath.Join(base, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b.Bytes(), 0o644))
	}
	at := func(rel string) string { return filepath.Join(base, filepath.FromSlash(rel)) }
	write("top/imgs/a.png")
	write("top/other/secret.png")
	must(t, os.Symlink("..", at("top/imgs/up")))
	got, err := ExpandImages([]string{at("top/imgs")})
	if err != nil || !slices.Equal(got, []string{at("top/imgs/a.png")}) {
		t.Errorf("-images top/imgs: %q %v, want only its a.png", got, err)
	}
	write("p/data/cat/a.png")
	write("p/data/dog/b.png")
	must(t, os.Symlink("../..", at("p/data/cat/up")))
	must(t, os.Symlink(base, at("p/data/dog/abs"))) // an absolute link above the root
	d, err := datasets.Load("imagefolder", at("p/data"), datasets.Options{Size: 4})
	must(t, err)
	if !slices.Equal(d.Files, []string{"cat/a.png", "dog/b.png"}) || d.Report.LinkLoops != 2 {
		t.Fatalf("reader: %q, %d loops; want cat/a.png, dog/b.png and 2 loops", d.Files, d.Report.LinkLoops)
	}
}
