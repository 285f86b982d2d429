package emulator

import (
	"net/http"
	"strconv"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// ContractPath is where the emulator serves its contract: GET /openapi.yaml
// answers 200 with the embedded openapi.yaml (hermesemulator.OpenAPI) as
// application/yaml, so a client generator or a contract test can read the
// exact document this build implements. Like GET /health it is part of the
// control plane (runs-api §3 step 2): never journaled, counted or faulted,
// never gated by a key, reachable behind /ns/<name>, and it carries
// x-mockingbird. Other methods on the path are ordinary vendor requests
// (404 page not found).
const ContractPath = "/openapi.yaml"

// serveContract answers GET /openapi.yaml; headerNS is the header namespace
// ("default" when absent), as /health stamps it (controls §12).
func (s *Server) serveContract(w http.ResponseWriter, headerNS string) {
	s.stamp(w, headerNS, runs.ValidName(headerNS))
	h := w.Header()
	h.Set("Content-Type", "application/yaml")
	h.Set("Content-Length", strconv.Itoa(len(hermesemulator.OpenAPI)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(hermesemulator.OpenAPI)
}
