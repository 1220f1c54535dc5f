package datadir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnvOverride(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	if got := Dir(); got != dir {
		t.Fatalf("Dir() = %q with %s=%q", got, EnvVar, dir)
	}
	if _, err := Require("missing-subfolder"); err == nil {
		t.Fatal("Require of a missing path returned no error")
	}
}

// TestDefaultBesideModule checks the default rule on a layout the test
// builds: from any folder inside a module, Dir is ../shared/data beside the
// module root. It does not depend on where this checkout lives.
func TestDefaultBesideModule(t *testing.T) {
	t.Setenv(EnvVar, "")
	root := t.TempDir()
	mod := filepath.Join(root, "clone")
	sub := filepath.Join(mod, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "shared", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "PROVENANCE.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	got := Dir()
	if want, _ := filepath.EvalSymlinks(data); got != data && got != want {
		t.Fatalf("Dir() = %q, want %q", got, data)
	}
	if _, err := Require("PROVENANCE.md"); err != nil {
		t.Fatalf("Require: %v", err)
	}
	if _, err := Require("absent"); err == nil {
		t.Fatal("Require of an absent file returned no error")
	}
}
