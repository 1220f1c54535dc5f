// Package configs holds the experiment configurations shipped with drknn
// (the YAML files of this folder), embedded in the binaries so that
// `drknn-train -config mnist.yaml` works from any directory once the
// commands are installed. experiment.LoadConfig falls back to them when no
// file exists at the path it is given.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names returns the shipped configs' file names ("mnist.yaml", …), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// Name returns the shipped config that name means — "mnist", "mnist.yaml"
// or "configs/mnist.yaml" (the path in a clone of the repository) — and
// whether there is one. Any other folder, or a name that is not shipped,
// gives false.
func Name(name string) (string, bool) {
	dir, base := path.Split(strings.ReplaceAll(name, `\`, "/"))
	if dir != "" && dir != "configs/" && dir != "./configs/" {
		return "", false
	}
	if path.Ext(base) == "" {
		base += ".yaml"
	}
	if !slices.Contains(Names(), base) {
		return "", false
	}
	return base, true
}

// Read returns the shipped config that name means (see Name).
func Read(name string) ([]byte, error) {
	base, ok := Name(name)
	if !ok {
		return nil, fmt.Errorf("no shipped config %q (shipped: %s)", name, strings.Join(Names(), ", "))
	}
	return files.ReadFile(base)
}

// Summary returns the first sentence of a shipped config's leading comment
// (what it runs), joined into one line without the "# " markers.
func Summary(name string) string {
	b, err := Read(name)
	if err != nil {
		return ""
	}
	var words []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		words = append(words, strings.Fields(strings.TrimPrefix(line, "#"))...)
		for i, w := range words {
			if strings.HasSuffix(w, ".") && !slices.Contains([]string{"e.g.", "i.e.", "vs."}, w) {
				return strings.Join(words[:i+1], " ")
			}
		}
	}
	return strings.Join(words, " ")
}
