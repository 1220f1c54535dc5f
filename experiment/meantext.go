package experiment

import (
	"fmt"
	"math"
)

// meanCIText formats a mean accuracy and its 95% half-width for the run's
// log, to four decimals: "0.8123 ± 0.0123"; "0.8123 ± n/a" with one repeat
// or task (no interval); "–" when there is no mean (the method failed on
// every one) — never "NaN".
func meanCIText(mean, ci float64) string {
	switch {
	case math.IsNaN(mean):
		return "–"
	case math.IsNaN(ci):
		return fmt.Sprintf("%.4f ± n/a", mean)
	}
	return fmt.Sprintf("%.4f ± %.4f", mean, ci)
}
