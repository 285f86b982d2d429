// Command benchbase is the baseline of the benchmark harness (scripts/bench): a
// plain net/http server that answers the benchmarked routes with fixed bodies of
// the same sizes as the emulator's, so that the harness can report the
// emulator's throughput and latency as a ratio to "just serving HTTP" on the
// same machine, under the same load generator, in the same run.
//
//	benchbase [-host 127.0.0.1] [-port 0]
//
// Routes: POST /v1/runs → 202 submission body (85 bytes); GET /v1/runs/{id} →
// 200 run record (226 bytes); POST /v1/runs/{id}/stop → 200 stop body (69
// bytes); GET /health → 200. Bodies are read and discarded, as the emulator
// reads them. Like the emulator it prints "benchbase listening on URL" first and
// stops on SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// The emulator's bodies for {"input":"bench"} (runs-api §6.1, §4, §6.3), byte for byte in size.
var (
	submitBody = []byte(`{"run_id":"run_4e685a726271445348426a4a70783364","status":"started","replayed":false}`)
	recordBody = []byte(`{"object":"hermes.run","run_id":"run_57703349705258663741626769756c5a","status":"queued","updated_at":1795996702.706288,"created_at":1795996702.706288,"session_id":"run_57703349705258663741626769756c5a","model":"hermes-agent"}`)
	stopBody   = []byte(`{"run_id":"run_57703349705258663741626769756c5a","status":"stopping"}`)
	healthBody = []byte(`{"status":"ok"}`)
)

func fixed(status int, body []byte) http.HandlerFunc {
	n := strconv.Itoa(len(body))
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{n}
		w.WriteHeader(status)
		w.Write(body)
	}
}

// Handler is the baseline's routes.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/runs", fixed(http.StatusAccepted, submitBody))
	mux.Handle("GET /v1/runs/{id}", fixed(http.StatusOK, recordBody))
	mux.Handle("POST /v1/runs/{id}/stop", fixed(http.StatusOK, stopBody))
	mux.Handle("GET /health", fixed(http.StatusOK, healthBody))
	return mux
}

func main() {
	host := flag.String("host", "127.0.0.1", "listen host")
	port := flag.Int("port", 0, "listen port, 0 = any free port")
	flag.Parse()
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchbase: %v\n", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Printf("benchbase listening on http://%s\n", ln.Addr())
	go srv.Serve(ln)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
}
