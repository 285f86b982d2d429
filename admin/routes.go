package admin

import (
	"strings"

	"github.com/labstack/echo/v4"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/prom"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The generic routes: health, index, contract, namespaces, reset, clock,
// metrics and credentials (controls §2–§5, §9, §10).

var statusOK = []byte(`{"status":"ok"}`)

// Health is GET /health (controls §2).
func (a *Admin) Health(ec echo.Context) error {
	c := a.d.GW.Clock()
	clock := newObj().num("now", c.Now).boolean("frozen", c.Frozen).num("offsetMs", c.OffsetMs).bytes()
	return ok200(ec, newObj().str("status", "ok").str("service", "hermes").num("uptimeMs", float64(int64(a.d.GW.Uptime()))).
		rawBytes("clock", clock).num("namespaces", float64(a.d.GW.NamespaceCount())).bytes())
}

// Index is GET /__admin (controls §3): the route keys of admin.yaml, sorted by
// code point, and each route's operationId and summary.
func (a *Admin) Index(ec echo.Context, _ genadmin.IndexParams) error {
	keys := make([]string, len(theContract().routes))
	ops := []byte{'['}
	for i, rt := range theContract().routes {
		keys[i] = rt.key
		if i > 0 {
			ops = append(ops, ',')
		}
		ops = append(ops, newObj().str("route", rt.key).str("operationId", rt.operationID).str("summary", rt.summary).bytes()...)
	}
	ops = append(ops, ']')
	return ok200(ec, newObj().str("service", "hermes").rawBytes("routes", strArray(keys)).rawBytes("operations", ops).bytes())
}

// RouteKeys lists "METHOD /path" of every /__admin route of admin.yaml (path
// relative to /__admin, ":param" segments), sorted by code point — the
// `routes` of GET /__admin.
func RouteKeys() []string {
	c := theContract()
	keys := make([]string, len(c.routes))
	for i, rt := range c.routes {
		keys[i] = rt.key
	}
	return keys
}

// AdminContract is GET /__admin/openapi.yaml: admin.yaml as embedded.
func (a *Admin) AdminContract(ec echo.Context, _ genadmin.AdminContractParams) error {
	return ec.Blob(200, "application/yaml", hermesemulator.AdminAPI)
}

// NamespacesList is GET /__admin/namespaces (controls §4.2).
func (a *Admin) NamespacesList(ec echo.Context, _ genadmin.NamespacesListParams) error {
	return ok200(ec, newObj().str("default", "default").rawBytes("namespaces", strArray(a.d.GW.Namespaces())).bytes())
}

// Reset is POST /__admin/reset (controls §4.3).
func (a *Admin) Reset(ec echo.Context, _ genadmin.ResetParams) error {
	c := callOf(ec)
	names, err := a.d.GW.Reset(c.ns, c.query.Get("all") == "1")
	if err != nil {
		return err
	}
	return ok200(ec, newObj().str("status", "ok").rawBytes("reset", strArray(names)).bytes())
}

func clockBody(s gateway.ClockState) []byte {
	return newObj().num("now", s.Now).boolean("frozen", s.Frozen).num("offsetMs", s.OffsetMs).bytes()
}

// ClockGet is GET /__admin/clock (controls §5).
func (a *Admin) ClockGet(ec echo.Context, _ genadmin.ClockGetParams) error {
	return ok200(ec, clockBody(a.d.GW.Clock()))
}

// ClockSet is POST /__admin/clock (controls §5): fields applied before an
// error stay applied (the gateway publishes the move on the change stream).
func (a *Admin) ClockSet(ec echo.Context, _ genadmin.ClockSetParams) error {
	c := callOf(ec)
	body := c.body
	if !c.hasBody {
		body = runs.NullValue()
	}
	st, err := a.d.GW.SetClock(body)
	if err != nil {
		return err
	}
	return ok200(ec, clockBody(st))
}

// MetricsGet answers JSON (controls §9), or the Prometheus text format
// (prom.ContentType) for ?format=prometheus or, without format, an Accept
// that names text/plain and not application/json — what a Prometheus scraper
// sends. ?format=json is JSON whatever the Accept (the validator refuses any
// other format).
func (a *Admin) MetricsGet(ec echo.Context, _ genadmin.MetricsGetParams) error {
	c := callOf(ec)
	accept := strings.Join(c.r.Header.Values("Accept"), ",")
	format := c.query.Get("format")
	if format == "prometheus" ||
		(format == "" && strings.Contains(accept, "text/plain") && !strings.Contains(accept, "application/json")) {
		b, err := prom.Text(a.d.Metrics)
		if err != nil {
			return runs.Admin(500, "metrics: "+err.Error())
		}
		return ec.Blob(200, prom.ContentType, b)
	}
	return ok200(ec, a.d.Metrics.Body())
}

// MetricsReset is DELETE /__admin/metrics (controls §9).
func (a *Admin) MetricsReset(ec echo.Context, _ genadmin.MetricsResetParams) error {
	a.d.Metrics.Reset()
	return ok200(ec, statusOK)
}

// CredentialsPut is PUT /__admin/credentials (controls §10).
func (a *Admin) CredentialsPut(ec echo.Context, _ genadmin.CredentialsPutParams) error {
	c := callOf(ec)
	b, err := a.d.Credentials.Put(c.ns, c.body, c.hasBody)
	if err != nil {
		return err
	}
	return ok200(ec, b)
}

// CredentialsList is GET /__admin/credentials (controls §10).
func (a *Admin) CredentialsList(ec echo.Context, _ genadmin.CredentialsListParams) error {
	return ok200(ec, a.d.Credentials.List())
}

// CredentialsDelete is DELETE /__admin/credentials (controls §10):
// ?credential=<c> removes one, otherwise all.
func (a *Admin) CredentialsDelete(ec echo.Context, _ genadmin.CredentialsDeleteParams) error {
	v, one := callOf(ec).query["credential"]
	cred := ""
	if one {
		cred = v[0]
	}
	a.d.Credentials.Delete(cred, one)
	return ok200(ec, statusOK)
}
