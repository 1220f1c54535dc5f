package datasets

import (
	"fmt"
	"strings"
)

// MiniImageNetSplits are the three split files of miniImageNet (Ravi &
// Larochelle), in the order ReadMiniImageNetTransfer concatenates them.
var MiniImageNetSplits = []string{"train", "val", "test"}

// ReadMiniImageNetTransfer reads miniImageNet's train, val and test splits
// (ReadMiniImageNet, each at size×size, grey when grey) as one data set for
// the transfer protocol: the train samples, then val's, then test's; the
// classes of each split sorted by id, train's first (labels 0…63 for the
// standard files), then val's and test's. Files are "SPLIT:images/NAME". A
// class listed in two splits is an error (ErrCorrupt); MiniImageNetSplit
// turns the data set into the standard base/validation/novel split.
func ReadMiniImageNetTransfer(dir string, size int, grey bool) (*Dataset, error) {
	out := &Dataset{Name: "miniimagenet"}
	seen := map[string]string{}
	for _, split := range MiniImageNetSplits {
		d, err := ReadMiniImageNet(dir, split, size)
		if err != nil {
			return nil, err
		}
		if grey {
			if d, err = d.Grey(); err != nil {
				return nil, err
			}
		}
		off := len(out.Classes)
		for _, c := range d.Classes {
			if prev, ok := seen[c]; ok {
				return nil, corruptf("miniimagenet: class %s is in both %s.csv and %s.csv", c, prev, split)
			}
			seen[c] = split
		}
		out.Shape = d.Shape
		out.Classes = append(out.Classes, d.Classes...)
		out.X = append(out.X, d.X...)
		for i, y := range d.Labels {
			out.Labels = append(out.Labels, off+y)
			out.Files = append(out.Files, split+":"+d.Files[i])
		}
	}
	if err := out.Validate(); err != nil {
		return nil, corruptf("%w", err)
	}
	return out, nil
}

// MiniImageNetSplit is the standard split of a data set read by
// ReadMiniImageNetTransfer: train.csv's classes are the base classes,
// val.csv's the validation classes (HeldOut "split"), test.csv's novel.
func MiniImageNetSplit(d *Dataset) (*TransferSplit, error) {
	if len(d.Files) != d.Len() {
		return nil, fmt.Errorf("miniimagenet split: %s has no source files", d.Name)
	}
	part := make([]string, len(d.Classes))
	for i, y := range d.Labels {
		p, _, ok := strings.Cut(d.Files[i], ":")
		if !ok || (p != "train" && p != "val" && p != "test") {
			return nil, fmt.Errorf("miniimagenet split: sample %d (%s) is from no split file", i, d.Files[i])
		}
		if part[y] != "" && part[y] != p {
			return nil, fmt.Errorf("miniimagenet split: class %s in both %s and %s", d.Classes[y], part[y], p)
		}
		part[y] = p
	}
	s := &TransferSplit{HeldOut: "split"}
	for c, p := range part {
		switch p {
		case "train":
			s.Base = append(s.Base, c)
		case "val":
			s.Val = append(s.Val, c)
		case "test":
			s.Novel = append(s.Novel, c)
		}
	}
	for i, y := range d.Labels {
		switch part[y] {
		case "train":
			s.TrainIndex = append(s.TrainIndex, i)
		case "val":
			s.ValIndex = append(s.ValIndex, i)
		case "test":
			s.NovelIndex = append(s.NovelIndex, i)
		}
	}
	if len(s.Base) == 0 || len(s.Val) == 0 || len(s.Novel) == 0 {
		return nil, fmt.Errorf("miniimagenet split: %d train, %d val and %d test classes; each must have some", len(s.Base), len(s.Val), len(s.Novel))
	}
	return s, s.Check(d)
}
