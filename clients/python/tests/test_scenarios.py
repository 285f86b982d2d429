"""Scenarios (docs/scenarios.md): runs that move by themselves, loaded by HermesEmulator(scenarios=...) or
through control.put_scenarios, fired deterministically by advancing a frozen clock through control."""

import os

import pytest

from hermes_emulator import ControlError, EmulatorError, HermesEmulator

HAPPY_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "scenarios", "happy-path.yaml")
T0 = 1700000000000


def test_the_scenarios_option_loads_the_file_and_a_frozen_clock_advance_completes_the_run():
    with HermesEmulator(scenarios=HAPPY_PATH) as emu:
        control = emu.control
        assert [s["name"] for s in control.scenarios()["scenarios"]] == ["happy-path"]
        control.set_clock(set=T0, freeze=True)
        run_id = emu.post("/v1/runs", {"input": "list my files"})["run_id"]
        assert control.run(run_id)["scenario"] == {"name": "happy-path", "step": "steps[0]", "due": T0 + 100}

        control.set_clock(advance=1000)  # steps 0-3 fire (due at 100, 150, 900, 1100 ms): the last is not due
        assert emu.get(f"/v1/runs/{run_id}")["status"] == "running"
        assert control.run(run_id)["scenario"] == {"name": "happy-path", "step": "steps[3]", "due": T0 + 1100}

        control.set_clock(advance=1000)
        run = emu.get(f"/v1/runs/{run_id}")
        assert (run["status"], run["output"], run["updated_at"]) == ("completed", "Your project has 12 files.", (T0 + 1200) / 1000)
        assert control.run(run_id)["scenario"] is None
        assert control.metrics()["scenarioSteps"] == {"happy-path": 5}


def test_put_get_delete_in_the_fixture_namespace(hermes_emulator):
    control = hermes_emulator.control
    scenario_set = {"scenarios": [{"name": "quick", "steps": [
        {"after": "100ms", "observe": {"status": "running"}},
        {"after": 400, "observe": {"status": "completed", "output": "hi"}},
    ]}]}
    assert control.put_scenarios(scenario_set) == 1
    assert control.scenarios() == scenario_set
    assert hermes_emulator.server.control.scenarios() == {"scenarios": []}, "the default namespace has none"

    control.set_clock(set=T0, freeze=True)  # the fixture puts the server's one clock back afterwards
    run_id = hermes_emulator.post("/v1/runs", {"input": "hello"})["run_id"]
    control.set_clock(advance=500)
    run = hermes_emulator.get(f"/v1/runs/{run_id}")
    assert (run["status"], run["output"], run["updated_at"]) == ("completed", "hi", (T0 + 500) / 1000)

    control.delete_scenarios()
    assert control.scenarios() == {"scenarios": []}
    idle = hermes_emulator.post("/v1/runs", {"input": "hello"})["run_id"]
    control.set_clock(advance=5000)
    assert hermes_emulator.get(f"/v1/runs/{idle}")["status"] == "queued", "no scenario after the delete"


def test_an_invalid_set_is_refused_with_the_path_of_the_bad_field(hermes_emulator):
    control = hermes_emulator.control
    good = {"scenarios": [{"name": "a", "steps": [{"after": 0, "observe": {"status": "running"}}]}]}
    control.put_scenarios(good)
    bad = {"scenarios": [{"name": "x", "steps": [{"after": "1s", "observe": {"status": "running", "output": "no"}}]}]}
    with pytest.raises(ControlError) as err:
        control.put_scenarios(bad)
    e = err.value
    assert (e.status, e.type, e.message) == (400, "invalid_request_error", "scenarios[0].steps[0].observe: result fields require completed status")
    assert control.scenarios() == good


def test_an_invalid_scenario_file_fails_start_with_the_file_and_the_first_bad_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  - name: x\n    steps:\n      - after: 1s\n        observe: {status: running, output: no}\n")
    with pytest.raises(EmulatorError) as err:
        HermesEmulator(scenarios=str(bad)).start()
    assert str(err.value) == (f"hermes-emulator exited (code 2) before listening: hermes-emulator serve: {bad}: "
                              "scenarios[0].steps[0].observe: result fields require completed status")
