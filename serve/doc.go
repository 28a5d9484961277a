// Package serve puts a [volt.Predictor] behind HTTP: a JSON endpoint a
// program mounts on its own mux ([Handler]), with request batching, size
// limits and JSON errors, and [Serve], which runs it until a context ends
// and then shuts down gracefully, with the handler at /predict. It is what
// "PROGRAM serve" of package cli runs, and the server of examples/serve in a form any module can use:
//
//	p, err := volt.LoadPredictor("model.ckpt", &MLP{})
//	h, err := serve.NewHandler(p, serve.Config{Input: volt.InputSpec{DType: dtypes.Float32, Dims: []int{784}}})
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	err = serve.ListenAndServe(ctx, "127.0.0.1:8080", h)
//
// The endpoint is POST /predict with {"inputs": [ROW, …]}, each ROW the
// flattened values of one example's input (its dimensions after the batch
// axis, row by row); the answer is {"outputs": [OUT, …]}, OUT the
// PredictStep's row for that example: a number for a [batch] output, a
// list of numbers for [batch, n], nested lists beyond. The rows of one
// request are predicted in one Predict call, together with other
// requests' rows when batching collects them, and each output equals what
// Predictor.Predict returns for that row in that batch.
package serve
