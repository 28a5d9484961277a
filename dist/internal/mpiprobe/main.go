// Command mpiprobe is the MPI program dist's tests launch with mpirun: each
// mode exercises one part of the binding and prints what it saw, for the
// test (not this program) to check.
//
//	mpiprobe -mode collectives   one JSON line per rank: results of every collective
//	mpiprobe -mode abort|panic|exit   rank 1 fails that way while rank 0 waits in a barrier
//	mpiprobe -mode loop          each rank prints its pid, then agrees in a loop for up to 60 s (to be killed)
//	mpiprobe -mode stop          rank 1 asks to stop at step 3; each rank prints where it stopped
//	mpiprobe -mode bench         times all-reduces of the MNIST MLP's gradient size
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/voltml/volt/dist"
)

func main() {
	mode := flag.String("mode", "collectives", "collectives | abort | panic | exit | loop | stop | bench")
	iters := flag.Int("iters", 200, "bench: all-reduces per variant")
	flag.Parse()
	g, err := dist.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer dist.AbortOnPanic(g)
	switch *mode {
	case "collectives":
		err = collectives(g)
	case "abort", "panic", "exit":
		err = fail(g, *mode)
	case "stop":
		err = stop(g)
	case "loop":
		err = loop(g)
	case "bench":
		err = bench(g, *iters)
	default:
		err = fmt.Errorf("-mode %q is not one of collectives, abort, panic, exit, loop, stop, bench", *mode)
	}
	if err != nil {
		g.Abort(err)
	}
	if err := g.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// fail makes rank 1 fail (after rank 0 is inside a barrier) by mode:
// Abort, a panic under AbortOnPanic, or a plain os.Exit(3) without Abort.
func fail(g dist.Group, mode string) error {
	if g.Rank() != 1 {
		fmt.Printf("rank %d: waiting in barrier\n", g.Rank())
		err := g.Barrier()
		fmt.Printf("rank %d: barrier returned %v\n", g.Rank(), err)
		return err
	}
	time.Sleep(300 * time.Millisecond)
	switch mode {
	case "abort":
		g.Abort(errors.New("boom on purpose"))
	case "panic":
		panic("boom on purpose")
	default:
		fmt.Fprintln(os.Stderr, "rank 1: exiting with code 3 without Abort")
		os.Exit(3)
	}
	return nil
}

// stop runs steps until any rank asks to stop; rank 1 asks at step 3.
func stop(g dist.Group) error {
	for step := 0; step < 100; step++ {
		stop, err := dist.AnyTrue(g, g.Rank() == 1 && step == 3)
		if err != nil {
			return err
		}
		if stop {
			fmt.Printf("STOP rank=%d step=%d\n", g.Rank(), step)
			return nil
		}
	}
	return errors.New("no rank stopped")
}

// loop prints this rank's pid, then runs agreement rounds for up to 60 s:
// a test kills one rank and checks that the others end too.
func loop(g dist.Group) error {
	fmt.Printf("PID rank=%d pid=%d\n", g.Rank(), os.Getpid())
	for start := time.Now(); time.Since(start) < time.Minute; {
		if _, err := dist.AnyTrue(g, false); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return errors.New("loop: not killed within a minute")
}
