package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// writeConfigs writes the named config files into dir, each reading a data
// set from a folder that does not exist (its cells are skipped: no work).
func writeConfigs(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		ds := strings.TrimSuffix(n, ".yaml")
		src := "dataset: " + ds + "\ndata_dir: absent\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The table reads every cell's config from one folder: a config folder
// that lacks some of the configs its cells need is refused before any
// work, naming every missing file — never completed silently with the
// shipped configs (the default folder configs/ did that) nor refused one
// file at a time (an explicit folder did that, with "no shipped config of
// that name" for a name that is shipped). Without a configs/ folder every
// cell reads its shipped config.
func TestTableConfigFolderNeverMixed(t *testing.T) {
	t.Setenv(datadir.EnvVar, t.TempDir()) // no built-in data set: cells are skipped
	wd := t.TempDir()
	t.Chdir(wd)

	// No configs/ here: the shipped configs, all of them.
	out := filepath.Join(wd, "shipped")
	cells, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Config != "lung-cancer.yaml (shipped)" || cells[0].Skipped == "" {
		t.Fatalf("cells %+v, want 2 skipped cells of the shipped lung-cancer.yaml", cells)
	}

	// The default folder configs/, holding mnist.yaml only.
	writeConfigs(t, "configs", "mnist.yaml")
	for _, dir := range []string{"", "configs"} {
		out := filepath.Join(t.TempDir(), "t")
		_, err := RunTable(t.Context(), TableOptions{OutDir: out, ConfigDir: dir, Only: []string{"mnist", "lung-cancer"}})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lung-cancer.yaml") || !strings.Contains(err.Error(), "configs") ||
			strings.Contains(err.Error(), "mnist.yaml") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("ConfigDir %q holding mnist.yaml only, cells of mnist and lung-cancer: %v", dir, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("the refused table created %s (%v)", out, err)
		}
	}
	// The cells it has a config for run from it.
	cells, err = RunTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "mnist"), Only: []string{"mnist-2w5s"}})
	if err != nil || len(cells) != 1 || cells[0].Config != filepath.Join("configs", "mnist.yaml") || !strings.Contains(cells[0].Skipped, "absent") {
		t.Fatalf("cells %+v, error %v: want mnist-2w5s from configs/mnist.yaml, skipped (its data_dir is absent)", cells, err)
	}

	// Another folder: every missing file named at once.
	writeConfigs(t, "mine", "mnist.yaml", "omniglot.yaml")
	_, err = RunTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "mine-table"), ConfigDir: "mine"})
	if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("ConfigDir mine: %v", err)
	}
	for _, want := range []string{"mine", "miniimagenet.yaml", "cifar10.yaml", "lung-cancer.yaml", "covid-ct.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	// A folder that does not exist is not the shipped configs.
	if _, err := RunTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "x"), ConfigDir: "nowhere", Only: []string{"lung-cancer"}}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("ConfigDir nowhere: %v", err)
	}
}

// TestTableProtocolFixed: the tables fix the protocol — Table 1 runs
// episodes, the transfer table transfer — so -set protocol=… is refused
// before any work, as -set ways is (protocol=fit wrote a Table 1 of 5-fold
// cross-validation scores under the episodes' headings), and so is a
// Table 1 cell whose config from a -configs folder is of another protocol.
func TestTableProtocolFixed(t *testing.T) {
	for _, set := range []string{"protocol=fit", "protocol=paper-lung", " protocol = episodes", "protocol=transfer"} {
		out := filepath.Join(t.TempDir(), "t")
		_, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer"}, Quick: true, Sets: []string{set}})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "-set protocol: the table fixes the protocol") {
			t.Errorf("-set %s: %v", set, err)
		}
		_, err = RunTransferTable(t.Context(), TableOptions{OutDir: out, Only: []string{"mnist"}, Quick: true, Sets: []string{set}})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "-set protocol: the table fixes the protocol") {
			t.Errorf("transfer table -set %s: %v", set, err)
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("-set %s: a refused table made its folder (%v)", set, serr)
		}
	}
	dir := t.TempDir()
	src, _, err := ReadConfigSource("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lung-cancer.yaml"), append(src, "\nprotocol: fit\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "t")
	_, err = RunTable(t.Context(), TableOptions{OutDir: out, ConfigDir: dir, Only: []string{"lung-cancer"}, Quick: true})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "key protocol = fit: Table 1's cells run the episodes protocol") {
		t.Errorf("a fit config in the -configs folder: %v", err)
	}
}

// TestTransferTableConfigFolderNeverMixed: RunTransferTable itself (the
// library function, not only drknn-table) reads every cell's config from
// one folder, as RunTable: a configs/ folder holding omniglot-transfer.yaml
// only, for cells of omniglot and mnist, is refused before any work naming
// mnist-transfer.yaml — it ran mnist's cells from the shipped config
// without a word. Without a configs/ folder every cell reads its shipped
// config; the cells it has a config for run from the folder.
func TestTransferTableConfigFolderNeverMixed(t *testing.T) {
	t.Setenv(datadir.EnvVar, t.TempDir()) // no built-in data set: cells are skipped
	wd := t.TempDir()
	t.Chdir(wd)

	if err := os.MkdirAll("configs", 0o755); err != nil {
		t.Fatal(err)
	}
	src := "dataset: omniglot\nprotocol: transfer\ndata_dir: absent\ndata: {val_classes: 5}\nmodel: {kind: conv4}\n"
	if err := os.WriteFile(filepath.Join("configs", "omniglot-transfer.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", "configs"} {
		out := filepath.Join(t.TempDir(), "t")
		_, err := RunTransferTable(t.Context(), TableOptions{OutDir: out, ConfigDir: dir, Only: []string{"omniglot", "mnist"}})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "mnist-transfer.yaml") || !strings.Contains(err.Error(), "configs") ||
			strings.Contains(err.Error(), "omniglot-transfer.yaml") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("ConfigDir %q holding omniglot-transfer.yaml only, cells of omniglot and mnist: %v", dir, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("the refused transfer table created %s (%v)", out, err)
		}
	}
	cells, err := RunTransferTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "omniglot"), Only: []string{"omniglot"}})
	if err != nil || len(cells) != 4 || cells[0].Config != filepath.Join("configs", "omniglot-transfer.yaml") || !strings.Contains(cells[0].Skipped, "absent") {
		t.Fatalf("cells %+v, error %v: want the omniglot cells from configs/omniglot-transfer.yaml, skipped (its data_dir is absent)", cells, err)
	}
	// A folder that does not exist is not the shipped configs.
	if _, err := RunTransferTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "x"), ConfigDir: "nowhere", Only: []string{"mnist"}}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("ConfigDir nowhere: %v", err)
	}

	t.Chdir(t.TempDir()) // no configs/ folder: the shipped configs
	cells, err = RunTransferTable(t.Context(), TableOptions{OutDir: filepath.Join(wd, "shipped"), Only: []string{"mnist"}})
	if err != nil || len(cells) != 2 || cells[0].Config != "mnist-transfer.yaml (shipped)" || cells[0].Skipped == "" {
		t.Fatalf("cells %+v, error %v: want 2 skipped cells of the shipped mnist-transfer.yaml", cells, err)
	}
}
