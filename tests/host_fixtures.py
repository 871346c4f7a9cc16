"""Fixed host costs and kernel facts for tests that build a host profile without probing
this machine (the host profile's own tests and the preemption-model cross-check's)."""

from __future__ import annotations

from schedlab.hostcosts import ChannelCost, HostCosts, SyscallCost, TimerLatency
from schedlab.hostprofile import Fact, KernelFacts

PIPE = ChannelCost(kind="pipe", call_ns=300.4, hop_ns=1_999.6, round_trip_ns=5_200.0,
                   cpu=0, bytes=100, messages=1000, reps=3)
SOCKET = ChannelCost(kind="socket", call_ns=700.0, hop_ns=2_500.0, round_trip_ns=7_800.0,
                     cpu=0, bytes=100, messages=1000, reps=3)
SYSCALLS = SyscallCost(sleep_setup_ns=1_234.0, sleep_blocks_per_call=0.0, futex_wake_ns=150.0,
                       fork_exit_wait_ns=104_000.0, cpu=0, calls=100, forks=10, reps=3,
                       forker_rss_kb=5_000)
TIMER = TimerLatency(min_ns=17_000, p50_ns=40_000, p99_ns=60_000, max_ns=70_000, samples=100,
                     interval_ns=1_000_000, policy="fifo", priority=80)
FULL = HostCosts(pipe=PIPE, socket=SOCKET, syscalls=SYSCALLS, timer=TIMER)
FACTS = KernelFacts(preempt=Fact("none", "/proc/config.gz: CONFIG_PREEMPT_NONE=y"),
                    tick=Fact("nohz_idle", "/proc/config.gz: CONFIG_NO_HZ_IDLE=y"),
                    hz=Fact(250, "/proc/config.gz: CONFIG_HZ=250"), release="6.18.0",
                    timers=Fact("hrtimer", "/proc/config.gz: CONFIG_HIGH_RES_TIMERS=y"))
