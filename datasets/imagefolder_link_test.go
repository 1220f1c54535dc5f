package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageFolderBrokenImageLink: a symbolic link with an image extension
// whose target does not exist is an image the reader cannot read, and is
// reported as a corrupt image is — an ErrCorrupt error naming the file —,
// not skipped as a non-image without a word (it was counted among
// "skipped … non-image (files)" only). A broken link without an image
// extension is still skipped and counted; WalkFolderFiles lists the first,
// not the second.
func TestImageFolderBrokenImageLink(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "pets")
	files := folderFixture(t)
	writeTree(t, root, files)
	if err := os.Symlink("/nonexistent/a.png", filepath.Join(root, "dog", "zz.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/nonexistent/notes", filepath.Join(root, "dog", "notes-link")); err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := WalkFolderFiles(DirFS(root), "dog", &Report{}, func(p string) { listed = append(listed, p) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(listed, " "), "dog/zz.png") || strings.Contains(strings.Join(listed, " "), "notes-link") {
		t.Errorf("WalkFolderFiles listed %q; want dog/zz.png and not dog/notes-link", listed)
	}
	for _, size := range []int{4, 0} { // 0: the native size, every header read first
		_, err := ReadImageFolder(DirFS(root), root, ImageFolderOptions{Size: size})
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(root, "dog", "zz.png")) ||
			!strings.Contains(err.Error(), "broken symbolic link") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("size %d: %v; want an ErrCorrupt error naming dog/zz.png, a broken symbolic link", size, err)
		}
	}
	// Without it the folder reads, the other broken link skipped.
	os.Remove(filepath.Join(root, "dog", "zz.png"))
	if _, err := ReadImageFolder(DirFS(root), root, ImageFolderOptions{Size: 4}); err != nil {
		t.Fatal(err)
	}
}
