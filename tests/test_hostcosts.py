"""The host-cost probe and how its figures enter a spec (schedlab.hostcosts)."""

from __future__ import annotations

import json
import os

import pytest

from schedlab import _core, api, hostcosts
from schedlab.hostcosts import ChannelCost, HostCosts

FAKE = HostCosts(
    pipe=ChannelCost(kind="pipe", call_ns=300.4, hop_ns=1_999.6, round_trip_ns=5_200.0,
                     cpu=0, bytes=100, messages=1000, reps=3),
    socket=ChannelCost(kind="socket", call_ns=700.0, hop_ns=2_500.0, round_trip_ns=7_800.0,
                       cpu=0, bytes=100, messages=1000, reps=3),
)


def test_probe_measures_and_keeps_affinity() -> None:
    before = os.sched_getaffinity(0)
    costs = hostcosts.measure(quick=True)
    for kind, c in (("pipe", costs.pipe), ("socket", costs.socket)):
        assert c.kind == kind
        assert c.call_ns > 0 and c.round_trip_ns > 0 and c.hop_ns >= 0
        # A round trip is two writes, two reads and two hops (the definition of hop).
        assert c.round_trip_ns == pytest.approx(4 * c.call_ns + 2 * c.hop_ns) or c.hop_ns == 0
    assert costs.switch_ns == costs.pipe.hop_ns
    assert os.sched_getaffinity(0) == before


@pytest.mark.parametrize("kwargs", [{"bytes": 0}, {"bytes": 5000}, {"messages": 0},
                                    {"reps": 0}, {"kind": "fifo"}])
def test_probe_rejects_bad_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="channel_costs"):
        _core.host_channel_costs(**kwargs)


def test_apply_sets_switch_and_pipe_costs_only() -> None:
    text = api.generate_text("hackbench", [("groups", "1"), ("loops", "2"), ("fds", "2"),
                                           ("mode", "pipe")])
    out_text = hostcosts.apply(text, FAKE)
    out = json.loads(out_text)
    m = out["schedlab"]["machine"]["profile"]["machine"]
    assert m == {"context_switch_ns": 2000,
                 "channel_costs": {"pipe": {"op_cost_ns": 300, "byte_cost_ps": 0},
                                   "socket": {"op_cost_ns": 700, "byte_cost_ps": 0}}}
    # The channels take the profile's costs: none of their own.
    pipes = out["schedlab"]["pipes"]
    assert pipes and all("op_cost_ns" not in c and "byte_cost_ps" not in c
                         for c in pipes.values())
    # Only the costs changed: members keep their order, and the result is a valid spec.
    assert list(out["tasks"]) == list(json.loads(text)["tasks"])
    api.validate(out_text)


@pytest.mark.parametrize("mode", ["pipe", "socket"])
def test_profile_costs_equal_the_same_costs_given_as_keys(mode: str) -> None:
    """Run through the simulator: the cost profile charges exactly what the same costs
    written as the spec's own keys charge."""
    text = api.generate_text("hackbench", [("groups", "1"), ("loops", "3"), ("fds", "2"),
                                           ("mode", mode), ("cpus", "1")])
    costed = hostcosts.apply(text, FAKE)
    chans = json.loads(costed)["schedlab"][f"{mode}s"]
    assert chans and all("op_cost_ns" not in c for c in chans.values())
    call = {"pipe": 300, "socket": 700}[mode]

    def keys(spec: dict) -> None:
        spec["schedlab"]["machine"]["context_switch_ns"] = 2000
        for c in spec["schedlab"][f"{mode}s"].values():
            c["op_cost_ns"] = call
            c["byte_cost_ps"] = 0

    by_keys = api.simulate(api.edit_spec(text, keys), scheduler="linux-o1").json
    by_profile = api.simulate(costed, scheduler="linux-o1").json
    assert by_profile["tasks"] == by_keys["tasks"] and by_profile["cpus"] == by_keys["cpus"]
    assert sum(c["overhead_ns"] for c in by_profile["cpus"]) > 0


def test_costed_hackbench_pays_for_its_switches() -> None:
    spec = api.generate_text("hackbench", [("groups", "2"), ("loops", "5"), ("fds", "4"),
                                           ("mode", "pipe"), ("cpus", "1")])
    base = api.simulate(spec, scheduler="linux-o1")
    costed = api.simulate(hostcosts.apply(spec, FAKE), scheduler="linux-o1")
    overhead = sum(c["overhead_ns"] for c in costed.json["cpus"])
    assert sum(c["overhead_ns"] for c in base.json["cpus"]) == 0
    # Whole switches of 2000 ns each, at least one per time a task blocked.
    blocked = sum(t["switches_voluntary"] for t in costed.json["tasks"])
    assert overhead % 2000 == 0 and overhead // 2000 >= blocked > 0
    # Calls now cost the measured 300 ns instead of the calibrated whole-path cost.
    assert costed.json["tasks"] != base.json["tasks"]
