package optlayer

import (
	"errors"
	"strings"
	"testing"
)

// TestSettingsValidate: the settings' ranges are checked without a
// problem, with the messages Solve gives.
func TestSettingsValidate(t *testing.T) {
	for _, s := range []*Settings{nil, {}, {Epsilon: 1e-6, Tol: 1e-12}, {Epsilon: 1e3}, {Warm: &Dual{G: []float64{1}}}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{Epsilon: 1e-300}, "Settings.Epsilon = 1e-300 is below the supported minimum 1e-6"},
		{Settings{Epsilon: 1e300}, "above the supported maximum 1e3"},
		{Settings{Tol: 1e-300}, "Settings.Tol = 1e-300 is below the supported minimum 1e-12"},
		{Settings{CGTol: -1}, "Settings.CGTol"},
		{Settings{MaxIter: -1}, "Settings.MaxIter"},
	} {
		err := c.s.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrInvalid saying %q", c.s, err, c.want)
		}
	}
}
