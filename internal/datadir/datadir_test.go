package datadir

import (
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

func TestDefaultBesideModule(t *testing.T) {
	t.Setenv(EnvVar, "")
	got := Dir()
	if filepath.Base(got) != "data" || filepath.Base(filepath.Dir(got)) != "shared" {
		t.Fatalf("Dir() = %q, want …/shared/data", got)
	}
	if _, err := Require("PROVENANCE.md"); err != nil {
		t.Fatalf("the real data must be beside the module: %v", err)
	}
}
