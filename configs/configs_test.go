package configs

import (
	"os"
	"path/filepath"
	"slices"
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
