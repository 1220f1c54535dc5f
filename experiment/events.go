package experiment

import (
	"sync"

	"github.com/drknn/drknn/train"
)

// Observer receives the events of a run (Options.Observer). Library code
// never prints: the commands render these events (a progress bar, the run's
// log file). A run calls its observer from one goroutine at a time, in the
// order the events happen; nil observes nothing.
type Observer func(Event)

// Event is one of Started, StepDone, TrainingResumed, UnitDone,
// RepeatDone, Message, Finished, TableStarted, CellStarted and CellDone
// (and the transfer protocol's TransferStep, Validated and
// TransferCellDone).
type Event interface{ event() }

// Started opens a run. Its work is known up front: Repeats × Steps training
// steps of the repeats' networks, CVSteps steps of cross-validation fits and
// Repeats × len(Methods) evaluation units, so that one progress bar over
// training and evaluation can show an honest estimate of the time left. A
// resumed run does not run the steps its checkpoints hold: each training
// that continues from one says so (TrainingResumed) before its first step.
type Started struct {
	Dir     string // run folder ("" when the run writes nothing)
	Config  Config
	Samples int   // samples in the data set
	Shape   []int // shape of a sample
	Repeats int
	Steps   int      // Algorithm 1 steps of each repeat's network
	CVSteps int      // steps of each repeat's cross-validation fits (train.theta_grid)
	Methods []string // methods each repeat evaluates, in order
	// Tasks, when > 0, is the number of evaluations of each method in
	// place of Repeats: the transfer protocol trains Repeats embeddings
	// and evaluates every method on Tasks novel-class tasks.
	Tasks int
}

// Evaluations is the number of evaluation units of each method.
func (e Started) Evaluations() int { return evaluations(e.Repeats, e.Tasks) }

func evaluations(repeats, tasks int) int {
	if tasks > 0 {
		return tasks
	}
	return repeats
}

// StepDone reports one training step of repeat Repeat (0-based): of the
// repeat's network, or of one of its cross-validation fits when CV.
type StepDone struct {
	Repeat int
	CV     bool
	Stats  train.StepStats
}

// TrainingResumed reports that a training continues from its checkpoint
// at step Step of Steps (Step = Steps: a finished training reused, no
// step to run): the steps before it are not run, and not reported, so the
// work Started announced shrinks by Step. It comes before the training's
// first StepDone (or TransferStep), at most once per training: Repeat's
// network (0-based; 0 for protocol fit's model) of an episodes or fit
// run, or, in the transfer protocol, the training of Objective
// (train.ObjectiveDrKNN or train.ObjectiveProto; "" otherwise). With CV,
// it is instead Repeat's cross-validation fits (train.theta_grid, Started's
// CVSteps) that a -resume reuses: Step = Steps = their steps when it reuses
// the choice of ϑ, or the steps of the fits finished before the stop
// (cv.json) when it trains only the others.
type TrainingResumed struct {
	Repeat      int
	Objective   string
	CV          bool
	Step, Steps int
}

// UnitDone reports one evaluation unit: a method evaluated on a repeat's
// queries (a network baseline's unit includes its training).
type UnitDone struct {
	Repeat   int
	Method   string
	Accuracy float64 // NaN when the method failed
	Seconds  float64
	Err      string // why the method failed on this repeat ("" = it did not)
}

// RepeatDone reports a finished repeat.
type RepeatDone struct {
	Repeat   int
	Episode  EpisodeRecord
	Accuracy map[string]float64
}

// Message is a line for the run's log.
type Message struct {
	Text string
}

// Finished closes a run: Results on success, Err otherwise (the run wrote
// no results.json).
type Finished struct {
	Results *Results
	Err     error
}

// TableStarted opens a table: its cells in the order they will run, with
// the work of each (a cell whose data set turns out absent, or that is
// reused by -resume, is closed by its CellDone without running).
type TableStarted struct {
	Dir   string
	Cells []CellPlan
}

// CellPlan is the work of one cell of a table, as Started gives it for a run.
type CellPlan struct {
	Name           string
	Repeats        int
	Steps, CVSteps int // per repeat
	Methods        []string
	Tasks          int // as Started.Tasks
}

// Evaluations is the number of evaluation units of each method.
func (c CellPlan) Evaluations() int { return evaluations(c.Repeats, c.Tasks) }

// CellStarted opens a cell of the table (the cell's own run follows).
type CellStarted struct {
	Name   string // e.g. "mnist-2w5s"
	Dir    string
	Config string // config file
}

// CellDone closes a cell of the table: run, or skipped with the reason.
type CellDone struct {
	Cell CellOutcome
}

func (Started) event()         {}
func (StepDone) event()        {}
func (TrainingResumed) event() {}
func (UnitDone) event()        {}
func (RepeatDone) event()      {}
func (Message) event()         {}
func (Finished) event()        {}
func (CellStarted) event()     {}
func (TableStarted) event()    {}
func (CellDone) event()        {}

// serial makes an observer safe to call from the repeats' goroutines: one
// event at a time.
func serial(o Observer) Observer {
	if o == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		o(e)
	}
}
