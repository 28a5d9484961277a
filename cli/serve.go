package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/voltml/volt"
	"github.com/voltml/volt/serve"
)

// serveUsage writes the head of "serve --help".
func serveUsage(w io.Writer, program string) {
	fmt.Fprintf(w, `Usage: %[1]s serve --input-shape DIMS [--addr HOST:PORT] [--config FILE]... [--KEY=VALUE]... FILE.ckpt

Serves the module's PredictStep, with the weights of FILE.ckpt (or
--ckpt-path), over HTTP until SIGINT or SIGTERM: POST /predict with
{"inputs": [ROW, …]}, each ROW one example's input flattened, answers
{"outputs": [OUT, …]} (package serve). The module is built from the config
as for predict; the checkpoint's hyper-parameters set its fields.
Requests arriving within --wait of each other share one Predict call of
up to --max-batch rows. A bad request gets a JSON error saying what is
valid. On SIGINT or SIGTERM the listener closes, the requests in flight
finish, and the program exits 0.

  %[1]s serve --input-shape 784 volt_logs/version_0/checkpoints/epoch=4-step=4300.ckpt
  curl -d '{"inputs": [[0, 0, …784 numbers…]]}' 127.0.0.1:8080/predict

`, program)
}

// runServe serves the module with the checkpoint and flags of inv until
// ctx ends or the process gets SIGINT or SIGTERM.
func runServe(ctx context.Context, inv *invocation, st *settings, m volt.Module) error {
	req := inv.serve
	p, err := volt.LoadPredictorModule(inv.rc.ckptPath, m, volt.PredictorInputs(req.cfg.Input),
		volt.PredictorBackend(inv.rc.trainer.Backend), volt.PredictorMaxShapes(64))
	if err != nil {
		return err
	}
	defer p.Close()
	h, err := serve.NewHandler(p, req.cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", req.addr)
	if err != nil {
		h.Close()
		return &Error{Origin: "flag --addr", Problem: err.Error()}
	}
	cfg := h.Config()
	fmt.Fprintf(st.stderr, "%s: serving %s on http://%s/predict (max batch %d, wait %s, at most %d rows a request; Ctrl-C stops)\n",
		st.program, inv.rc.ckptPath, ln.Addr(), cfg.MaxBatch, cfg.Wait, cfg.MaxRows)
	if err := serve.Serve(ctx, ln, h); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "%s: stopped serving; the requests in flight were answered\n", st.program)
	return nil
}
