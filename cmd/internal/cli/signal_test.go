package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignalEnds: the first SIGTERM (or Ctrl-C) cancels the run's
// context; a run busy in a step that does not watch it (reading a big
// input at start-up, say) cannot hold the process: a second signal ends
// it at once.
func TestSecondSignalEnds(t *testing.T) {
	if os.Getenv("DRKNN_CLI_SIGNAL_HELPER") == "1" {
		Main("helper", func(ctx context.Context, _ []string, stdout, _ io.Writer) error {
			io.WriteString(stdout, "ready\n")
			<-ctx.Done()
			io.WriteString(stdout, "cancelled\n")
			time.Sleep(time.Minute) // deaf to the context from here on
			return nil
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalEnds$")
	cmd.Env = append(os.Environ(), "DRKNN_CLI_SIGNAL_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("helper: %q", lines.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "cancelled" {
		t.Fatalf("helper after the first SIGTERM: %q, want its context cancelled", lines.Text())
	}
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, out); done <- cmd.Wait() }()
	// Repeat it, as an impatient user does: the handler stops catching
	// just after the first one was handled, not in the same instant.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case <-tick.C:
			cmd.Process.Signal(syscall.SIGTERM)
			continue
		case err := <-done:
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("helper ended with %v, want killed by the second SIGTERM", err)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("helper ended with %v, want killed by the second SIGTERM", err)
			}
		case <-timeout:
			t.Fatal("further SIGTERMs were ignored: the helper still runs after 5 s")
		}
		return
	}
}
