"""Reliability under load, faults and hostile input, measured on real processes on 127.0.0.1.

    python bench/reliability/run.py            # full run (about 3 to 5 minutes on 2 cores)
    python bench/reliability/run.py --quick    # CI size (under 2 minutes)

Two uvicorn instances of ``server.py`` share a key file and a PostgreSQL single-use store (in
redelivery mode). Closed-loop users run whole flows, the first round on one instance and the retry
on the other, while a schedule of faults runs: ``kill -9`` of an instance (restarted), flows whose
instance dies between their side effect and their answer, a PostgreSQL restart, and a key
rotation through the key file (SIGHUP). Then hostile input against HTTP and stdio, slow and idle
clients, and stdio faults. One table of figures at the end (and ``--json`` for machines); the exit
status is 0 only when every target is met. Every process started is stopped, and PostgreSQL is
started again if it is down, whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile
import hostile_cases
import hostile_client  # hostile input, client side (its own section; see hostile_client.py)
import slowclients
import stdio_faults
from httpclient import Instance
from load import Driver, Policy, Window, percentile, tool_call
from procs import (
    SERVER,
    Processes,
    ServerProcess,
    can_restart_postgres,
    drop_tables,
    ensure_postgres_running,
    free_port,
    pg_connect,
    restart_postgres,
    rss_kib,
    wait_for_postgres,
)

from mcp_elicit.state import KeyRing

DEFAULT_DSN = "host=127.0.0.1 port=5432 dbname=test user=postgres"


@dataclass
class Config:
    quick: bool
    workers: int
    think: float
    min_flows: int
    ttl: float
    t_kill: float
    kill_down: float
    t_crash: float
    crash_flows: int
    t_pg: float
    t_rot1: float
    t_rot2: float
    t_pause: float
    pauses: int  # SIGSTOP/SIGCONT of A, then B, then A ... (each instance paused in turn)
    pause_s: float
    tail: float
    hostile_http: int
    hostile_stdio: int
    slow_idle: int
    slow_used: int
    slow_headers: int
    slow_body: int
    slow_hold: float
    deadline: float  # the whole run, seconds

    @classmethod
    def make(cls, quick: bool, workers: int | None) -> Config:
        """The two sizes. Times are seconds from the start of the load."""
        if quick:
            return cls(
                quick=True, workers=workers or 200, think=0.5, min_flows=2000, ttl=8.0,
                t_kill=3.0, kill_down=1.0, t_crash=7.0, crash_flows=1, t_pg=11.0,
                t_rot1=15.0, t_rot2=17.0, t_pause=20.0, pauses=4, pause_s=3.0, tail=1.0,
                hostile_http=150, hostile_stdio=60,
                slow_idle=100, slow_used=50, slow_headers=50, slow_body=30, slow_hold=7.0,
                deadline=170.0,
            )  # fmt: skip
        return cls(
            quick=False, workers=workers or 200, think=0.5, min_flows=5000, ttl=30.0,
            t_kill=8.0, kill_down=1.0, t_crash=18.0, crash_flows=2, t_pg=30.0,
            t_rot1=42.0, t_rot2=46.0, t_pause=52.0, pauses=6, pause_s=3.0, tail=3.0,
            hostile_http=1500, hostile_stdio=400,
            slow_idle=300, slow_used=100, slow_headers=150, slow_body=50, slow_hold=9.0,
            deadline=420.0,
        )  # fmt: skip


@dataclass
class Figures:
    """Everything measured, for the table and the JSON."""

    mode: str = ""
    seconds: float = 0.0
    load: dict[str, Any] = field(default_factory=dict)
    kill: dict[str, Any] = field(default_factory=dict)
    crash: dict[str, Any] = field(default_factory=dict)
    effects: dict[str, Any] = field(default_factory=dict)
    postgres: dict[str, Any] = field(default_factory=dict)
    rotation: dict[str, Any] = field(default_factory=dict)
    pause: dict[str, Any] = field(default_factory=dict)
    crashed: list[dict[str, Any]] = field(default_factory=list)  # instances that died unbidden
    hostile: dict[str, Any] = field(default_factory=dict)
    slow: dict[str, Any] = field(default_factory=dict)
    stdio: dict[str, Any] = field(default_factory=dict)
    hostile_client: dict[str, Any] = field(default_factory=dict)  # our client vs a malicious server
    rss_mib: dict[str, float] = field(default_factory=dict)
    cpu_timeline: dict[int, list[int]] = field(default_factory=dict)  # s -> total, ours, pg, other (%)
    skipped: dict[str, str] = field(default_factory=dict)
    targets: dict[str, bool] = field(default_factory=dict)
    failure: str = ""


@dataclass
class CpuSnapshot:
    at: float
    busy: int  # jiffies the machine was busy (all cores)
    ours: dict[int, int]  # jiffies per process of this run
    postgres: dict[int, int]  # jiffies per postgres process (every user's)


def _jiffies(pid: int) -> tuple[str, int]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return "", 0
    rest = text[text.rfind(")") + 2 :].split()
    return text[text.find("(") + 1 : text.rfind(")")], int(rest[11]) + int(rest[12])


def cpu_snapshot(ours: list[int]) -> CpuSnapshot:
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)  # minus idle and iowait
    mine = {pid: _jiffies(pid)[1] for pid in ours}
    pg: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            name, jiffies = _jiffies(int(entry))
            if name == "postgres":
                pg[int(entry)] = jiffies
    return CpuSnapshot(time.perf_counter(), busy, mine, pg)


def _grown(before: dict[int, int], after: dict[int, int]) -> int:
    """Jiffies used between two snapshots by the processes alive at the second one."""
    return sum(j - before.get(pid, 0) for pid, j in after.items())


def kid_of(token: str) -> str:
    body = token[3:]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))[:4].hex()


def write_keys(path: Path, *secrets_: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("# reliability harness state keys; the first one seals\n" + "\n".join(secrets_) + "\n")
    tmp.chmod(0o600)
    os.replace(tmp, path)


async def first_round_state(instance: Instance, item: str) -> str:
    response = await instance.post(tool_call("order", {"item": item})(1), name="order", timeout=10)
    state = response.json()["result"]["requestState"]
    assert isinstance(state, str)
    return state


class Harness:
    def __init__(self, cfg: Config, skip: set[str], dsn: str, work: Path) -> None:
        self.cfg = cfg
        self.skip = skip
        self.dsn = dsn
        self.work = work
        self.run_id = secrets.token_hex(3)
        self.used_table = f"rel_used_{self.run_id}"
        self.effects_table = f"rel_effects_{self.run_id}"
        self.crash_tool = f"crash_{secrets.token_hex(8)}"
        self.procs = Processes()
        self.fig = Figures(mode="quick" if cfg.quick else "full")
        self.keys_path = work / "keys"
        self.k1 = KeyRing.generate_secret()
        self.k2 = KeyRing.generate_secret()
        self.kid1 = KeyRing.from_secrets([self.k1]).kids[0]
        self.kid2 = KeyRing.from_secrets([self.k2]).kids[0]
        self.servers: list[ServerProcess] = []
        self.instances: list[Instance] = []
        self.stdio_peak_kib = 0
        self.crash_flows_running = False  # deaths then are the crash tool's, counted there
        self.cpu_timeline: dict[int, list[int]] = {}
        self.t_start = time.perf_counter()

    def log(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------------------ set-up

    async def start_servers(self) -> None:
        write_keys(self.keys_path, self.k1)
        common = [
            "--keys-file",
            str(self.keys_path),
            "--key-check-interval",
            "0.5",
            "--dsn",
            self.dsn,
            "--table",
            self.used_table,
            "--effects-table",
            self.effects_table,
            "--ttl",
            str(self.cfg.ttl),
            "--crash-tool",
            self.crash_tool,
            "--body-timeout",
            "5",
            "--keep-alive",
            "5",
            "--header-timeout",
            "5",
        ]
        for name in ("A", "B"):
            server = self.procs.add(ServerProcess(name, free_port(), common, self.work))
            self.servers.append(server)
            server.spawn()
        for server in self.servers:
            await server.wait_ready()
            self.instances.append(Instance(server.name, server.port))
        # Create the tables before the load (first use creates them; do it calmly here).
        for instance in self.instances:
            state = await first_round_state(instance, f"warm-{instance.name}")
            body = tool_call(
                "order",
                {"item": f"warm-{instance.name}"},
                inputResponses=hostile_cases.answer("warm"),
                requestState=state,
            )(2)
            await instance.post(body, name="order", timeout=20)

    async def sample_rss(self) -> None:
        while True:
            for server in self.servers:
                server.sample_rss()
            await asyncio.sleep(0.5)

    async def sample_cpu(self) -> None:
        """Once a second: CPU used by the whole machine, by this run (harness + servers), by
        PostgreSQL (all its backends, also other users'), and by everything else, in % of one
        core. The machine is shared: this says how much of a latency spike was someone else's."""
        tick = os.sysconf("SC_CLK_TCK")
        previous: CpuSnapshot | None = None
        while True:
            ours = [os.getpid(), *(s.pid for s in self.servers if s.alive())]
            now = await asyncio.to_thread(cpu_snapshot, ours)
            if previous is not None:
                scale = 100.0 / tick / (now.at - previous.at)
                total = (now.busy - previous.busy) * scale
                mine = _grown(previous.ours, now.ours) * scale
                pg = _grown(previous.postgres, now.postgres) * scale
                other = max(0.0, total - mine - pg)
                self.cpu_timeline[int(now.at - self.t_start)] = [
                    round(total),
                    round(mine),
                    round(pg),
                    round(other),
                ]
            previous = now
            await asyncio.sleep(1.0)

    # ------------------------------------------------------------------------------ load + faults

    async def load_and_faults(self) -> None:
        cfg = self.cfg
        policy = Policy(think=cfg.think, flow_deadline=max(60.0, cfg.ttl * 2))
        driver = Driver(self.instances, policy, self.run_id)
        stats = driver.stats
        held_k1 = [await first_round_state(self.instances[i % 2], f"held-{i}") for i in range(10)]
        schedule_done = False
        hard_stop = time.perf_counter() + cfg.deadline * 0.55

        def keep_going() -> bool:
            if time.perf_counter() > hard_stop:
                return False
            return not (schedule_done and stats.started >= cfg.min_flows)

        t0 = time.perf_counter()
        # The first 2 s (200 users starting at once, connections being opened) are not a fault,
        # but not the steady state either: kept out of the "outside fault windows" figure.
        windows: dict[str, Window] = {"warm-up": Window("warm-up", t0, t0 + 2.0)}

        async def at(offset: float) -> None:
            await asyncio.sleep(max(0.0, t0 + offset - time.perf_counter()))

        async def schedule() -> None:
            nonlocal schedule_done
            try:
                if "kill" not in self.skip:
                    await at(cfg.t_kill)
                    await self.kill_and_restart(windows)
                if "crash" not in self.skip:
                    await at(cfg.t_crash)
                    await self.crash_flows(driver, windows)
                if "pg-restart" not in self.skip:
                    await at(cfg.t_pg)
                    await self.postgres_restart(windows)
                if "rotation" not in self.skip:
                    await self.rotate(at, held_k1, windows)
                if "pause" not in self.skip:
                    await at(cfg.t_pause)
                    await self.pause_instances(windows)
                await asyncio.sleep(cfg.tail)
            finally:
                schedule_done = True

        self.log(f"load: {cfg.workers} users, first round on one instance and the retry on the other")
        sched = asyncio.ensure_future(schedule())
        await driver.run(cfg.workers, keep_going)
        await sched
        took = time.perf_counter() - t0
        lat = list(stats.latencies)
        self.fig.load = {
            "flows_started": stats.started,
            "flows_completed": stats.completed,
            "flows_lost": stats.lost,
            "wrong_results": stats.wrong,
            "max_in_flight": stats.max_in_flight,
            "seconds": round(took, 1),
            "flows_per_s": round(stats.completed / took, 1),
            "p50_ms": round(percentile(lat, 50) * 1e3, 1),
            "p99_ms": round(percentile(lat, 99) * 1e3, 1),
            "max_ms": round(max(lat, default=0.0) * 1e3, 1),
            "requests_reissued": stats.reissued_requests,
            "retries_redelivered": stats.redelivered,
            "errors_by_kind": dict(stats.errors.most_common()),
            "lost_by_kind": dict(stats.lost_kinds.most_common()),
            "think_s": cfg.think,
        }
        for name, window in windows.items():
            if name == "warm-up":
                continue
            inside = stats.latency_in(window)
            target = {"kill": self.fig.kill, "pg": self.fig.postgres, "pause": self.fig.pause}.get(
                name, self.fig.crash
            )
            target.update(
                {
                    "flows_in_window": len(inside),
                    "window_p50_ms": round(percentile(inside, 50) * 1e3, 1),
                    "window_p99_ms": round(percentile(inside, 99) * 1e3, 1),
                    "window_max_ms": round(max(inside, default=0.0) * 1e3, 1),
                }
            )
        quiet = [
            lat
            for (start, end), lat in zip(stats.spans, stats.latencies, strict=True)
            if not any(start <= (w.end or float("inf")) and end >= w.start for w in windows.values())
        ]
        self.fig.load["steady_flows"] = len(quiet)
        self.fig.load["steady_p50_ms"] = round(percentile(quiet, 50) * 1e3, 1)
        self.fig.load["steady_p99_ms"] = round(percentile(quiet, 99) * 1e3, 1)
        timeline: dict[int, list[float]] = {}
        for (_, end), latency in zip(stats.spans, stats.latencies, strict=True):
            timeline.setdefault(int(end - t0), []).append(latency)
        self.fig.load["timeline"] = {
            second: [len(lats), round(percentile(lats, 99) * 1e3, 1)]
            for second, lats in sorted(timeline.items())
        }
        self.fig.load["load_started_at_s"] = round(t0 - self.t_start, 1)
        self.fig.load["fault_times_s"] = {
            name: [round(w.start - t0, 2), round((w.end or 0) - t0, 2)] for name, w in windows.items()
        }
        self.fig.crash["crash_flows_started"] = stats.started_by_tool[self.crash_tool]
        self.fig.crash["crash_flows_completed"] = stats.completed_by_tool[self.crash_tool]
        await asyncio.to_thread(self.check_effects, stats.completed_values)

    async def restart(self, server: ServerProcess) -> float:
        ready = await server.start()
        return ready

    async def kill_and_restart(self, windows: dict[str, Window]) -> None:
        server = self.servers[0]
        self.log(f"fault: kill -9 {server.name} (pid {server.pid})")
        window = windows["kill"] = Window("kill", time.perf_counter())
        server.kill9()
        await asyncio.sleep(self.cfg.kill_down)
        ready = await self.restart(server)
        window.end = time.perf_counter() + 1.0
        self.fig.kill.update(
            {"instance": server.name, "down_s": self.cfg.kill_down, "restart_s": round(ready, 2)}
        )
        self.log(f"fault: {server.name} back after {self.cfg.kill_down + ready:.2f} s")

    async def pause_instances(self, windows: dict[str, Window]) -> None:
        """SIGSTOP an instance under load for ``pause_s``, then SIGCONT; A, then B, in turn. When
        it runs again, its timers and its sockets' replies are all due at once (store operations
        past their deadline are abandoned while their replies are there): it must go on serving,
        the same process, and every round it refuses must be retryable (no flow lost)."""
        cfg = self.cfg
        window = windows["pause"] = Window("pause", time.perf_counter())
        rounds: list[dict[str, Any]] = []
        for i in range(cfg.pauses):
            server = self.servers[i % 2]
            pid = server.pid
            self.log(f"fault: SIGSTOP {server.name} (pid {pid}) for {cfg.pause_s:g} s")
            server.pause()
            try:
                await asyncio.sleep(cfg.pause_s)
            finally:
                server.resume()
            await asyncio.sleep(1.0)  # running again, under load, before the other one stops
            same = server.alive() and server.pid == pid
            rounds.append({"instance": server.name, "pid": pid, "same_pid_after": same})
            if not same:
                self.log(f"fault: {server.name} did not survive its pause (exit {server.exit_status()})")
        window.end = time.perf_counter() + 1.0
        self.fig.pause.update(
            {
                "pauses": len(rounds),
                "pause_s": cfg.pause_s,
                "same_pid_after_every_pause": all(r["same_pid_after"] for r in rounds),
                "rounds": rounds,
            }
        )

    async def watch_instances(self) -> None:
        """An instance that exits when nobody ended it has crashed: record it, start it again
        (so that the run goes on and the loss shows in the figures) and go on watching."""
        while True:
            for server in self.servers:
                status = server.exit_status()
                if status is None or server.expect_exit or self.crash_flows_running:
                    continue
                pid = server.pid
                self.fig.crashed.append(
                    {
                        "instance": server.name,
                        "pid": pid,
                        "exit": status if status >= 0 else signal.Signals(-status).name,
                        "at_s": round(time.perf_counter() - self.t_start, 1),
                    }
                )
                self.log(f"CRASH: {server.name} (pid {pid}) exited by itself ({status}); starting it again")
                await self.restart(server)
            await asyncio.sleep(0.2)

    async def crash_flows(self, driver: Driver, windows: dict[str, Window]) -> None:
        """Flows whose retry goes to an instance that dies right after writing the side effect.
        Whichever instance dies (normally the target) is restarted."""
        self.crash_flows_running = True
        try:
            await self._crash_flows(driver, windows)
        finally:
            self.crash_flows_running = False

    async def _crash_flows(self, driver: Driver, windows: dict[str, Window]) -> None:
        deaths = 0
        window = windows["crash"] = Window("crash", time.perf_counter())
        for i in range(self.cfg.crash_flows):
            target = 1 - (i % 2)  # B first, then A
            self.log(
                f"fault: a flow whose retry kills {self.servers[target].name} "
                "between its side effect and its answer"
            )
            flow = asyncio.ensure_future(driver.flow(tool=self.crash_tool, first_on=1 - target))
            for _ in range(200):  # up to 20 s for an instance to die
                if not all(server.alive() for server in self.servers):
                    break
                await asyncio.sleep(0.1)
            for server in self.servers:
                if not server.alive():
                    deaths += 1
                    await self.restart(server)
            await asyncio.wait_for(flow, 120)
        window.end = time.perf_counter() + 1.0
        self.fig.crash["instances_killed_by_crash_flows"] = deaths

    async def postgres_restart(self, windows: dict[str, Window]) -> None:
        why_not = await asyncio.to_thread(can_restart_postgres)
        if why_not is not None:
            self.fig.skipped["pg-restart"] = why_not
            return
        self.log("fault: PostgreSQL restart")
        window = windows["pg"] = Window("pg", time.perf_counter())
        took, outcome = await restart_postgres()
        window.end = time.perf_counter() + 2.0
        self.fig.postgres.update({"restart_s": round(took, 2), "outcome": outcome})
        self.log(f"fault: PostgreSQL {outcome} in {took:.2f} s")

    async def rotate(self, at: Any, held_k1: list[str], windows: dict[str, Window]) -> None:
        cfg = self.cfg
        rot: dict[str, Any] = self.fig.rotation
        await at(cfg.t_rot1)
        self.log("keys: [K1] -> [K1, K2] (every instance learns K2)")
        write_keys(self.keys_path, self.k1, self.k2)
        for server in self.servers:
            server.hup()
        await at(cfg.t_rot2)
        self.log("keys: [K1, K2] -> [K2, K1] (K2 seals)")
        write_keys(self.keys_path, self.k2, self.k1)
        t_promote = time.perf_counter()
        for server in self.servers:
            server.hup()
        promoted = {}
        for instance in self.instances:
            for _ in range(50):
                if kid_of(await first_round_state(instance, "rotation-probe")) == self.kid2:
                    promoted[instance.name] = round(time.perf_counter() - t_promote, 2)
                    break
                await asyncio.sleep(0.2)
        rot["k2_sealing_after_s"] = promoted
        rot["k2_sealing_everywhere"] = len(promoted) == len(self.instances)
        await asyncio.sleep(max(0.0, t_promote + cfg.ttl + 2.0 - time.perf_counter()))
        self.log(f"keys: [K2, K1] -> [K2] (after the state TTL of {cfg.ttl:g} s)")
        write_keys(self.keys_path, self.k2)
        for server in self.servers:
            server.hup()
        await asyncio.sleep(1.0)
        refused = 0
        other = Counter[str]()
        for i, state in enumerate(held_k1):
            instance = self.instances[i % 2]
            body = tool_call(
                "order",
                {"item": f"held-{i}"},
                inputResponses=hostile_cases.answer("late"),
                requestState=state,
            )(7)
            response = await instance.post(body, name="order", timeout=10)
            error = response.json().get("error") or {}
            if (
                response.status == 400
                and error.get("code") == -32602
                and error.get("message") == hostile.INVALID_STATE
            ):
                refused += 1
            else:
                other[f"HTTP {response.status} {str(error)[:60]}"] += 1
        rot["k1_states_presented_after_removal"] = len(held_k1)
        rot["k1_states_refused_32602"] = refused
        rot["k1_states_other"] = dict(other)
        rot["kid1"], rot["kid2"] = self.kid1, self.kid2

    def check_effects(self, completed_values: set[str]) -> None:
        from psycopg import sql

        with pg_connect(self.dsn) as conn:
            ident = sql.Identifier(self.effects_table)
            rows = conn.execute(
                sql.SQL("SELECT value, count(*) FROM {} GROUP BY value").format(ident)
            ).fetchall()
        per_value = {value: count for value, count in rows}
        load_values = {v for v in per_value if v.startswith(f"value-{self.run_id}-")}
        self.fig.effects = {
            "rows_for_load_flows": sum(per_value[v] for v in load_values),
            "completed_flows": len(completed_values),
            "flows_with_exactly_one_row": sum(1 for v in completed_values if per_value.get(v) == 1),
            "doubled": sum(1 for v in load_values if per_value[v] > 1),
            "missing": sum(1 for v in completed_values if v not in per_value),
            "rows_of_flows_not_completed": len(load_values - completed_values),
        }

    # ------------------------------------------------------------------------------ hostile

    async def hostile_phase(self) -> None:
        cfg = self.cfg
        target = self.servers[0]
        instance = self.instances[0]
        pid_before = target.pid
        rss_before = rss_kib(pid_before)[0]
        live = await hostile_cases.gather_live(instance)
        canary = Driver([instance, instance], Policy(think=0.05), self.run_id + "c")
        tally = hostile.Tally()
        stop = False
        canary_task = asyncio.ensure_future(canary.run(10, lambda: not stop))
        t0 = time.perf_counter()
        try:
            cases = hostile_cases.hand_cases(target.port, live)
            self.log(f"hostile: {len(cases)} hand-written HTTP cases against {target.name}")
            await asyncio.to_thread(hostile_cases.run_hand, target.port, cases, tally)
            self.log(f"hostile: {cfg.hostile_http} generated HTTP cases")
            await asyncio.to_thread(hostile_cases.run_generated_http, target.port, cfg.hostile_http, tally, 5)
        finally:
            stop = True
            await canary_task
        http_seconds = time.perf_counter() - t0
        alive = target.alive() and target.pid == pid_before
        rss_after, hwm = rss_kib(target.pid) if target.alive() else (0, 0)
        self.log(f"hostile: stdio ({cfg.hostile_stdio} generated + hand-written lines)")
        peer = hostile.StdioPeer(
            [sys.executable, str(SERVER), "stdio", "--keys-file", str(self.keys_path)],
            str(self.work / "stdio-hostile.log"),
        )
        self.procs.track(peer.proc)
        stdio_tally = hostile.Tally()
        try:
            await asyncio.to_thread(self.stdio_hostile, peer, stdio_tally)
        finally:
            code = await asyncio.to_thread(peer.close)
        self.fig.hostile = {
            "http": self.tally_dict(tally),
            "stdio": self.tally_dict(stdio_tally),
            "http_seconds": round(http_seconds, 1),
            "server_alive_same_pid": alive,
            "canary_flows_completed": canary.stats.completed,
            "canary_flows_lost": canary.stats.lost + canary.stats.wrong,
            "canary_p99_ms": round(percentile(list(canary.stats.latencies), 99) * 1e3, 1),
            "rss_before_mib": round(rss_before / 1024, 1),
            "rss_after_mib": round(rss_after / 1024, 1),
            "rss_peak_mib": round(hwm / 1024, 1),
            "stdio_exit_code": code,
            "stdio_peak_rss_mib": round(self.stdio_peak_kib / 1024, 1),
        }

    def stdio_hostile(self, peer: hostile.StdioPeer, tally: hostile.Tally) -> None:
        stop = False

        def watch() -> None:
            while not stop:
                self.stdio_peak_kib = max(self.stdio_peak_kib, *rss_kib(peer.proc.pid))
                time.sleep(0.2)

        import threading

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            hostile_cases.run_stdio(peer, self.cfg.hostile_stdio, tally, 7)
            answers, problem = peer.roundtrip(
                hostile.body_of("tools/call", hostile.order_params("after")), within=10
            )
            ok = not problem and len(answers) == 1 and "result" in answers[0]
            tally.add(
                "stdio (still serving)", "accepted" if ok else "crashed", "" if ok else f"after: {problem}"
            )
        finally:
            stop = True
            watcher.join(timeout=2)

    @staticmethod
    def tally_dict(tally: hostile.Tally) -> dict[str, Any]:
        return {
            "tried": tally.tried,
            "refused": tally.refused,
            "accepted": tally.accepted,
            "crashed": tally.crashed,
            "unexpected": tally.unexpected,
            "by_group": dict(sorted(tally.by_group.items())),
            "problems": dict(tally.problems.most_common(20)),
        }

    # ------------------------------------------------------------------------------ slow clients

    async def slow_phase(self) -> None:
        cfg = self.cfg
        server = self.servers[1]
        instance = self.instances[1]
        canary = Driver([instance, instance], Policy(think=0.05), self.run_id + "s")
        self.log(
            f"slow clients against {server.name}: {cfg.slow_idle} idle, {cfg.slow_used} used-then-idle, "
            f"{cfg.slow_headers} slow-header, {cfg.slow_body} slow-body connections for {cfg.slow_hold:g} s"
        )
        report = await slowclients.run(
            server.port,
            server.pid,
            canary,
            idle=cfg.slow_idle,
            used=cfg.slow_used,
            slow_headers=cfg.slow_headers,
            slow_body=cfg.slow_body,
            hold=cfg.slow_hold,
        )
        self.fig.slow = {
            "idle": f"{report.idle_closed}/{report.idle} closed by the server (head timeout 5 s)",
            "used_then_idle": f"{report.used_closed}/{report.used} closed by the server (keep-alive 5 s)",
            "slow_headers": f"{report.slow_headers_closed}/{report.slow_headers} closed (head timeout 5 s)",
            "slow_body": f"{report.slow_body_408}/{report.slow_body} answered 408 (body timeout 5 s)",
            "used_closed": report.used_closed,
            "used": report.used,
            "slow_body_408": report.slow_body_408,
            "idle_closed": report.idle_closed,
            "idle_n": report.idle,
            "slow_headers_closed": report.slow_headers_closed,
            "slow_headers_n": report.slow_headers,
            "slow_body_n": report.slow_body,
            "canary_p99_before_ms": round(percentile(report.canary_before, 99) * 1e3, 1),
            "canary_p99_during_ms": round(percentile(report.canary_during, 99) * 1e3, 1),
            "canary_flows_during": len(report.canary_during),
            "canary_lost": report.canary_lost,
            "server_fds_peak": report.server_fds_peak,
            "server_alive": server.alive(),
        }

    # ------------------------------------------------------------------------------ stdio faults

    async def stdio_phase(self) -> None:
        self.log("stdio faults: stdin closed mid-request, server killed mid-request")
        report = await stdio_faults.run(self.work)
        self.fig.stdio = {
            "checks": [asdict(c) for c in report.checks],
            "failed": report.failed,
        }

    # ------------------------------------------------------------------------------ hostile client

    async def hostile_client_phase(self) -> None:
        """Our client against a malicious stdio server (bench/reliability/hostile_client.py)."""
        self.log("hostile input, client side: our client against a malicious stdio server")
        outcomes = await hostile_client.run()
        self.fig.hostile_client = hostile_client.summary(outcomes)

    # ------------------------------------------------------------------------------ all of it

    async def run(self) -> None:
        t0 = time.perf_counter()
        if not await asyncio.to_thread(wait_for_postgres, self.dsn, 15.0):
            raise RuntimeError("PostgreSQL does not answer at the DSN given")
        self.log(f"run {self.run_id}: starting two instances (logs in {self.work})")
        await self.start_servers()
        sampler = asyncio.ensure_future(self.sample_rss())
        cpu_sampler = asyncio.ensure_future(self.sample_cpu())
        watcher = asyncio.ensure_future(self.watch_instances())
        try:
            await self.load_and_faults()
            if "hostile" not in self.skip:
                await self.hostile_phase()
            if "slow" not in self.skip:
                await self.slow_phase()
            if "stdio" not in self.skip:
                await self.stdio_phase()
            if "hostile-client" not in self.skip:
                await self.hostile_client_phase()
        finally:
            sampler.cancel()
            cpu_sampler.cancel()
            watcher.cancel()
            self.fig.cpu_timeline = self.cpu_timeline
            for server in self.servers:
                server.sample_rss()
            self.fig.rss_mib = {s.name: round(s.peak_rss_kib / 1024, 1) for s in self.servers}
            if self.stdio_peak_kib:
                self.fig.rss_mib["stdio"] = round(self.stdio_peak_kib / 1024, 1)
            self.fig.seconds = round(time.perf_counter() - t0, 1)


# ---------------------------------------------------------------------------------- targets


def judge(fig: Figures, cfg: Config, skip: set[str]) -> dict[str, bool]:
    t: dict[str, bool] = {}
    load = fig.load
    t["no flow lost"] = load.get("flows_lost") == 0 and load.get("flows_started") == load.get(
        "flows_completed"
    )
    t["no wrong result"] = load.get("wrong_results") == 0
    t[f"at least {cfg.min_flows} flows"] = load.get("flows_completed", 0) >= cfg.min_flows
    t[f"at least {cfg.workers} in flight"] = load.get("max_in_flight", 0) >= cfg.workers
    eff = fig.effects
    t["exactly one side effect per flow"] = (
        bool(eff)
        and eff["doubled"] == 0
        and eff["missing"] == 0
        and eff["flows_with_exactly_one_row"] == eff["completed_flows"]
    )
    if "crash" not in skip:
        t["crash between effect and answer: flows complete"] = (
            fig.crash.get("crash_flows_completed") == cfg.crash_flows
            and fig.crash.get("instances_killed_by_crash_flows") == cfg.crash_flows
        )
    if "kill" not in skip:
        t["kill -9: every flow completes"] = bool(fig.kill) and t["no flow lost"]
    if "pg-restart" not in skip and "pg-restart" not in fig.skipped:
        t["PostgreSQL restart: no hang, all complete"] = (
            fig.postgres.get("outcome") == "restarted"
            and t["no flow lost"]
            and fig.postgres.get("window_max_ms", 1e9) < 60_000
        )
    if "rotation" not in skip:
        rot = fig.rotation
        t["rotation: K2 seals everywhere, none refused"] = (
            bool(rot.get("k2_sealing_everywhere")) and t["no flow lost"]
        )
        t["rotation: removed key refused with -32602"] = (
            rot.get("k1_states_refused_32602", -1) == rot.get("k1_states_presented_after_removal", 0) > 0
        )
    if "hostile" not in skip:
        h = fig.hostile
        t["hostile: no crash, no unexpected answer"] = all(
            h[side]["crashed"] == 0 and h[side]["unexpected"] == 0 for side in ("http", "stdio")
        )
        t["hostile: server kept serving (same pid, canary ok)"] = (
            h["server_alive_same_pid"]
            and h["canary_flows_lost"] == 0
            and h["canary_flows_completed"] > 0
            and h["stdio_exit_code"] == 0
        )
        t["hostile: memory bounded (< 512 MiB)"] = 0 < h["rss_peak_mib"] < 512
    if "slow" not in skip:
        s = fig.slow
        t["slow clients: others still served"] = (
            s["canary_lost"] == 0 and s["canary_flows_during"] > 0 and s["server_alive"]
        )
        t["slow clients: head, keep-alive and body timeouts act"] = (
            s["used_closed"] == s["used"]
            and s["slow_body_408"] == s["slow_body_n"]
            and s["idle_closed"] == s["idle_n"]
            and s["slow_headers_closed"] == s["slow_headers_n"]
        )
    if "stdio" not in skip:
        t["stdio: clean EOF, clear error on a dead server"] = fig.stdio.get("failed") == 0 and bool(
            fig.stdio.get("checks")
        )
    if "hostile-client" not in skip:
        t["hostile client: no hang, no crash, no refused URL opened, all bounded"] = bool(
            fig.hostile_client
        ) and hostile_client.ok(fig.hostile_client)
    if "pause" not in skip:
        t["pause (SIGSTOP/SIGCONT) of each instance: same process, all complete"] = (
            fig.pause.get("pauses") == cfg.pauses
            and bool(fig.pause.get("same_pid_after_every_pause"))
            and t["no flow lost"]
        )
    t["crashed instances: 0"] = not fig.crashed
    t["PostgreSQL running at the end"] = fig.postgres.get("at_end") in ("running", "was down: started again")
    return t


def cpu_during(fig: Figures) -> str:
    """Mean CPU over the load: machine total / this run / PostgreSQL / everything else."""
    start = fig.load.get("load_started_at_s")
    if start is None or not fig.cpu_timeline:
        return ""
    end = start + fig.load.get("seconds", 0)
    samples = [v for k, v in fig.cpu_timeline.items() if start <= int(k) <= end]
    if not samples:
        return ""
    mean = [round(sum(col) / len(samples)) for col in zip(*samples, strict=True)]
    return (
        f"machine {mean[0]}, this run {mean[1]}, postgres {mean[2]}, others {mean[3]} "
        f"(others' peak second {max(v[3] for v in samples)})"
    )


def window_text(w: dict[str, Any]) -> str:
    return (
        f"{w.get('flows_in_window')}, {w.get('window_p50_ms')} / {w.get('window_p99_ms')} / "
        f"{w.get('window_max_ms')} ms"
    )


def table(fig: Figures, cfg: Config) -> str:
    rows: list[tuple[str, str]] = []

    def row(name: str, value: Any) -> None:
        rows.append((name, str(value)))

    load = fig.load
    row("mode", f"{fig.mode}, {fig.seconds:g} s in all")
    if load:
        row("flows completed / started", f"{load['flows_completed']} / {load['flows_started']}")
        row("flows lost", load["flows_lost"])
        row("wrong results", load["wrong_results"])
        row("max flows in flight", load["max_in_flight"])
        row(
            "throughput",
            f"{load['flows_per_s']} flows/s over {load['seconds']} s (think {load['think_s']} s per flow)",
        )
        row(
            "flow latency p50 / p99 / max",
            f"{load['p50_ms']} / {load['p99_ms']} / {load['max_ms']} ms (without think)",
        )
        row(
            "  steady (no fault, after 2 s warm-up): n, p50 / p99",
            f"{load['steady_flows']}, {load['steady_p50_ms']} / {load['steady_p99_ms']} ms",
        )
        row("requests re-issued", load["requests_reissued"])
        row("retries delivered twice, same result", load["retries_redelivered"])
        for kind, n in load["errors_by_kind"].items():
            row(f"  errors: {kind}", n)
        for kind, n in load["lost_by_kind"].items():
            row(f"  lost: {kind}", n)
    cpu = cpu_during(fig)
    if cpu:
        row("CPU during the load, % of one core (2 cores)", cpu)
    if fig.kill:
        k = fig.kill
        row(
            "kill -9 of an instance", f"{k['instance']} down {k['down_s']} s, restart took {k['restart_s']} s"
        )
        row(
            "  flows around the kill: n, p50 / p99 / max",
            window_text(k),
        )
    if fig.crash:
        c = fig.crash
        row(
            "crash between side effect and answer",
            f"{c.get('crash_flows_completed')}/{c.get('crash_flows_started')} flows completed, "
            f"{c.get('instances_killed_by_crash_flows')} instances died and were restarted",
        )
        if c.get("flows_in_window") is not None:
            row("  flows around the crashes: n, p50 / p99 / max", window_text(c))
    if fig.effects:
        e = fig.effects
        row(
            "side-effect rows (load flows)",
            f"{e['rows_for_load_flows']} for {e['completed_flows']} completed flows",
        )
        row(
            "  exactly one / doubled / missing",
            f"{e['flows_with_exactly_one_row']} / {e['doubled']} / {e['missing']}",
        )
        row("  rows of flows that did not complete", e["rows_of_flows_not_completed"])
    if fig.postgres.get("restart_s") is not None:
        p = fig.postgres
        row("PostgreSQL restart", f"{p['outcome']} in {p['restart_s']} s")
        row(
            "  flows around it: n, p50 / p99 / max",
            window_text(p),
        )
    row("PostgreSQL at the end", fig.postgres.get("at_end", "?"))
    if fig.pause:
        pz = fig.pause
        row(
            "pauses (SIGSTOP/SIGCONT)",
            f"{pz['pauses']} of {pz['pause_s']:g} s ("
            + ", ".join(r["instance"] for r in pz["rounds"])
            + f"), same process after every one: {pz['same_pid_after_every_pause']}",
        )
        if pz.get("flows_in_window") is not None:
            row("  flows around the pauses: n, p50 / p99 / max", window_text(pz))
    row("crashed instances", len(fig.crashed))
    for crash in fig.crashed:
        row(f"  CRASH {crash['instance']}", f"pid {crash['pid']} exit {crash['exit']} at {crash['at_s']} s")
    if fig.rotation:
        r = fig.rotation
        promoted = ", ".join(f"{name} {secs} s" for name, secs in (r.get("k2_sealing_after_s") or {}).items())
        row("key rotation: K2 seals after promotion on", promoted or "NONE")
        row(
            "  K1 states after K1 removed: refused -32602",
            f"{r.get('k1_states_refused_32602')}/{r.get('k1_states_presented_after_removal')}"
            + (f" (other answers: {r['k1_states_other']})" if r.get("k1_states_other") else ""),
        )
    if fig.hostile:
        h = fig.hostile
        for side in ("http", "stdio"):
            d = h[side]
            row(
                f"hostile {side}: tried / refused / accepted / crashed / unexpected",
                f"{d['tried']} / {d['refused']} / {d['accepted']} / {d['crashed']} / {d['unexpected']}",
            )
            for group, n in d["by_group"].items():
                row(f"  {group}", n)
            for problem, n in d["problems"].items():
                row(f"  PROBLEM {problem}", n)
        row("  target server alive, same pid", h["server_alive_same_pid"])
        row(
            "  canary flows during hostile HTTP: ok / lost, p99",
            f"{h['canary_flows_completed']} / {h['canary_flows_lost']}, {h['canary_p99_ms']} ms",
        )
        row(
            "  target RSS before / after / peak",
            f"{h['rss_before_mib']} / {h['rss_after_mib']} / {h['rss_peak_mib']} MiB",
        )
    if fig.slow:
        s = fig.slow
        for key in ("idle", "used_then_idle", "slow_headers", "slow_body"):
            row(f"slow clients: {key.replace('_', ' ')}", s[key])
        row(
            "  canary p99 before / during",
            f"{s['canary_p99_before_ms']} / {s['canary_p99_during_ms']} ms "
            f"({s['canary_flows_during']} flows during, {s['canary_lost']} lost)",
        )
        row("  server open fds (peak)", s["server_fds_peak"])
    if fig.stdio:
        for check in fig.stdio["checks"]:
            row(
                f"stdio: {check['name']}",
                f"{'ok' if check['ok'] else 'FAILED'} ({check['seconds']:.2f} s: {check['detail']})",
            )
    if fig.hostile_client:
        for name, value in hostile_client.rows(fig.hostile_client):
            row(name, value)
    for name, mib in fig.rss_mib.items():
        row(f"peak RSS {name}", f"{mib} MiB")
    for name, why in fig.skipped.items():
        row(f"SKIPPED {name}", why)
    if fig.failure:
        row("HARNESS FAILURE", fig.failure)
    width = max(len(name) for name, _ in rows)
    lines = [f"{name.ljust(width)}  {value}" for name, value in rows]
    lines.append("")
    for target, ok in fig.targets.items():
        lines.append(f"{'MET ' if ok else 'MISSED'}  {target}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI size: under two minutes")
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument(
        "--skip",
        default="",
        help="comma list of: kill,crash,pg-restart,rotation,pause,hostile,slow,stdio,hostile-client",
    )
    ap.add_argument("--workers", type=int, help="concurrent users in the load (default 200)")
    ap.add_argument("--dsn", default=os.environ.get("MCP_ELICIT_PG_DSN", DEFAULT_DSN))
    ap.add_argument("--keep-logs", action="store_true", help="keep the work folder (kept anyway on failure)")
    args = ap.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if os.environ.get("MCP_ELICIT_RELIABILITY_NO_PG_RESTART") == "1":
        skip.add("pg-restart")
    cfg = Config.make(args.quick, args.workers)
    work = Path(tempfile.mkdtemp(prefix="mcp-elicit-reliability-"))
    harness = Harness(cfg, skip, args.dsn, work)
    fig = harness.fig
    for part in sorted(skip):
        fig.skipped[part] = "skipped on request (--skip or MCP_ELICIT_RELIABILITY_NO_PG_RESTART=1)"

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:  # pragma: no cover
        runner = asyncio.run

    async def bounded() -> None:
        async with asyncio.timeout(cfg.deadline):
            await harness.run()

    try:
        runner(bounded())
    except TimeoutError:
        fig.failure = f"the run took longer than its bound of {cfg.deadline:g} s"
    except KeyboardInterrupt:
        fig.failure = "interrupted"
    except Exception as exc:
        fig.failure = f"{type(exc).__name__}: {exc}"
        import traceback

        traceback.print_exc()
    finally:
        harness.procs.stop_all()
        fig.postgres["at_end"] = ensure_postgres_running()
        if wait_for_postgres(args.dsn, 60.0):
            with contextlib.suppress(Exception):
                drop_tables(args.dsn, harness.used_table, harness.effects_table)
    fig.targets = judge(fig, cfg, skip) if not fig.failure else {"the harness ran to the end": False}
    print(table(fig, cfg))
    if args.json:
        args.json.write_text(json.dumps(asdict(fig), indent=2, default=str))
    ok = all(fig.targets.values())
    if ok and not args.keep_logs:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs: {work}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
