package admin

import (
	"strings"

	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/prom"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

func (a *Admin) table() []route {
	r := func(method, path string, stateNS bool, fn func(c *call) (reply, *runs.Error)) route {
		var segs []string
		for _, s := range splitPath(path) {
			segs = append(segs, s)
		}
		return route{method: method, segs: segs, stateNS: stateNS, fn: fn}
	}
	return []route{
		// Hermes controls first (controls §1 "Routing").
		r("POST", "/hermes/runs/:id/observe", true, a.observe),
		r("POST", "/hermes/runs/:id/events", true, a.events),
		r("POST", "/hermes/runs/:id/steer/deliver", true, a.deliver),
		r("GET", "/hermes/drain", true, a.getDrain),
		r("POST", "/hermes/drain", true, a.setDrain),
		r("POST", "/hermes/restart", true, a.restart),
		r("POST", "/hermes/scope", true, a.scope),
		r("POST", "/hermes/sweep", true, a.sweep),
		r("PUT", "/hermes/scenarios", true, a.putScenarios),
		r("GET", "/hermes/scenarios", true, a.getScenarios),
		r("DELETE", "/hermes/scenarios", true, a.deleteScenarios),

		r("GET", "/", false, a.index),
		r("GET", "/namespaces", false, a.namespaces),
		r("POST", "/reset", true, a.reset),
		r("GET", "/clock", false, a.getClock),
		r("POST", "/clock", false, a.setClock),
		r("GET", "/faults", false, a.listFaults),
		r("POST", "/faults", false, a.addFault),
		r("DELETE", "/faults", false, a.deleteFaults),
		r("GET", "/faults/presets", false, a.listPresets),
		r("POST", "/faults/presets/:name", false, a.applyPreset),
		r("GET", "/requests", false, a.requests),
		r("DELETE", "/requests", false, a.clearRequests),
		r("GET", "/metrics", false, a.metrics),
		r("DELETE", "/metrics", false, a.resetMetrics),
		r("GET", "/timeline", true, a.timeline),
		r("POST", "/checkpoints", true, a.checkpoint),
		r("POST", "/branches/:name", true, a.branch),
		r("POST", "/branches/:name/checkout", true, a.checkout),
		r("POST", "/snapshots", true, a.snapshot),
		r("POST", "/snapshots/:id/restore", true, a.restoreSnapshot),
		r("DELETE", "/snapshots/:id", false, a.deleteSnapshot),
		r("PUT", "/credentials", false, a.putCredentials),
		r("GET", "/credentials", false, a.getCredentials),
		r("DELETE", "/credentials", false, a.deleteCredentials),
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func ok200(b []byte) (reply, *runs.Error) { return reply{200, b}, nil }

var statusOK = []byte(`{"status":"ok"}`)

// GET /health (controls §2).
func (a *Admin) health() []byte {
	c := a.d.GW.Clock()
	clock := newObj().num("now", c.Now).boolean("frozen", c.Frozen).num("offsetMs", c.OffsetMs).bytes()
	return newObj().str("status", "ok").str("service", "hermes").num("uptimeMs", float64(int64(a.d.GW.Uptime()))).
		rawBytes("clock", clock).num("namespaces", float64(a.d.GW.NamespaceCount())).bytes()
}

// GET /__admin (controls §3).
func (a *Admin) index(*call) (reply, *runs.Error) {
	return ok200(newObj().str("service", "hermes").rawBytes("routes", strArray(a.routeKeys())).bytes())
}

// GET /__admin/namespaces (controls §4.2).
func (a *Admin) namespaces(*call) (reply, *runs.Error) {
	return ok200(newObj().str("default", "default").rawBytes("namespaces", strArray(a.d.GW.Namespaces())).bytes())
}

// POST /__admin/reset (controls §4.3).
func (a *Admin) reset(c *call) (reply, *runs.Error) {
	names, err := a.d.GW.Reset(c.ns, c.query.Get("all") == "1")
	if err != nil {
		return reply{}, err
	}
	return ok200(newObj().str("status", "ok").rawBytes("reset", strArray(names)).bytes())
}

func clockBody(s gateway.ClockState) []byte {
	return newObj().num("now", s.Now).boolean("frozen", s.Frozen).num("offsetMs", s.OffsetMs).bytes()
}

// GET /__admin/clock (controls §5).
func (a *Admin) getClock(*call) (reply, *runs.Error) { return ok200(clockBody(a.d.GW.Clock())) }

// POST /__admin/clock (controls §5).
func (a *Admin) setClock(c *call) (reply, *runs.Error) {
	body := c.body
	if !c.hasBody {
		body = runs.NullValue()
	}
	st, err := a.d.GW.SetClock(body)
	if err != nil {
		return reply{}, err
	}
	return ok200(clockBody(st))
}

// Faults (controls §6).
func (a *Admin) listFaults(*call) (reply, *runs.Error) { return ok200(a.d.Faults.List()) }

func (a *Admin) addFault(c *call) (reply, *runs.Error) {
	b, err := a.d.Faults.Add(c.ns, c.body, c.hasBody)
	if err != nil {
		return reply{}, err
	}
	return reply{201, b}, nil
}

// deleteFaults is DELETE /__admin/faults (controls §6.3): without an id
// parameter every rule goes; with ?id=<id> — even an empty one — only that
// rule, or 404 `no fault <id>`.
func (a *Admin) deleteFaults(c *call) (reply, *runs.Error) {
	v, ok := c.query["id"]
	if !ok {
		a.d.Faults.Clear()
		return ok200(statusOK)
	}
	if err := a.d.Faults.Delete(v[0]); err != nil {
		return reply{}, err
	}
	return ok200(statusOK)
}

func (a *Admin) listPresets(*call) (reply, *runs.Error) { return ok200(faults.Presets()) }

func (a *Admin) applyPreset(c *call) (reply, *runs.Error) {
	b, err := a.d.Faults.ApplyPreset(c.ns, c.params["name"], c.body, c.hasBody)
	if err != nil {
		return reply{}, err
	}
	return reply{201, b}, nil
}

// Journal and metrics (controls §7, §9).
func (a *Admin) requests(c *call) (reply, *runs.Error) {
	b, err := a.d.Journal.Query(c.ns, c.query)
	if err != nil {
		return reply{}, err
	}
	return ok200(b)
}

func (a *Admin) clearRequests(c *call) (reply, *runs.Error) {
	a.d.Journal.Clear(c.ns, c.query.Get("all") == "1")
	return ok200(statusOK)
}

// metrics answers JSON (controls §9), or the Prometheus text format
// (prom.ContentType) for ?format=prometheus or an Accept that names
// text/plain and not application/json — what a Prometheus scraper sends.
func (a *Admin) metrics(c *call) (reply, *runs.Error) {
	accept := strings.Join(c.r.Header.Values("Accept"), ",")
	if c.query.Get("format") == "prometheus" ||
		(strings.Contains(accept, "text/plain") && !strings.Contains(accept, "application/json")) {
		b, err := prom.Text(a.d.Metrics)
		if err != nil {
			return reply{}, runs.Admin(500, "metrics: "+err.Error())
		}
		c.out.Set("Content-Type", prom.ContentType)
		return ok200(b)
	}
	return ok200(a.d.Metrics.Body())
}

func (a *Admin) resetMetrics(*call) (reply, *runs.Error) {
	a.d.Metrics.Reset()
	return ok200(statusOK)
}

// Credentials (controls §10).
func (a *Admin) putCredentials(c *call) (reply, *runs.Error) {
	b, err := a.d.Credentials.Put(c.ns, c.body, c.hasBody)
	if err != nil {
		return reply{}, err
	}
	return ok200(b)
}

func (a *Admin) getCredentials(*call) (reply, *runs.Error) { return ok200(a.d.Credentials.List()) }

func (a *Admin) deleteCredentials(c *call) (reply, *runs.Error) {
	v, one := c.query["credential"]
	cred := ""
	if one {
		cred = v[0]
	}
	a.d.Credentials.Delete(cred, one)
	return ok200(statusOK)
}
