package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drknn/drknn/internal/errkind"
	"golang.org/x/image/draw"
)

// ImageFolderOptions selects how ReadImageFolder converts the images.
type ImageFolderOptions struct {
	// Grey reduces every image to one BT.601 luma channel (JPEG: its Y
	// channel), Shape [1, H, W]. When false the channel count is automatic:
	// one channel when every image is grey (R = G = B at every pixel, which
	// includes grey PNGs, grey JPEGs and grey images stored as RGB), three
	// (R, G, B) otherwise — grey images then get three equal channels.
	Grey bool
	// Size is the side of the square output: every image is resampled to
	// Size×Size with the Catmull-Rom filter of golang.org/x/image/draw
	// (widened when shrinking, so it averages; non-square images are
	// stretched, not cropped). 0 keeps the native size, which must then be
	// the same for every image.
	Size int
	// Part reads one part of a split folder: "train" or "test" (its train/
	// or test/ folder, in any letter case); "" reads both (and a plain
	// folder). Naming a part of a folder that is not split
	// is an ErrConfig error.
	Part string
}

// imageExts are the file name extensions of the formats ReadImageFolder
// decodes. A file with one of them must decode; any other file is decoded
// when its content is an image and skipped (counted) otherwise.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".jpe": true, ".gif": true, ".bmp": true, ".dib": true, ".webp": true}

// maxFolderValues bounds the float32 values an image folder may produce
// (8 GiB); beyond it the caller must choose a smaller Size.
const maxFolderValues = 1 << 31

// folderItem is one file found in a class folder.
type folderItem struct {
	path  string // slash-separated path inside the fs.FS
	class int    // index into the sorted class names
	test  bool   // from test/ of a split folder
}

