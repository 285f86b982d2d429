package admin

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The run listing and view of the control plane (admin.yaml RunPage,
// RunView): what a console or a debugging user needs to see of the runs the
// emulator holds. They read the namespace's main branch and change nothing.

// defaultRunsLimit is the page size of GET /__admin/hermes/runs without limit.
const defaultRunsLimit = 100

// HermesRunsList is GET /__admin/hermes/runs?status=&limit=&cursor= (the
// validator has checked status and limit against admin.yaml).
func (a *Admin) HermesRunsList(ec echo.Context, _ genadmin.HermesRunsListParams) error {
	c := callOf(ec)
	limit := defaultRunsLimit
	if s := c.query.Get("limit"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	page, next, err := a.d.GW.Runs(c.ns, c.query.Get("status"), limit, c.query.Get("cursor"))
	if err != nil {
		return err
	}
	var b []byte
	b = append(b, `{"runs":[`...)
	for i, s := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, summaryObj(s).bytes()...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"next":`...)
		b = append(b, runs.QuoteString(next)...)
	}
	return ok200(ec, append(b, '}'))
}

// summaryObj renders a run summary's fields (admin.yaml RunSummary) into an
// open object.
func summaryObj(s gateway.RunSummary) *obj {
	return newObj().str("run_id", s.ID).str("status", s.Status).num("created_at", s.CreatedAt).num("updated_at", s.UpdatedAt).
		boolean("keyed", s.Keyed).boolean("owner_local", s.OwnerLocal).boolean("owner_alive", s.OwnerAlive).
		num("pending_approvals", float64(s.PendingApprovals)).num("queued_steers", float64(s.QueuedSteers)).
		str("transport", s.Transport)
}

// HermesRunGet is GET /__admin/hermes/runs/{id}: the run's full view; 404
// run_not_found (Hermes envelope) when the namespace holds no such run.
func (a *Admin) HermesRunGet(ec echo.Context, id genadmin.RunID, _ genadmin.HermesRunGetParams) error {
	v, err := a.d.GW.RunView(callOf(ec).ns, id)
	if err != nil {
		return err
	}
	approvals := []byte{'['}
	for i, ap := range v.Approvals {
		if i > 0 {
			approvals = append(approvals, ',')
		}
		approvals = append(approvals, ap...)
	}
	approvals = append(approvals, ']')
	o := summaryObj(v.RunSummary).rawBytes("record", v.Record).rawBytes("reservation_keys", strArray(v.ReservationKeys)).
		rawBytes("approvals", approvals).rawBytes("steers", strArray(v.Steers)).
		num("events_buffered", float64(v.EventsBuffered)).num("events_delivered", float64(v.EventsDelivered)).
		boolean("subscriber", v.Subscriber).raw("scenario", scenarioJSON(v.Scenario))
	return ok200(ec, o.bytes())
}
