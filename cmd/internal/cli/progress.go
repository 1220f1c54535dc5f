package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/drknn/drknn/experiment"
	"golang.org/x/term"
)

// progress is one progress line over all the work of a run or a table:
// training steps (the repeats' networks and their cross-validation fits)
// and evaluation units (a method on a repeat's queries), across repeats and
// cells. Its estimate of the time left comes from measured costs: each
// step's and each method's worker-seconds (the time since the previous
// event of the same repeat, which runs on one goroutine) and the
// parallelism actually reached (worker-seconds measured per second of
// wall time).
type progress struct {
	now   func() time.Time
	width func() int // columns of the terminal; 0: not a terminal (plain lines)
	out   io.Writer

	steps, units         int            // total work
	doneSteps, doneUnits int            // done so far
	unitsLeft            map[string]int // evaluation units left per method

	stepSec, unitSecAll float64 // measured worker-seconds
	stepN, unitNAll     int
	unitSec             map[string]float64
	unitN               map[string]int
	first               time.Time // start of the earliest measured interval
	last                map[string]time.Time

	desc      string
	drawn     time.Time // last redraw (terminal) or log line (plain)
	drawnFrac float64   // fraction at the last plain line
	shownFrac float64   // largest fraction shown
	shown     bool      // a terminal line is on screen
	// final: the run is over (Reporter.Close); with no work left, it is
	// all done — even when nothing was left to do at all (every cell
	// reused or skipped: 0 of 0).
	final bool
}

func newProgress(out io.Writer, width func() int, now func() time.Time) *progress {
	return &progress{out: out, width: width, now: now, unitsLeft: map[string]int{}, unitSec: map[string]float64{},
		unitN: map[string]int{}, last: map[string]time.Time{}}
}

// add adds work: steps training steps and units evaluation units of each
// of methods (negative to remove work that will not be done).
func (p *progress) add(steps, units int, methods []string) {
	p.steps += steps
	for _, m := range methods {
		p.unitsLeft[m] += units
		p.units += units
	}
}

// measure records the worker-seconds since key's previous event (none for
// its first: the time before it is not known to be work).
func (p *progress) measure(key string) (float64, bool) {
	now := p.now()
	prev, ok := p.last[key]
	p.last[key] = now
	if !ok {
		return 0, false
	}
	if p.first.IsZero() || prev.Before(p.first) {
		p.first = prev
	}
	return now.Sub(prev).Seconds(), true
}

// step records one training step of key (a repeat).
func (p *progress) step(key string) {
	p.doneSteps++
	if s, ok := p.measure(key); ok {
		p.stepSec += s
		p.stepN++
	}
}

// unit records one evaluation unit of method on key (a repeat); seconds is
// the unit's own time, used when key has no earlier event.
func (p *progress) unit(key, method string, seconds float64) {
	p.doneUnits++
	if p.unitsLeft[method] > 0 {
		p.unitsLeft[method]--
	}
	s, ok := p.measure(key)
	if !ok {
		s = seconds
	}
	p.unitSec[method] += s
	p.unitN[method]++
	p.unitSecAll += s
	p.unitNAll++
}

// forget ends key's intervals (its repeat finished).
func (p *progress) forget(key string) { delete(p.last, key) }

// eta is the estimated time left in seconds. known is false when some
// remaining kind of work has no measured cost yet: eta then counts only
// the kinds that have one (a lower bound). ok is false when nothing can be
// estimated.
func (p *progress) eta() (secs float64, known, ok bool) {
	if p.final && p.remaining() <= 0 {
		return 0, true, true
	}
	work, known := 0.0, true
	if left := p.steps - p.doneSteps; left > 0 {
		if p.stepN > 0 {
			work += float64(left) * p.stepSec / float64(p.stepN)
		} else {
			known = false
		}
	}
	for m, left := range p.unitsLeft {
		switch {
		case left <= 0:
		case p.unitN[m] > 0:
			work += float64(left) * p.unitSec[m] / float64(p.unitN[m])
		case p.unitNAll > 0:
			work += float64(left) * p.unitSecAll / float64(p.unitNAll)
		default:
			known = false
		}
	}
	measured := p.stepSec + p.unitSecAll
	wall := p.now().Sub(p.first).Seconds()
	if p.first.IsZero() || measured <= 0 || wall <= 0 {
		return 0, false, p.remaining() == 0
	}
	par := max(measured/wall, 1e-3) // workers busy on average
	return work / par, known, true
}

func (p *progress) remaining() int { return p.steps - p.doneSteps + p.units - p.doneUnits }

// fraction is the part of the work done: by estimated time when every
// kind's cost is known, else by count; it never goes back (a first
// measured evaluation unit may show that the work done so far was the
// cheap part).
func (p *progress) fraction() float64 {
	if p.final && p.remaining() <= 0 {
		p.shownFrac = 1
	}
	p.shownFrac = max(p.shownFrac, p.rawFraction())
	if p.remaining() > 0 {
		p.shownFrac = min(p.shownFrac, 0.999)
	}
	return p.shownFrac
}

func (p *progress) rawFraction() float64 {
	total := p.steps + p.units
	if total <= 0 {
		return 0
	}
	if p.stepN > 0 && p.unitNAll > 0 {
		step, unit := p.stepSec/float64(p.stepN), p.unitSecAll/float64(p.unitNAll)
		done := float64(p.doneSteps)*step + float64(p.doneUnits)*unit
		all := done + float64(max(p.steps-p.doneSteps, 0))*step + float64(max(p.units-p.doneUnits, 0))*unit
		if all > 0 {
			return min(done/all, 1)
		}
	}
	return min(float64(p.doneSteps+p.doneUnits)/float64(total), 1)
}

