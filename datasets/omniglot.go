package datasets

import (
	"archive/zip"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Omniglot set names as published (github.com/brendenlake/omniglot, python/).
const (
	OmniglotBackground = "images_background" // 30 alphabets, 964 characters, 19,280 drawings
	OmniglotEvaluation = "images_evaluation" // 20 alphabets, 659 characters, 13,180 drawings
)

// OmniglotSets is the default choice of sets: background then evaluation.
var OmniglotSets = []string{OmniglotBackground, OmniglotEvaluation}

// OmniglotNativeSize is the side of an upstream Omniglot drawing.
const OmniglotNativeSize = 105

// OmniglotOptions selects what ReadOmniglot reads and how.
type OmniglotOptions struct {
	// Sets lists the sets to read, in order; nil or empty means OmniglotSets.
	// A name is "images_background", "images_evaluation",
	// "images_background_small1", … ("background", "evaluation", … with the
	// "images_" prefix left off are accepted too). Each is read from the
	// folder DIR/NAME when it exists, otherwise from the official zip
	// DIR/NAME.zip in place.
	Sets []string
	// ByAlphabet makes the classes alphabets ("Latin") instead of characters
	// ("Latin/character01").
	ByAlphabet bool
	// Size, when > 0, downsamples every drawing to Size×Size by exact area
	// averaging (28 is the usual few-shot choice); 0 keeps the native
	// 105×105 (which takes 1.4 GB as float32 for all 32,460 drawings).
	Size int
	// RawPolarity keeps the upstream polarity (1 = white paper, 0 = ink).
	// By default pixels are inverted so that 1 = stroke and 0 = background,
	// as in the usual few-shot pipelines.
	RawPolarity bool
}

// ReadOmniglot reads Omniglot (Lake et al. 2015) from dir, which holds the
// sets either unzipped (NAME/<Alphabet>/characterNN/*.png) or as the official
// zips (NAME.zip, read in place without extracting).
//
// Order and labels: sets in the order of opts.Sets (default background then
// evaluation), within a set alphabets sorted by name, within an alphabet
// characters sorted by name, within a character files sorted by name. Each
// character is a class named "Alphabet/characterNN" (labels in that order:
// the 964 background characters come first, then the 659 evaluation ones);
// with ByAlphabet each alphabet is a class instead. A class name that occurs
// in two sets (e.g. images_background and images_background_small1) is an
// error.
//
// Pixels: the PNGs are 1-bit, ink 0 on white 1. By default they are inverted
// (1 = stroke); after area averaging a pixel is the fraction of its area
// covered by ink. Shape is [1, Size, Size] (or [1, 105, 105]). Drawings are
// decoded on all cores; the result does not depend on scheduling.
func ReadOmniglot(dir string, opts OmniglotOptions) (*Dataset, error) {
	if opts.Size < 0 {
		return nil, fmt.Errorf("omniglot: size %d must be ≥ 0 (0 = native %d×%d)", opts.Size, OmniglotNativeSize, OmniglotNativeSize)
	}
	sets := opts.Sets
	if len(sets) == 0 {
		sets = OmniglotSets
	}
	var (
		items    []imageItem
		classes  []string
		classIdx = map[string]int{}
		closers  []func() error
	)
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for _, set := range sets {
		if set == "" || strings.ContainsAny(set, `/\`) || set == "." || set == ".." {
			return nil, fmt.Errorf("omniglot: bad set name %q", set)
		}
		if !strings.HasPrefix(set, "images_") {
			set = "images_" + set
		}
		chars, closer, err := omniglotSet(dir, set)
		if closer != nil {
			closers = append(closers, closer)
		}
		if err != nil {
			return nil, classify(fmt.Errorf("omniglot: %w", err))
		}
		seenHere := map[string]bool{}
		for _, ch := range chars {
			cls := ch.alphabet + "/" + ch.character
			if opts.ByAlphabet {
				cls = ch.alphabet
			}
			lab, ok := classIdx[cls]
			if !ok {
				lab = len(classes)
				classIdx[cls] = lab
				classes = append(classes, cls)
			} else if !seenHere[cls] {
				return nil, corruptf("omniglot: class %q occurs in more than one of the sets %v", cls, sets)
			}
			seenHere[cls] = true
			for _, it := range ch.files {
				it.label = lab
				items = append(items, it)
			}
		}
	}
	size := opts.Size
	h, w := size, size
	if size == 0 {
		h, w = OmniglotNativeSize, OmniglotNativeSize
	}
	invert := !opts.RawPolarity
	convert := func(data []byte) ([]float32, error) { return omniglotImage(data, h, w, invert, size == 0) }
	d, err := decodeItems("omniglot", dir, []int{1, h, w}, classes, items, convert)
	if err != nil {
		return nil, fmt.Errorf("omniglot: %w", err)
	}
	return d, nil
}

// omniglotChar is one character folder: its drawings, in file-name order.
type omniglotChar struct {
	alphabet, character string
	files               []imageItem
}

// omniglotSet lists one set, from DIR/set/ if that folder exists, otherwise
// from DIR/set.zip. The returned closer (possibly nil) releases the zip.
func omniglotSet(dir, set string) ([]omniglotChar, func() error, error) {
	folder := filepath.Join(dir, set)
	if fi, err := os.Stat(folder); err == nil && fi.IsDir() {
		chars, err := omniglotFolder(folder, set)
		return chars, nil, err
	}
	zipPath := folder + ".zip"
	if _, err := os.Stat(zipPath); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, notFoundf("set %s not found: neither folder %s nor zip %s exists", set, folder, zipPath)
		}
		return nil, nil, err
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, nil, classify(fmt.Errorf("%s: %w", zipPath, err))
	}
	chars, err := omniglotZip(&zr.Reader, set+".zip", set)
	if err != nil {
		return nil, zr.Close, corruptf("%s: %w", zipPath, err)
	}
	return chars, zr.Close, nil
}

// omniglotFolder lists set/<Alphabet>/<character>/<file> under folder.
// Item names are relative to the parent of folder ("images_background/…").
func omniglotFolder(folder, set string) ([]omniglotChar, error) {
	alphabets, err := listDir(folder, true)
	if err != nil {
		return nil, err
	}
	var chars []omniglotChar
	for _, a := range alphabets {
		charNames, err := listDir(filepath.Join(folder, a), true)
		if err != nil {
			return nil, err
		}
		for _, c := range charNames {
			cdir := filepath.Join(folder, a, c)
			files, err := listDir(cdir, false)
			if err != nil {
				return nil, err
			}
			ch := omniglotChar{alphabet: a, character: c}
			for _, f := range files {
				ch.files = append(ch.files, fileItem(filepath.Join(cdir, f), path.Join(set, a, c, f), 0))
			}
			chars = append(chars, ch)
		}
	}
	return chars, nil
}

// omniglotZip lists the entries SET/<Alphabet>/<character>/<file> of an
// official Omniglot zip. Item names are "ZIPNAME:ENTRY". Folder entries are
// used only to detect empty character folders; anything else out of that
// layout is an error.
func omniglotZip(zr *zip.Reader, zipName, set string) ([]omniglotChar, error) {
	type key struct{ a, c string }
	files := map[key][]*zip.File{}
	alphabets := map[string]bool{}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, "/")
		parts := strings.Split(name, "/")
		skip := false
		for _, p := range parts {
			if skipName(p) {
				skip = true
			}
		}
		if skip {
			continue
		}
		if parts[0] != set {
			return nil, fmt.Errorf("entry %q is not under %s/", f.Name, set)
		}
		isDir := strings.HasSuffix(f.Name, "/") || f.FileInfo().IsDir()
		for _, p := range parts[1:] {
			if p == "" || p == "." || p == ".." {
				return nil, fmt.Errorf("entry %q: bad path", f.Name)
			}
		}
		switch {
		case len(parts) == 1 && isDir:
		case len(parts) == 2 && isDir:
			alphabets[parts[1]] = true
		case len(parts) == 3 && isDir:
			alphabets[parts[1]] = true
			k := key{parts[1], parts[2]}
			if _, ok := files[k]; !ok {
				files[k] = nil
			}
		case len(parts) == 4 && !isDir:
			alphabets[parts[1]] = true
			k := key{parts[1], parts[2]}
			files[k] = append(files[k], f)
		default:
			return nil, fmt.Errorf("entry %q is not SET/Alphabet/characterNN/drawing.png", f.Name)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no character folders under %s/", set)
	}
	keys := make([]key, 0, len(files))
	hasChars := map[string]bool{}
	for k := range files {
		keys = append(keys, k)
		hasChars[k.a] = true
	}
	for _, a := range slices.Sorted(maps.Keys(alphabets)) { // the first in name order, whatever the map's order
		if !hasChars[a] {
			return nil, fmt.Errorf("%s/%s: empty alphabet folder (no characters)", set, a)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].a != keys[j].a {
			return keys[i].a < keys[j].a
		}
		return keys[i].c < keys[j].c
	})
	chars := make([]omniglotChar, 0, len(keys))
	for _, k := range keys {
		fs := files[k]
		if len(fs) == 0 {
			return nil, fmt.Errorf("%s/%s/%s: empty character folder (no image files)", set, k.a, k.c)
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
		ch := omniglotChar{alphabet: k.a, character: k.c}
		for i, f := range fs {
			if i > 0 && fs[i-1].Name == f.Name {
				return nil, fmt.Errorf("entry %q occurs twice", f.Name)
			}
			ch.files = append(ch.files, zipItem(f, zipName+":"+f.Name))
		}
		chars = append(chars, ch)
	}
	return chars, nil
}

// zipItem returns an imageItem that reads one zip entry (checking its CRC).
func zipItem(f *zip.File, name string) imageItem {
	return imageItem{name: name, read: func() ([]byte, error) {
		if f.UncompressedSize64 > MaxImageFileBytes {
			return nil, fmt.Errorf("entry larger than %d bytes", MaxImageFileBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return readAllLimited(rc)
	}}
}
