package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/voltml/volt/dist"
)

// LargeLen is the length of the float32 buffer that is reduced in several
// messages (dist reduces at most 16 MiB per MPI call).
const LargeLen = 4<<20 + 3

// Report is what one rank prints in -mode collectives. Inputs on rank r:
// SumF32 from [r+1, 2(r+1), -(r+1)]; Large from i%7 + r at index i;
// MaxF64 from [1.5r, -r]; MinI64 from [r, 10-r]; GatherI64 from [r, r*r];
// GatherF64 from [r+0.5]; Bcast0 is rank 0's "abcd"; Bcast1 is rank 1's
// (or the last rank's) "from rank N"; AnyRank1 is AnyTrue(r == 1).
type Report struct {
	Rank, Size, LocalRank, LocalSize, NodeRank, NumNodes int
	Describe                                             string
	SumF32                                               []float32
	LargeSamples                                         map[int]float32
	LargeSum                                             float64
	MaxF64                                               []float64
	MinI64                                               []int64
	GatherI64                                            []int64
	GatherF64                                            []float64
	Bcast0, BcastLast                                    string
	AnyRank1, AnyNone                                    bool
	Env                                                  map[string]string
}

// collectives runs every collective once and prints the Report.
func collectives(g dist.Group) error {
	r := g.Rank()
	rep := Report{Rank: r, Size: g.Size(), LocalRank: g.LocalRank(), LocalSize: g.LocalSize(),
		NodeRank: g.NodeRank(), NumNodes: g.NumNodes(), Describe: g.String()}
	f := float32(r)
	rep.SumF32 = []float32{f + 1, 2 * (f + 1), -(f + 1)}
	if err := g.AllReduceFloat32(rep.SumF32, dist.Sum); err != nil {
		return err
	}
	large := make([]float32, LargeLen)
	for i := range large {
		large[i] = float32(i%7 + r)
	}
	if err := g.AllReduceFloat32(large, dist.Sum); err != nil {
		return err
	}
	rep.LargeSamples = map[int]float32{}
	for _, i := range []int{0, 1, 4<<20 - 1, 4 << 20, LargeLen - 1} {
		rep.LargeSamples[i] = large[i]
	}
	for _, v := range large {
		rep.LargeSum += float64(v)
	}
	rep.MaxF64 = []float64{1.5 * float64(r), -float64(r)}
	if err := g.AllReduceFloat64(rep.MaxF64, dist.Max); err != nil {
		return err
	}
	rep.MinI64 = []int64{int64(r), int64(10 - r)}
	if err := g.AllReduceInt64(rep.MinI64, dist.Min); err != nil {
		return err
	}
	var err error
	if rep.GatherI64, err = g.AllGatherInt64([]int64{int64(r), int64(r * r)}); err != nil {
		return err
	}
	if rep.GatherF64, err = g.AllGatherFloat64([]float64{float64(r) + 0.5}); err != nil {
		return err
	}
	b := []byte("....")
	if r == 0 {
		b = []byte("abcd")
	}
	if err := g.Broadcast(b, 0); err != nil {
		return err
	}
	rep.Bcast0 = string(b)
	last := g.Size() - 1
	mine := []byte(fmt.Sprintf("from rank %d", r))
	got, err := dist.BroadcastBytes(g, mine, last)
	if err != nil {
		return err
	}
	rep.BcastLast = string(got)
	if rep.AnyRank1, err = dist.AnyTrue(g, r == 1); err != nil {
		return err
	}
	if rep.AnyNone, err = dist.AnyTrue(g, false); err != nil {
		return err
	}
	if err := g.Barrier(); err != nil {
		return err
	}
	if err := dist.ExportEnv(g); err != nil {
		return err
	}
	rep.Env = map[string]string{}
	for _, k := range []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", dist.SingleCopyVar} {
		rep.Env[k] = os.Getenv(k)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	fmt.Printf("REPORT %s\n", line)
	return nil
}