// ReadImageFolder reads an image classification folder from fsys (the
// layout of torchvision's ImageFolder): one sub-folder per class,
// ROOT/<class>/<file>, files in nested folders of a class belonging to it.
// root names the folder in messages and Files are relative to it.
//
// A split folder — one whose only sub-folders are train/ and test/ (in any
// letter case: Train/ and Test/ too, Files keeping the names as found), each
// laid out as above — is read whole: train/ first, then test/; Dataset.Test
// marks the samples from test/; classes are the union of both parts (a
// class whose folder exists in one part only is kept and listed in
// Report.TrainOnly/TestOnly; a class folder must hold an image in each
// part where it exists). ImageFolderOptions.Part reads one part alone. Top-level
// folders that all name data set parts (train, val, valid, validation,
// test, in any letter case) without being exactly train/ and test/ — say
// train/, val/ and test/, or a lone train/ — are an ErrCorrupt error naming
// the folder: they are never read as classes named after the parts.
//
// Natural order: classes sorted by folder name (labels in that order, class
// names = folder names); within a class, files in the order of a
// depth-first walk (fs.WalkDir): a folder's entries by name in byte order,
// a sub-folder's files where its name falls among them. That is not plain
// path order: cat/a/b.png comes before cat/a-1.png ("a" < "a-1.png",
// though "a/" > "a-"), and the order stays as it is so that seeded results
// do not change. Images are
// decoded by content (PNG, JPEG, GIF's first frame — on the GIF's logical
// screen, zero where the frame does not cover it —, BMP, WebP) on all
// cores, at most about MaxImagePixels pixels at once (decodeImage's
// budget); the result does not depend on scheduling. Alpha is ignored (never
// composited). See ImageFolderOptions for channels and size.
//
// Skipped and counted in Dataset.Report: hidden files and folders (names
// starting with "."; __MACOSX), files outside class folders, and files whose
// content is not an image unless their name says it is one (.png, .jpg,
// .jpeg, .gif, .bmp, .webp: those must decode). Content is judged from a
// file's first bytes, so a non-image of any size is skipped without being
// read whole; an image file larger than MaxImageFileBytes is an error. An image that does not
// decode — or a broken symbolic link with an image extension — is an
// ErrCorrupt error naming the file, as is a class folder with
// no image (of a split folder: in its part, as when that part is read
// alone); a missing folder or one without class folders is ErrNotFound;
// a Part of a folder that is not split is ErrConfig.
func ReadImageFolder(fsys fs.FS, root string, opts ImageFolderOptions) (*Dataset, error) {
	if opts.Size < 0 {
		return nil, fmt.Errorf("imagefolder: size %d must be ≥ 0 (0 = native size)", opts.Size)
	}
	if opts.Part != "" && opts.Part != "train" && opts.Part != "test" {
		return nil, fmt.Errorf("imagefolder: part %q: want train, test or \"\" (both)", opts.Part)
	}
	rep := &Report{}
	items, classes, folders, split, err := listImageFolder(fsys, root, opts.Part, rep)
	if err != nil {
		return nil, err
	}
	display := func(p string) string { return path.Join(root, p) }

	// Native size: every image's header must agree.
	h, w := opts.Size, opts.Size
	if opts.Size == 0 {
		if h, w, err = nativeSize(fsys, items, display); err != nil {
			return nil, err
		}
	}
	if int64(len(items))*3*int64(h)*int64(w) > maxFolderValues {
		return nil, fmt.Errorf("imagefolder: %s: %d images of %d×%d would take more than %d GiB: set a smaller size (data.size)",
			root, len(items), w, h, maxFolderValues*4>>30)
	}

	// Decode on all cores; each item writes only its own slots.
	samples := make([][]float32, len(items))
	greyImg := make([]bool, len(items))
	skipped := make([]bool, len(items))
	err = parallelFor(len(items), func(i int) error {
		it := items[i]
		data, isImage, err := readFolderFile(fsys, it.path)
		if errors.Is(err, fs.ErrNotExist) {
			// listed, so there: a broken link (WalkFolderFiles), reported
			// as a corrupt image is, not as a data set that is absent
			return corruptf("imagefolder: %s: a broken symbolic link (its target does not exist)", display(it.path))
		}
		if err != nil {
			return classify(fmt.Errorf("imagefolder: %s: %w", display(it.path), err))
		}
		if !isImage {
			if !imageExts[strings.ToLower(path.Ext(it.path))] {
				skipped[i] = true
				return nil
			}
			return corruptf("imagefolder: %s: %w", display(it.path), errNotImage)
		}
		img, release, err := decodeImage(data, MaxImagePixels)
		if err != nil {
			return corruptf("imagefolder: %s: %w", display(it.path), err)
		}
		defer release()
		samples[i], greyImg[i] = convertFolderImage(img, opts.Grey, h, w)
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Channels: forced grey, or grey when every image is.
	allGrey := true
	for i := range items {
		if !skipped[i] {
			allGrey = allGrey && greyImg[i]
		} else {
			rep.NotImage++
		}
	}
	// Every class folder of every part holds an image: a class of a split
	// folder without any in test/ (or train/) is reported, never silently
	// trained or tested without samples of that part.
	for _, f := range folders {
		if !slices.Contains(skipped[f.lo:f.hi], false) {
			return nil, corruptf("imagefolder: %s: class folder %q holds no image (only other files)", display(f.part), f.class)
		}
	}
	channels := 3
	switch {
	case opts.Grey:
		channels, rep.Channels = 1, "grey (requested)"
	case allGrey:
		channels, rep.Channels = 1, "grey (every image is grey)"
	default:
		rep.Channels = "RGB (some images have colour)"
	}
	plane := h * w
	d := &Dataset{Name: "imagefolder", Shape: []int{channels, h, w}, Classes: classes, Report: rep}
	for i, it := range items {
		if skipped[i] {
			continue
		}
		s := samples[i]
		d.X = append(d.X, s...)
		if channels == 3 && len(s) == plane { // a grey image among colour ones
			d.X = append(append(d.X, s...), s...)
		}
		d.Labels = append(d.Labels, it.class)
		d.Files = append(d.Files, it.path)
		if split {
			d.Test = append(d.Test, it.test)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, corruptf("imagefolder: %w", err)
	}
	return d, nil
}

// convertFolderImage turns a decoded image into one sample of h×w planes:
// one luma plane (greyPlane) when grey is requested or when R = G = B
// everywhere (isGrey true); otherwise R, G, B planes. A grey image never
// gets the three planes (12 bytes a pixel) built only to be compared.
func convertFolderImage(img image.Image, grey bool, h, w int) (sample []float32, isGrey bool) {
	var planes []float32
	var ih, iw int
	c := 1
	if grey || sameRGB(img) {
		planes, ih, iw = greyPlane(img) // for 8-bit grey the values R would have: one path for both modes
		isGrey = true
	} else {
		planes, ih, iw = rgbPlanes(img)
		c = 3
	}
	out := make([]float32, c*h*w)
	resizeKernel(draw.CatmullRom, out, planes, c, ih, iw, h, w)
	return out, isGrey
}

// DecodeFolderImage turns the bytes of one image file (PNG, JPEG, GIF, BMP
// or WebP, recognised by content) into a sample of channels×height×width
// values with exactly the preprocessing of ReadImageFolder: for one channel
// the luma, for three the R, G, B planes (a grey image gets three equal
// planes), resampled with Catmull-Rom to height×width. Tools that classify
// new images for a model trained on an image folder use it, so that a file
// gives the same sample as through the reader.
func DecodeFolderImage(data []byte, channels, height, width int) ([]float32, error) {
	img, release, err := decodeSample(data, channels, height, width)
	if err != nil {
		return nil, err
	}
	defer release()
	s, _ := convertFolderImage(img, channels == 1, height, width)
	if channels == 3 && len(s) == height*width {
		s = append(append(s, s...), s...)
	}
	return s, nil
}

// nativeSize reads every image header (in parallel) and returns the common
// size; two images of different sizes are an error naming both. Files that
// are not images are ignored here (the decoding pass decides about them).
func nativeSize(fsys fs.FS, items []folderItem, display func(string) string) (h, w int, err error) {
	sizes := make([]image.Point, len(items))
	err = parallelFor(len(items), func(i int) error {
		f, err := fsys.Open(items[i].path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a broken link: the decoding pass reports it
		}
		if err != nil {
			return classify(fmt.Errorf("imagefolder: %s: %w", display(items[i].path), err))
		}
		defer f.Close()
		if cfg, _, err := DecodeConfig(io.LimitReader(f, MaxImageFileBytes)); err == nil {
			sizes[i] = image.Pt(cfg.Width, cfg.Height)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	first := -1
	for i, s := range sizes {
		if s == (image.Point{}) {
			continue
		}
		if first < 0 {
			first = i
		} else if s != sizes[first] {
			return 0, 0, fmt.Errorf("imagefolder: %s is %d×%d but %s is %d×%d: set a size (data.size) to resample them all",
				display(items[first].path), sizes[first].X, sizes[first].Y, display(items[i].path), s.X, s.Y)
		}
	}
	if first < 0 {
		return 1, 1, nil // no image at all: the decoding pass reports it
	}
	return sizes[first].Y, sizes[first].X, nil
}

// SkipName reports whether a folder entry is bookkeeping the image-folder
// reader skips: a hidden name (".DS_Store", "._x.png") or "__MACOSX".
// Tools that list image files as the reader does (drknn-predict -images)
// use it.
func SkipName(name string) bool { return skipName(name) }

// IsFolderImage reports whether the image-folder reader takes the file at
// path as an image: its name has an image extension (it must then decode),
// or its first bytes are those of an image format (a .jfif, a file without
// extension). An unreadable file counts as one, so that its reader reports
// it. Hidden names are the caller's to skip (SkipName).
func IsFolderImage(path string) bool {
	if imageExts[strings.ToLower(filepath.Ext(path))] {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return true
	}
	return isImageData(head[:n])
}

// readFolderFile reads a file of fsys whole when its first bytes are those
// of an image format (isImage true); otherwise it stops after them, so a
// non-image file of any size is skipped without being loaded. An image file
// larger than MaxImageFileBytes is an error.
func readFolderFile(fsys fs.FS, name string) (data []byte, isImage bool, err error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, false, err
	}
	head = head[:n]
	if !isImageData(head) {
		return nil, false, nil
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxImageFileBytes {
		return nil, true, fmt.Errorf("file larger than %d bytes (%d bytes)", MaxImageFileBytes, fi.Size())
	}
	data, err = readAllLimited(io.MultiReader(bytes.NewReader(head), f))
	return data, true, err
}

// isDirFS reports whether the entry at p (inside fsys) is a folder,
// following a symbolic link.
func isDirFS(fsys fs.FS, p string, e fs.DirEntry) (bool, error) {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir(), nil
	}
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// WalkFolderFiles calls visit with every file under the folder dir of fsys
// that the image-folder reader considers, in its natural order (a
// depth-first walk, a folder's entries by name in byte order): regular
// files and symbolic links to them, not hidden (names starting with ".",
// "__MACOSX"; a hidden folder is skipped whole). A symbolic link to a
// folder is followed — its files come where its name falls, as a folder's
// would — unless it leads to dir or a folder on the way to it (a loop),
// or, when fsys is a DirFS, to a folder above fsys's root on disk.
// Counted in rep: hidden names (Hidden), links that loop (LinkLoops), and
// devices, sockets and broken links (NotImage) — except a broken link with
// an image extension (.png, …), which is visited: its reader reports it as
// an image it cannot read, never drops it silently. drknn-predict lists
// -images and -support folders with it, so both take the same files.
func WalkFolderFiles(fsys fs.FS, dir string, rep *Report, visit func(p string)) error {
	var walk func(root string) error
	walk = func(root string) error {
		return fs.WalkDir(fsys, root, func(fp string, e fs.DirEntry, err error) error {
			if err != nil {
				return classify(fmt.Errorf("imagefolder: %w", err))
			}
			if fp == root {
				return nil
			}
			if skipName(e.Name()) {
				rep.Hidden++
				if e.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			switch {
			case e.IsDir():
				return nil
			case e.Type().IsRegular():
				visit(fp)
				return nil
			case e.Type()&fs.ModeSymlink == 0:
				rep.NotImage++ // a device, a socket, a pipe
				return nil
			}
			fi, err := fs.Stat(fsys, fp)
			switch {
			case err != nil && imageExts[strings.ToLower(path.Ext(fp))]:
				// a broken link named as an image: listed, for its reader
				// to report it as an image it cannot read
				visit(fp)
			case err != nil || !fi.IsDir() && !fi.Mode().IsRegular():
				rep.NotImage++ // a broken link, a link to a device
			case !fi.IsDir():
				visit(fp)
			case linkLoops(fsys, fp, fi) || linkUp(fsys, fp):
				rep.LinkLoops++
			default:
				return walk(fp)
			}
			return nil
		})
	}
	return walk(dir)
}

// DirFS is os.DirFS(dir) for the image-folder reader and WalkFolderFiles:
// it also tells them the folder on disk, so that a symbolic link leading
// to a folder above the walk (a parent of dir) is recognised as a loop —
// through a plain fs.FS only the folders inside it can be compared.
func DirFS(dir string) fs.FS { return osDir{os.DirFS(dir).(fs.StatFS), dir} }

type osDir struct {
	fs.StatFS
	dir string
}

func (d osDir) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.StatFS, name) }
func (d osDir) ReadFile(name string) ([]byte, error)       { return fs.ReadFile(d.StatFS, name) }

// linkUp reports whether the symbolic link at p (inside a DirFS) leads to
// the folder it is in or to one above it, on disk — the root of the walk
// or beyond. Walking it would read the folder again (and, above the root,
// folders never asked for) before coming back to the link.
func linkUp(fsys fs.FS, p string) bool {
	d, ok := fsys.(osDir)
	if !ok {
		return false
	}
	target, err := filepath.EvalSymlinks(filepath.Join(d.dir, filepath.FromSlash(p)))
	if err != nil {
		return false
	}
	at, err := filepath.EvalSymlinks(filepath.Join(d.dir, filepath.FromSlash(path.Dir(p))))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(target, at)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// linkLoops reports whether the folder fi that the link at p leads to is
// the root of fsys or a folder on the way from it to p: walking it would
// come back to p without end.
func linkLoops(fsys fs.FS, p string, fi fs.FileInfo) bool {
	for d := path.Dir(p); ; d = path.Dir(d) {
		if di, err := fs.Stat(fsys, d); err == nil && os.SameFile(di, fi) {
			return true
		}
		if d == "." || d == "/" {
			return false
		}
	}
}

// splitNames are the folder names (in lower case) that name a part of a data
// set rather than a class.
var splitNames = map[string]bool{"train": true, "val": true, "valid": true, "validation": true, "test": true}

// folderPart is one part of an image folder: the whole folder (dir ".") or
// the train/ or test/ folder of a split folder, under its own name.
type folderPart struct {
	dir  string // slash-separated path inside the fs.FS
	test bool   // the test part of a split folder
}

// classFolder is one class folder of one part, and the range of items
// listed from it.
type classFolder struct {
	part, class string // part dir ("." or the split folder's name) and class name
	lo, hi      int    // items[lo:hi] come from this folder
}

// splitLayout tells from the top-level folder names top (sorted) how the
// folder is laid out: a split folder when they are train and test in any
// letter case (their names returned as found), class folders when some name
// is not a split name. Split names other than exactly train and test (val/,
// a lone train/, …) are an error: the reader would otherwise take the
// splits for classes.
func splitLayout(top []string, root string) (train, test string, err error) {
	var val string
	for _, n := range top {
		switch l := strings.ToLower(n); {
		case !splitNames[l]:
			return "", "", nil
		case l == "train" && train == "":
			train = n
		case l == "test" && test == "":
			test = n
		case l != "train" && l != "test" && val == "":
			val = n
		}
	}
	if len(top) == 2 && train != "" && test != "" {
		return train, test, nil
	}
	var hint string
	switch {
	case train != "" && test != "" && val != "":
		hint = fmt.Sprintf("; point at %s to read the training part alone, or merge %s/ into %s/ or %s/", path.Join(root, train), val, train, test)
	case train != "":
		hint = fmt.Sprintf("; point at %s to read it alone", path.Join(root, train))
	default:
		hint = fmt.Sprintf("; point at one of them, e.g. %s", path.Join(root, top[0]))
	}
	what := fmt.Sprintf("its folders %s name data set parts", strings.Join(top, ", "))
	if len(top) == 1 {
		what = fmt.Sprintf("its only folder %s names a data set part", top[0])
	}
	return "", "", corruptf("imagefolder: %s: %s, not classes; the reader takes class folders (%s/<class>/…) or a split folder holding exactly train/ and test/, each with class folders%s",
		root, what, root, hint)
}

// listImageFolder lists the files of every class folder (of both parts of
// a split folder, or of the one part asked for) in natural order, counting
// what it skips in rep. folders lists the class folders in that order,
// each with its range of items.
func listImageFolder(fsys fs.FS, root, part string, rep *Report) (items []folderItem, classes []string, folders []classFolder, split bool, err error) {
	top, err := subfolders(fsys, ".", root, rep)
	if err != nil {
		return nil, nil, nil, false, err
	}
	trainDir, testDir, err := splitLayout(top, root)
	if err != nil {
		return nil, nil, nil, false, err
	}
	split = trainDir != ""
	parts := []folderPart{{dir: "."}}
	switch {
	case split && part == "train":
		parts = []folderPart{{dir: trainDir}}
	case split && part == "test":
		parts = []folderPart{{dir: testDir, test: true}}
	case split:
		parts = []folderPart{{dir: trainDir}, {dir: testDir, test: true}}
	case part != "":
		return nil, nil, nil, false, errkind.Mark(ErrConfig, fmt.Errorf("imagefolder: %s is not a split folder (only train/ and test/ inside, each with class folders), so it has no %s part: data.split = %s does not fit it; leave data.split out to read its class folders", root, part, part))
	}
	perPart := make([][]string, len(parts))
	set := map[string]bool{}
	for k, p := range parts {
		if p.dir == "." {
			perPart[k] = top
		} else if perPart[k], err = subfolders(fsys, p.dir, path.Join(root, p.dir), rep); err != nil {
			return nil, nil, nil, false, err
		}
		for _, c := range perPart[k] {
			set[c] = true
		}
	}
	for c := range set {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	if len(parts) == 2 {
		for _, c := range classes {
			inTrain, inTest := slices.Contains(perPart[0], c), slices.Contains(perPart[1], c)
			if !inTest {
				rep.TrainOnly = append(rep.TrainOnly, c)
			} else if !inTrain {
				rep.TestOnly = append(rep.TestOnly, c)
			}
		}
	}
	for k, p := range parts {
		for _, c := range perPart[k] {
			dir := path.Join(p.dir, c)
			label, _ := slices.BinarySearch(classes, c)
			n := len(items)
			err := WalkFolderFiles(fsys, dir, rep, func(fp string) {
				items = append(items, folderItem{path: fp, class: label, test: p.test})
			})
			if err != nil {
				return nil, nil, nil, false, err
			}
			if len(items) == n {
				return nil, nil, nil, false, corruptf("imagefolder: %s: empty class folder (no files)", path.Join(root, dir))
			}
			folders = append(folders, classFolder{part: p.dir, class: c, lo: n, hi: len(items)})
		}
	}
	return items, classes, folders, split, nil
}

// subfolders returns the sorted names of the non-hidden folders in dir,
// counting hidden entries and loose files in rep. No folder at all is
// ErrNotFound.
func subfolders(fsys fs.FS, dir, display string, rep *Report) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, classify(fmt.Errorf("imagefolder: %s: %w", display, err))
	}
	var names []string
	for _, e := range entries {
		if skipName(e.Name()) {
			rep.Hidden++
			continue
		}
		isDir, err := isDirFS(fsys, path.Join(dir, e.Name()), e)
		if err != nil {
			return nil, classify(fmt.Errorf("imagefolder: %s: %w", path.Join(display, e.Name()), err))
		}
		if !isDir {
			rep.Loose++
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, notFoundf("imagefolder: %s: no class folders (want one sub-folder per class, or train/ and test/)", display)
	}
	slices.Sort(names)
	return names, nil
}
