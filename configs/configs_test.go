package configs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The embedded set is exactly the YAML files of this folder, byte for byte.
func TestEmbeddedAreTheFiles(t *testing.T) {
	disk, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(disk)
	if got := Names(); !slices.Equal(got, disk) || len(got) < 7 {
		t.Fatalf("embedded %v, on disk %v", got, disk)
	}
	for _, name := range disk {
		want, _ := os.ReadFile(name)
		got, err := Read(name)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: embedded copy differs (%v)", name, err)
		}
		if Summary(name) == "" {
			t.Errorf("%s has no first comment line saying what it runs", name)
		}
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{"mnist": "mnist.yaml", "mnist.yaml": "mnist.yaml", "configs/mnist.yaml": "mnist.yaml", "./configs/synthetic.yaml": "synthetic.yaml"} {
		if got, ok := Name(in); !ok || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"mnsit.yaml", "/home/u/mnist.yaml", "other/mnist.yaml", "", "mnist.yml"} {
		if got, ok := Name(in); ok {
			t.Errorf("Name(%q) = %q, want no shipped config", in, got)
		}
	}
	if _, err := Read("nope"); err == nil {
		t.Fatal("Read of an unknown name succeeded")
	}
}

// TestSummaryWholeSentence: -list-configs shows the first sentence of a
// config's comment even when it wraps over lines (it used to stop at the
// line's end: "trained on airplane, automobile, bird, cat").
func TestSummaryWholeSentence(t *testing.T) {
	for name, want := range map[string]string{
		"synthetic.yaml":        "Built-in synthetic images: needs no files, runs anywhere in well under a minute.",
		"cifar10-transfer.yaml": "(5–9).",
		"mnist.yaml":            "2-way 5-shot).",
	} {
		if got := Summary(name); !strings.HasSuffix(got, want) || strings.Contains(got, "#") {
			t.Errorf("%s: %q, want it to end %q", name, got, want)
		}
	}
}
