package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout is how long Serve waits, once its context ends, for the
// requests in flight to finish.
const ShutdownTimeout = 30 * time.Second

// Serve serves h on ln until ctx ends, then shuts down gracefully: the
// listener closes (new connections are refused), the requests in flight
// finish (for up to ShutdownTimeout), h is closed, and Serve returns nil.
// Pass a context that SIGINT and SIGTERM cancel (signal.NotifyContext) to
// stop on them.
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	hs := &http.Server{Handler: routes(h), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(shutdown)
	h.Close()
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// routes mounts h at /predict and answers any other path with a JSON 404
// naming the endpoint.
func routes(h *Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/predict", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorResponse{fmt.Sprintf("no endpoint %s; POST /predict with %s", r.URL.Path, h.want())})
	})
	return mux
}

// ListenAndServe listens on the TCP address addr and runs Serve.
func ListenAndServe(ctx context.Context, addr string, h *Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h)
}
