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

// Outside a module (an installed command run elsewhere) Dir is
// ../shared/data beside the working directory, as an absolute path: a
// message about a missing folder names where it looked, not "../shared/data".
func TestDefaultOutsideModule(t *testing.T) {
	t.Setenv(EnvVar, "")
	wd := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	wd, _ = os.Getwd()
	for d := wd; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(filepath.Dir(d), "go.mod")); err == nil {
			t.Skipf("the temporary folder %s is inside a module", wd)
		}
	}
	got := Dir()
	if want := filepath.Join(filepath.Dir(wd), "shared", "data"); got != want || !filepath.IsAbs(got) {
		t.Fatalf("Dir() = %q outside a module, want %q", got, want)
	}
}
