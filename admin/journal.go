package admin

import (
	"strconv"

	"github.com/labstack/echo/v4"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The journal routes (controls §7, H9) and the count of WireMock-style
// verification.

// RequestsList is GET /__admin/requests: one page of entries (journal.Query).
func (a *Admin) RequestsList(ec echo.Context, _ genadmin.RequestsListParams) error {
	c := callOf(ec)
	b, err := a.d.Journal.Query(c.ns, c.query)
	if err != nil {
		return err
	}
	return ok200(ec, b)
}

// RequestsClear is DELETE /__admin/requests (controls §7.3).
func (a *Admin) RequestsClear(ec echo.Context, _ genadmin.RequestsClearParams) error {
	c := callOf(ec)
	a.d.Journal.Clear(c.ns, c.query.Get("all") == "1")
	return ok200(ec, statusOK)
}

// RequestsCount is POST /__admin/requests/count: {"count":<n>} of the entries
// matching every field of the body (admin.yaml CountFilter; the validator has
// checked the field types). namespace defaults to the admin namespace; "*"
// counts every namespace.
func (a *Admin) RequestsCount(ec echo.Context, _ genadmin.RequestsCountParams) error {
	c := callOf(ec)
	var f journal.Filter
	ns, all := c.ns, false
	if c.hasBody && c.body.Kind == runs.Object {
		str := func(k string) string {
			v, _ := c.body.Obj.Get(k)
			return v.Str
		}
		f.Method, f.OperationID, f.PathPrefix = str("method"), str("operationId"), str("pathPrefix")
		if v, ok := c.body.Obj.Get("status"); ok {
			f.Status, f.HasStatus = int(number(v)), true
		}
		if v, ok := c.body.Obj.Get("namespace"); ok {
			ns, all = v.Str, v.Str == "*"
		}
	}
	n := a.d.Journal.Count(ns, all, f)
	return ok200(ec, []byte(`{"count":`+strconv.Itoa(n)+`}`))
}

// number is the value of a JSON number (Int or Float).
func number(v runs.Value) float64 {
	if v.Kind == runs.Float {
		return v.Float
	}
	f, _ := strconv.ParseFloat(v.Int, 64)
	return f
}
