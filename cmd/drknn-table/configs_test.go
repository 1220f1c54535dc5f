package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// A config folder that holds only some of the configs the chosen cells
// need is refused (exit 2, one line naming every missing file) before
// -out is made, on both tables — never completed with the shipped
// configs (the default configs/ folder was) nor refused one missing file
// at a time (an explicit -configs DIR was).
func TestConfigFolderLackingSomeRefused(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join(configsDir, "omniglot-transfer.yaml"))
	check(t, err)
	t.Setenv(datadir.EnvVar, t.TempDir()) // no data: a cell that runs is skipped at once
	wd := t.TempDir()
	t.Chdir(wd)
	for _, dir := range []string{"configs", "mine"} {
		check(t, os.MkdirAll(dir, 0o755))
		check(t, os.WriteFile(filepath.Join(dir, "omniglot-transfer.yaml"), shipped, 0o644))
		check(t, os.WriteFile(filepath.Join(dir, "lung-cancer.yaml"), []byte("dataset: lung-cancer\nways: 3\n"), 0o644))
	}
	cases := []struct {
		args    []string
		missing []string
	}{
		{[]string{"-transfer", "-only", "omniglot,mnist"}, []string{"configs", "mnist-transfer.yaml"}},
		{[]string{"-transfer", "-configs", "mine"}, []string{"mine", "mnist-transfer.yaml", "cifar10-transfer.yaml"}},
		{[]string{"-only", "lung-cancer,covid"}, []string{"configs", "covid-ct.yaml"}},
		{[]string{"-configs", "mine"}, []string{"mine", "mnist.yaml", "cifar10.yaml", "covid-ct.yaml", "omniglot.yaml", "miniimagenet.yaml"}},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "t")
		code, so, se := table(t, append(c.args, "-quick", "-out", out)...)
		if code != 2 || so != "" || strings.Count(se, "\n") != 1 {
			t.Fatalf("%v: exit %d stdout %q stderr %q; want exit 2 and one line", c.args, code, so, se)
		}
		for _, want := range c.missing {
			if !strings.Contains(se, want) {
				t.Errorf("%v: stderr %q does not name %s", c.args, se, want)
			}
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the refused table made %s (%v)", c.args, out, err)
		}
	}
	// The cells the folder has configs for run from it.
	out := filepath.Join(t.TempDir(), "t")
	if code, _, se := table(t, "-transfer", "-quick", "-only", "omniglot-5w1s", "-configs", "mine", "-out", out); code != 0 || !strings.Contains(se, "omniglot") {
		t.Fatalf("exit %d: %s", code, se)
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
