package emulator_test

// Steer acceptance (acceptance.md J, items 136–145; runs-api §6.6; controls §11.3).

// steerPost posts a RunSteer body.
func (x *h) steerPost(id, body string, hdr ...string) res {
	return x.post("/v1/runs/"+id+"/steer", body, hdr...)
}