// fmtDur prints a duration in seconds as 45s, 3m12s or 2h05m.
func fmtDur(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func (p *progress) etaText() string {
	secs, known, ok := p.eta()
	switch {
	case !ok:
		return "time left ?"
	case !known && secs < 1:
		return "time left ?"
	case !known:
		return "≥" + fmtDur(secs) + " left"
	}
	return fmtDur(secs) + " left"
}

func (p *progress) counts() string {
	var parts []string
	if p.steps > 0 {
		parts = append(parts, fmt.Sprintf("steps %d/%d", p.doneSteps, p.steps))
	}
	if p.units > 0 {
		parts = append(parts, fmt.Sprintf("eval %d/%d", p.doneUnits, p.units))
	}
	return strings.Join(parts, " ")
}

// line lays the progress out in at most width columns: percentage, time
// left, bar, counts and the description, dropping or shortening the last
// ones first (the bar is 10–30 columns).
func (p *progress) line(width int) string {
	frac := p.fraction()
	pct := fmt.Sprintf("%3.0f%%", 100*frac)
	eta := p.etaText()
	cols := func(s string) int { return utf8.RuneCountInString(s) }
	head := pct + " " + eta
	if cols(head) > width {
		return truncate(head, width)
	}
	rest := width - cols(head)
	bar := 0
	if rest >= 13 {
		bar = 10
		rest -= 13 // " [" + bar + "]"
	}
	counts := p.counts()
	if counts != "" && cols(counts)+1 <= rest {
		rest -= cols(counts) + 1
	} else {
		counts = ""
	}
	desc := ""
	if p.desc != "" && rest >= 9 {
		desc = truncate(p.desc, min(rest-1, cols(p.desc)))
		rest -= cols(desc) + 1
	}
	if bar > 0 {
		grow := min(rest, 20)
		bar += grow
	}
	var b strings.Builder
	b.WriteString(pct)
	if bar > 0 {
		fill := int(frac*float64(bar) + 0.5)
		b.WriteString(" [" + strings.Repeat("#", fill) + strings.Repeat(".", bar-fill) + "]")
	}
	b.WriteString(" " + eta)
	if counts != "" {
		b.WriteString(" " + counts)
	}
	if desc != "" {
		b.WriteString(" " + desc)
	}
	return b.String()
}

// truncate shortens s to n columns, ending in "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// plainLine is the progress as a log line (output that is not a terminal).
func (p *progress) plainLine() string {
	s := fmt.Sprintf("progress %.0f%%, %s", 100*p.fraction(), p.etaText())
	if c := p.counts(); c != "" {
		s += " (" + c + ")"
	}
	return s
}

// draw shows the progress: on a terminal the line is rewritten in place at
// most 10 times a second (force: now); elsewhere a plain line is written
// at every further 10% of the work or once a minute.
func (p *progress) draw(force bool) {
	now := p.now()
	w := p.width()
	if w <= 0 {
		frac := p.fraction()
		if force || frac >= p.drawnFrac+0.1 || now.Sub(p.drawn) >= time.Minute {
			fmt.Fprintln(p.out, p.plainLine())
			p.drawn, p.drawnFrac = now, frac
		}
		return
	}
	if !force && now.Sub(p.drawn) < 100*time.Millisecond {
		return
	}
	p.drawn = now
	line := p.line(w - 1) // the last column would wrap on some terminals
	fmt.Fprint(p.out, "\r"+line+strings.Repeat(" ", max(w-1-utf8.RuneCountInString(line), 0)))
	p.shown = true
}

// clear removes the terminal line (before other output, or at the end).
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.out, "\r"+strings.Repeat(" ", max(p.width()-1, 0))+"\r")
		p.shown = false
	}
}

// terminalWidth is the width of w when it is a terminal, else 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols <= 0 {
		return 80
	}
	return cols
}

// observe updates the progress from an event of a run or table; cellKey
// prefixes the repeats' keys.
func (p *progress) observe(e experiment.Event, cell string) {
	switch e := e.(type) {
	case experiment.StepDone:
		p.step(fmt.Sprintf("%s/%d", cell, e.Repeat))
		kind := "step"
		if e.CV {
			kind = "cv step"
		}
		p.desc = fmt.Sprintf("%srepeat %d %s %d risk %.3f", prefix(cell), e.Repeat+1, kind, e.Stats.Step, e.Stats.Risk)
	case experiment.TransferStep:
		p.step(cell + "/" + e.Objective)
		p.desc = fmt.Sprintf("%s%s step %d loss %.3f", prefix(cell), e.Objective, e.Stats.Step, e.Stats.Risk)
	case experiment.UnitDone:
		p.unit(fmt.Sprintf("%s/%d", cell, e.Repeat), e.Method, e.Seconds)
		p.desc = fmt.Sprintf("%srepeat %d %s %.3f", prefix(cell), e.Repeat+1, e.Method, e.Accuracy)
		if e.Err != "" {
			p.desc = fmt.Sprintf("%srepeat %d %s failed", prefix(cell), e.Repeat+1, e.Method)
		}
	case experiment.RepeatDone:
		p.forget(fmt.Sprintf("%s/%d", cell, e.Repeat))
	default:
		return
	}
	p.draw(false)
}

func prefix(cell string) string {
	if cell == "" {
		return ""
	}
	return cell + " "
}
