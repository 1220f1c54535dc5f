package train

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckpointSizeHintSameBytes: the size hint only presizes the buffer —
// no hint, a small one and a large one write the same file.
func TestCheckpointSizeHintSameBytes(t *testing.T) {
	dir := t.TempDir()
	ck := checkpoint{Version: checkpointVersion, Key: "k", Net: bytes.Repeat([]byte{1, 2, 3}, 5000),
		Adam: bytes.Repeat([]byte{7}, 9000), History: []StepStats{{Step: 1, Risk: 0.5}, {Step: 2, Risk: 0.25}}}
	var files [][]byte
	for i, size := range []int{0, 100, 1 << 20} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := writeCheckpointSized(p, checkpointVersion, ck, size); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		var back checkpoint
		if err := readCheckpoint(p, checkpointVersion, &back); err != nil || back.Key != "k" || !bytes.Equal(back.Net, ck.Net) {
			t.Fatalf("size %d: read back %v (key %q)", size, err, back.Key)
		}
	}
	for i := 1; i < len(files); i++ {
		if !bytes.Equal(files[i], files[0]) {
			t.Fatalf("size hint %d changed the file", i)
		}
	}
}
