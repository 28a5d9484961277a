package volt

import "github.com/gomlx/gomlx/core/graph"

// Node is GoMLX's graph node (*graph.Node, the same type under a second
// name), the value of a step's tensors: what Batch.Input returns,
// TrainingStep returns and Step.Log takes, and what package nn's layers
// and losses take and return. Lightning's steps compute on torch.Tensor;
// volt's are traced into a GoMLX graph, so their tensors are nodes. A
// program that builds its model from volt's packages spells it *volt.Node
// and needs no graph import; one that calls GoMLX's graph functions
// (graph.Tanh, graph.Reshape) mixes the two spellings freely.
type Node = graph.Node
