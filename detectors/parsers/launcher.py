"""Launcher lines → EXIT / TEARDOWN events (evidence, never the verdict).

torch.distributed.elastic (log-formats.md §1.6): ``failed (exitcode: N) local_rank: L
(pid: P) of binary: ...``, ``Sending process P closing signal SIGTERM``, and the
ChildFailedError summary block (``Root Cause (first observed failure):`` … ``rank : 11
(local_rank: 3)`` … ``exitcode : -6 (pid: 469401)``), whose "root cause" is only the
first process to exit. DeepSpeed's launcher (§2.4): ``Killing subprocess P`` and
``[cmd list] exits with return code = N``, where the command is the LAST spawned one,
not necessarily the failed rank (``trusted`` is False).
"""

from __future__ import annotations

import re

from detectors.model import Event, EventKind
from detectors.parsers.base import Rule, Segment

__all__ = ["RULES"]

_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


def signal_name(exitcode: int) -> str | None:
    return _SIGNALS.get(-exitcode) if exitcode < 0 else None


def _exit(seg: Segment, code: int, reporter: str, *, trusted: bool, local_rank: int | None = None,
          pid: int | None = None, signal: str | None = None, **extra: object) -> Event:
    """One launcher's report of how a worker ended (an ``EXIT`` event). ``trusted``: the
    launcher names the worker that failed (not, say, the last one it started)."""
    data: dict[str, object] = {"local_rank": local_rank, "exitcode": code, "signal": signal or signal_name(code),
                               "pid": pid, "reporter": reporter, "trusted": trusted, **extra}
    return seg.emit(EventKind.EXIT, data=data)


def _relayed(code: int) -> int:
    """An exit code a shell or container runtime relayed: 128 + N is the child killed by signal N
    (139: SIGSEGV, 137: SIGKILL), returned as -N like a launcher's own report; others as they are."""
    if 128 < code < 160 and signal_name(128 - code) is not None:
        return 128 - code
    return code


# (a vendor's build words it "failed (exitcode: -9) for binary located at /…/python3.10 with
# local_rank: 0 (process ID: 71)", Alibaba PAI-DLC)
_FAILED = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) (?:for binary located at \S+ with )?local_rank: (?P<lr>\d+)"
                     r"(?: \((?:pid|process ID): +(?P<pid>\d+)\))?")


# torch 1.9–1.10 elastic, a worker that wrote no error file: a banner whose second line names
# it ("CHILD PROCESS FAILED WITH NO ERROR_FILE" / "Child process 17057 (local_rank 0) FAILED
# (exitcode 1)"), printed by the agent in place of the later "failed (exitcode: N)" line
_CHILD = re.compile(r"Child process (?P<pid>\d+) \(local_rank (?P<lr>\d+)\) FAILED \(exitcode (?P<code>-?\d+)\)")


def _failed(m: re.Match[str], seg: Segment) -> bool:
    fm = _FAILED.search(seg.body) or _CHILD.search(seg.body)
    if not fm:
        return False
    pid = int(fm.group("pid")) if fm.group("pid") else None
    if seg.rank is None and pid is not None:
        # the worker's own NCCL lines tied its pid to a global rank ("host:pid [0] NCCL INFO comm
        # 0x… rank 8 nranks 64"): in a multi-node job local rank 0 is not rank 0
        ranks = {r for (_, p), r in seg.file.job.pid_rank.items() if p == pid and r >= 0}
        if len(ranks) == 1:
            seg.rank = ranks.pop()
    _exit(seg, int(fm.group("code")), "torchrun", trusted=True, local_rank=int(fm.group("lr")), pid=pid)
    return True


_SENDING = re.compile(r"Sending process (?P<pid>\d+) closing signal (?P<sig>SIG\w+)")
_KILLING = re.compile(r"Killing subprocess (?P<pid>\d+)")
# torch.multiprocessing.spawn (torch >= 2.2) stops the processes still running once one failed:
# "W1206 01:28:52.394000 1785 torch/multiprocessing/spawn.py:165] Terminating process 1839 via signal SIGTERM"
_SPAWN_TERM = re.compile(r"Terminating process (?P<pid>\d+) via signal (?P<sig>SIG\w+)")


def _teardown(m: re.Match[str], seg: Segment) -> bool:
    sm = _SENDING.search(seg.body)
    if sm:
        seg.emit(EventKind.TEARDOWN, data={"pid": int(sm.group("pid")), "signal": sm.group("sig"), "reporter": "torchrun"})
        return True
    km = _KILLING.search(seg.body)
    if km:
        seg.emit(EventKind.TEARDOWN, data={"pid": int(km.group("pid")), "signal": "SIGKILL", "reporter": "deepspeed"})
        return True
    tm = _SPAWN_TERM.search(seg.body)
    if tm:
        seg.emit(EventKind.TEARDOWN, data={"pid": int(tm.group("pid")), "signal": tm.group("sig"),
                                           "reporter": "torch.multiprocessing.spawn"})
        return True
    return False


# a worker saying it received the launcher's signal (Lightning's signal connector: "[rank: 3]
# Received SIGTERM: 15"): from here on, its own errors are the teardown's, not its own failure
_RECEIVED = re.compile(r"Received (?P<sig>SIGTERM|SIGINT)\b")


def _received(m: re.Match[str], seg: Segment) -> bool:
    rm = _RECEIVED.search(seg.body)
    if not rm:
        return False
    seg.emit(EventKind.TEARDOWN, data={"pid": None, "signal": rm.group("sig"), "reporter": "self"})
    return True


_DS_EXIT = re.compile(r"exits with return code = (?P<code>-?\d+)")
_DS_LOCAL = re.compile(r"--local_rank=(?P<lr>\d+)")


def _ds_exit(m: re.Match[str], seg: Segment) -> bool:
    em = _DS_EXIT.search(seg.body)
    if not em:
        return False
    lm = _DS_LOCAL.search(seg.body)
    lr = int(lm.group("lr")) if lm else seg.file.pending_cmd_local  # the command wrapped onto earlier lines
    seg.file.pending_cmd_local = None
    # the command shown is the last one spawned, whichever worker failed
    _exit(seg, int(em.group("code")), "deepspeed", trusted=False, local_rank=lr)
    return True


_DS_CLEAN = re.compile(r"\bProcess (?P<pid>\d+) exits successfully")


def _ds_clean(m: re.Match[str], seg: Segment) -> bool:
    """DeepSpeed's launcher on a worker that returned 0 (``launch.py:367:main] Process 2486035
    exits successfully.``): that process ended cleanly (its pid names it; no rank)."""
    cm = _DS_CLEAN.search(seg.body)
    if not cm:
        return False
    _exit(seg, 0, "deepspeed", trusted=True, pid=int(cm.group("pid")))
    return True


def _ds_cmd(m: re.Match[str], seg: Segment) -> bool:
    """DeepSpeed's sigkill_handler prints the command list first; a wrapped paste puts
    ``exits with return code`` on a later line: remember the command's local rank."""
    lm = _DS_LOCAL.search(seg.body)
    if lm and not _DS_EXIT.search(seg.body):
        seg.file.pending_cmd_local = int(lm.group("lr"))
    return False


# torch.distributed.launch (legacy) raises for the worker that failed, naming its command
_LEGACY = re.compile(
    r"CalledProcessError: Command '\[.{0,4000}?--local[_-]rank[= ](?P<lr>\d+).{0,4000}?\]' "
    r"(?:died with <Signals\.(?P<sig>SIG\w+): (?P<signum>\d+)>|returned non-zero exit status (?P<status>\d+))"
)


def _legacy(m: re.Match[str], seg: Segment) -> bool:
    lm = _LEGACY.search(seg.body)
    if not lm:
        return False
    code = -int(lm.group("signum")) if lm.group("signum") else int(lm.group("status"))
    # the command shown is the last one spawned (a leftover loop variable), not the failed one
    _exit(seg, code, "torch.distributed.launch", trusted=False, local_rank=int(lm.group("lr")), signal=lm.group("sig"))
    return True


# torch.multiprocessing.spawn: the parent names the index of the process that died
_SPAWN = re.compile(r"process (?P<idx>\d+) terminated with (?:signal (?P<sig>SIG[A-Z]+)|exit code (?P<code>\d+))")
# ProcessRaisedException: "-- Process 0 terminated with the following error:" above the child's
# traceback (a paste cut inside the word still names the process)
_SPAWN_RAISED = re.compile(r"^-- Process (?P<idx>\d+) termin")
_SIGNUMS = {name: num for num, name in _SIGNALS.items()}


def _spawn(m: re.Match[str], seg: Segment) -> bool:
    sm = _SPAWN.search(seg.body)
    if not sm:
        rm = _SPAWN_RAISED.search(seg.body)
        if rm is None:
            return False
        _exit(seg, 1, "torch.multiprocessing.spawn", trusted=True, local_rank=int(rm.group("idx")))
        return True
    sig = sm.group("sig")
    code = -_SIGNUMS.get(sig, 0) if sig else int(sm.group("code"))
    _exit(seg, code, "torch.multiprocessing.spawn", trusted=True, local_rank=int(sm.group("idx")), signal=sig)
    return True


# Open MPI's mpirun (Horovod, MPI jobs) names the MPI rank (the global rank) that ended the job:
# "mpirun noticed that process rank 7 with PID 0 on node n1 exited on signal 9 (Killed)." and,
# over three lines, "The first process to do so was: / Process name: [[29973,1],0] / Exit code: 1"
_MPI_SIGNAL = re.compile(r"(?:mpirun|mpiexec|orterun|prterun) noticed that process rank (?P<rank>\d+) with PID \S+ on node \S+ exited on signal (?P<sig>\d+)")
# (Open MPI 5's PRRTE names the process "[prterun-host-4123871@1,0]": job 1, rank 0)
_MPI_NAME = re.compile(r"Process name:\s+\[(?:\[\d+,\d+\]|prterun-[\w.-]+@\d+),(?P<rank>\d+)\]")
_MPI_CODE = re.compile(r"^\s*Exit code:\s+(?P<code>-?\d+)")
# a process called MPI_Abort (Horovod and mpi4py do on an uncaught exception) and Open MPI kills
# the rest: "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD" and, often on the
# next line, "with errorcode 1." (any code, -1 and 0 included, is that rank ending the job)
_MPI_ABORT = re.compile(r"MPI_ABORT was invoked on rank (?P<rank>\d+) in communicator \S+(?:\s+with errorcode (?P<code>-?\d+))?")


def _mpirun(m: re.Match[str], seg: Segment) -> bool:
    am = _MPI_ABORT.search(seg.body)
    if am:
        code = int(am.group("code") or 1)
        ev = _exit(seg, code if code > 0 else 1, "mpirun", trusted=True, mpi_abort=True)
        ev.rank, ev.rank_from = int(am.group("rank")), "launcher"
        return True
    sm = _MPI_SIGNAL.search(seg.body)
    if sm:
        ev = _exit(seg, -int(sm.group("sig")), "mpirun", trusted=True)
        ev.rank, ev.rank_from = int(sm.group("rank")), "launcher"
        return True
    nm = _MPI_NAME.search(seg.body)
    if nm:
        seg.file.mpi_first = int(nm.group("rank"))
        return True
    cm = _MPI_CODE.search(seg.body)
    first = getattr(seg.file, "mpi_first", None)
    if cm and first is not None:
        seg.file.mpi_first = None
        ev = _exit(seg, int(cm.group("code")), "mpirun", trusted=True)
        ev.rank, ev.rank_from = first, "launcher"
        return True
    return False


# MosaicML Composer's launcher names the global rank that crashed
_COMPOSER = re.compile(r"Rank (?P<rank>\d+) crashed with exit code (?P<code>-?\d+)")


def _composer(m: re.Match[str], seg: Segment) -> bool:
    cm = _COMPOSER.search(seg.body)
    if not cm:
        return False
    ev = _exit(seg, int(cm.group("code")), "composer", trusted=True)
    ev.rank = int(cm.group("rank"))
    ev.rank_from = "launcher"
    return True


# Slurm's srun names the task (SLURM_PROCID, the global rank when srun starts one task per
# rank) and how it ended; once the step is being terminated, the rest is teardown
_SRUN = re.compile(r"srun: error: (?P<host>\S+): (?P<kind>tasks?) (?P<tasks>[\d,-]+): (?:Exited with exit code (?P<code>\d+)"
                   r"|(?P<sig>Killed|Segmentation fault|Aborted|Terminated|Bus error|Floating point exception|Illegal instruction|Out Of Memory))")
_SRUN_STOP = re.compile(r"srun: (?:Terminating|Job step aborted|Force Terminated)|\*\*\* STEP \S+ ON \S+ CANCELLED")
_SRUN_SIGNALS = {"Killed": -9, "Segmentation fault": -11, "Aborted": -6, "Terminated": -15, "Bus error": -7,
                 "Floating point exception": -8, "Illegal instruction": -4,
                 "Out Of Memory": -9}  # the cgroup's OOM killer ended the task (SIGKILL)


def _srun_task_rank(m: re.Match[str], seg: Segment) -> bool:
    return False  # nothing to emit: the line only had to reach the parse


def _srun(m: re.Match[str], seg: Segment) -> bool:
    f = seg.file
    if _SRUN_STOP.search(seg.body):
        f.srun_stopping = True
        # "... CANCELLED AT T [DUE TO TIME LIMIT] ***": Slurm's own word on why, a catalog fingerprint's to read
        return " CANCELLED AT " not in seg.body
    sm = _SRUN.search(seg.body)
    if not sm:
        return False
    code = int(sm.group("code")) if sm.group("code") else _SRUN_SIGNALS[sm.group("sig")]
    if getattr(f, "srun_stopping", False):
        # srun is tearing the step down after a failure: these tasks are its victims
        seg.emit(EventKind.TEARDOWN, data={"pid": None, "signal": signal_name(code), "reporter": "srun"})
        return True
    ev = _exit(seg, code, "srun", trusted=True, host=sm.group("host"))
    if sm.group("kind") == "task":
        ev.rank = int(sm.group("tasks"))
        ev.rank_from = "launcher"
    return True


# HPE Cray PALS's mpiexec (Aurora, Polaris) names each rank that ended badly by its global rank:
# "x4213c4s7b0n0.hsn.cm.aurora.alcf.anl.gov: rank 27421 died from signal 6" and "hostname: rank 0
# exited with code 139" (a shell-style code: 128 + the signal when a wrapper script relayed it);
# a signal that left a core file says so: "rank 96 died from signal 11 and dumped core" (Polaris)
_PALS = re.compile(r"^(?P<host>[\w.-]+): rank (?P<rank>\d+) (?:died from signal (?P<sig>\d+)(?: and dumped core)?|exited with code (?P<code>\d+))\s*$")


# PaddlePaddle's launcher (paddle.distributed.launch, launch_utils.py) watches its trainers and,
# when one ends with a non-zero code, names it by its global rank before terminating the rest:
# "ABORT!!! Out of all 4 trainers, the trainer process with rank=[3] was aborted. Please check its log."
# (several ranks are listed when they ended in the same poll: "rank=[0, 2]")
# (a paste cut right after the rank, "rank=[1", still names it when no longer number fits the
# trainers' count: of 2 trainers, "1" cannot have gone on as "1x")
_PADDLE = re.compile(r"ABORT!!! Out of all (?P<n>\d+) trainers, the trainer process with rank=\[(?P<ranks>[\d, ]+)"
                     r"(?:(?P<whole>\] was aborted)|\s*$)")


def _paddle(m: re.Match[str], seg: Segment) -> bool:
    pm = _PADDLE.search(seg.body)
    if not pm:
        return False
    ranks = [int(r) for r in pm.group("ranks").replace(" ", "").split(",") if r]
    if not pm.group("whole") and ranks and ranks[-1] * 10 < int(pm.group("n")):
        ranks = [*ranks[:-1], -1]  # cut where the number may have gone on: no rank from it
    ev = _exit(seg, 1, "paddle.distributed.launch", trusted=True, world=int(pm.group("n")))
    if len(ranks) == 1 and ranks[0] >= 0:
        ev.rank, ev.rank_from = ranks[0], "launcher"
    return True


# Paddle's newer launcher (paddle.distributed.launch, Paddle >= 2.3: launch/job/container.py's
# __str__) names each failed container after "Container failed !!!": "Container rank 1 status
# failed cmd [...] code 1 log log/workerlog.1" (the rank is the trainer's global rank; a container
# ended by the launcher's own stop is listed the same way, with its signal's code)
_PADDLE_CONTAINER = re.compile(r"Container rank (?P<rank>\d{1,6}) status (?P<status>\w+) cmd .{0,4000}? code (?P<code>-?\d{1,4}) log ")


def _paddle_container(m: re.Match[str], seg: Segment) -> bool:
    pm = _PADDLE_CONTAINER.search(seg.body)
    if not pm or pm.group("status").lower() not in ("failed", "status.failed") or pm.group("code") == "0":
        return False
    code = int(pm.group("code"))
    ev = _exit(seg, code, "paddle.distributed.launch", trusted=True)
    ev.rank, ev.rank_from = int(pm.group("rank")), "launcher"
    return True


# GNU time (`/usr/bin/time python train.py`, `time -v`) reports how the command it ran ended:
# "Command terminated by signal 11" (killed by a signal) / "Command exited with non-zero status 1"
_GNU_TIME = re.compile(r"Command (?:terminated by signal (?P<sig>\d{1,2})|exited with non-zero status (?P<code>\d{1,3}))\s*$")


def _gnu_time(m: re.Match[str], seg: Segment) -> bool:
    gm = _GNU_TIME.search(seg.body)
    if not gm:
        return False
    code = -int(gm.group("sig")) if gm.group("sig") else _relayed(int(gm.group("code")))
    _exit(seg, code, "time", trusted=True)
    return True


def _pals(m: re.Match[str], seg: Segment) -> bool:
    pm = _PALS.match(seg.body)
    if not pm:
        return False
    code = -int(pm.group("sig")) if pm.group("sig") else _relayed(int(pm.group("code")))
    ev = _exit(seg, code, "pals", trusted=True, host=pm.group("host"))
    ev.rank, ev.rank_from = int(pm.group("rank")), "launcher"
    return True


# Kubeflow's training operator reports a replica pod's container ending (its events and log):
# "Error pod NAME container pytorch exitCode: 1 terminated message: ..." and "Pod: NS.NAME exited
# with code 1". It names a pod (master-0, worker-3), not a rank, and a code above 128 is 128 plus
# the signal that killed the container (137: SIGKILL, the OOM killer among others)
_POD = re.compile(r"Error pod (?P<pod>[\w.-]+) container [\w.-]+ exitCode: (?P<code>-?\d+)|Pod: (?P<pod2>[\w.-]+) exited with code (?P<code2>-?\d+)")


def _pod(m: re.Match[str], seg: Segment) -> bool:
    pm = _POD.search(seg.body)
    if not pm:
        return False
    code = _relayed(int(pm.group("code") or pm.group("code2")))
    name = (pm.group("pod") or pm.group("pod2")).split(".", 1)[-1]
    # a replica that finished is no failure; the same pod's end is reported twice (an event and
    # a log line): one exit per pod
    if code != 0 and name not in seg.file.job.pods_ended:
        seg.file.job.pods_ended.add(name)
        _exit(seg, code, "kubeflow", trusted=False, pod=name)
    return True


# the shell's notice that its foreground job died of SIGKILL (the OOM killer, a scheduler): a line
# of its own, or glued after the last update of a tqdm bar (``3787/62565 [04:47<1:10:53, 13.82it/s]Killed``)
_SHELL_KILLED = re.compile(r"^\s*Killed\s*$")


def _shell_killed(m: re.Match[str], seg: Segment) -> bool:
    if not _SHELL_KILLED.match(seg.body):
        return False
    _exit(seg, -9, "shell", trusted=True)
    return True


_ROOT = re.compile(r"Root Cause \(first observed failure\):")
_FAILURES = re.compile(r"^\s*Failures:\s*$")
_S_RANK = re.compile(r"^\s*rank\s*: (?P<rank>\d+) \(local_rank: (?P<lr>\d+)\)")
_S_EXIT = re.compile(r"^\s*exitcode\s*: (?P<code>-?\d+) \(pid: (?P<pid>\d+)\)")
_S_TIME = re.compile(r"^\s*time\s*: (?P<t>\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d)")
_S_RULE = re.compile(r"^\s*(?:={20,}|-{20,}|\[\d+\]:)\s*$")


# srun's --label before an indented summary line ("1:   rank      : 4 (local_rank: 0)"): the prefix
# reader leaves a label it cannot tell from a numbered row when indentation follows it
_S_LABEL = re.compile(r"^\d{1,6}:(?=\s)")


def _summary(m: re.Match[str], seg: Segment) -> bool:
    f = seg.file
    body = _S_LABEL.sub("", seg.body, count=1)
    if _S_RULE.match(body):
        f.summary_ctx_rank = None  # a new failure block (or the end of the summary)
        return True
    if _ROOT.search(body):
        f.summary_root, f.summary_others = True, False
        return True
    if _FAILURES.match(body):
        f.summary_root, f.summary_others = False, True
        return True
    tm = _S_TIME.match(body)
    if tm:
        f.summary_time = tm.group("t")
        return True
    rm = _S_RANK.match(body)
    if rm:
        f.summary_rank = int(rm.group("rank"))
        f.summary_local = int(rm.group("lr"))
        return True
    em = _S_EXIT.match(body)
    if em and f.summary_rank is not None:
        ev = _exit(seg, int(em.group("code")), "torchrun_summary", trusted=True, local_rank=f.summary_local,
                   pid=int(em.group("pid")), root_cause=f.summary_root, other_failure=f.summary_others)
        ev.rank = f.summary_rank  # the summary names the GLOBAL rank
        f.summary_ctx_rank = f.summary_rank  # its error_file / traceback lines follow
        f.summary_rank = None
        return True
    return False


RULES = [
    Rule("launcher.failed", r"failed \(exitcode: -?\d+\) (?:for binary located at \S+ with )?local_rank: \d+|Child process \d+ \(local_rank \d+\) FAILED \(exitcode -?\d+\)",
         _failed),
    Rule("launcher.teardown", r"Sending process \d+ closing signal|Killing subprocess \d+|Terminating process \d+ via signal", _teardown),
    Rule("launcher.received", r"Received SIG(?:TERM|INT)\b", _received),
    Rule("launcher.deepspeed_exit", r"exits with return code = -?\d+", _ds_exit),
    Rule("launcher.deepspeed_cmd", r"sigkill_handler\] \[", _ds_cmd),
    Rule("launcher.deepspeed_clean", r"launch\.py:\d+:main\] Process \d+ exits successfully", _ds_clean),
    Rule("launcher.legacy", r"CalledProcessError: Command '\[", _legacy),
    Rule("launcher.composer", r"Rank \d+ crashed with exit code -?\d+", _composer),
    Rule("launcher.mpirun", r"MPI_ABORT was invoked on rank \d+|(?:mpirun|mpiexec|orterun|prterun) noticed that process rank \d+|Process name:\s+\[(?:\[\d+,\d+\]|prterun-[\w.-]+@\d+),\d+\]|^\s*Exit code:\s+-?\d+",
         _mpirun),
    Rule("launcher.spawn", r"process \d+ terminated with (?:signal|exit code)|-- Process \d+ termin", _spawn),
    Rule("launcher.srun", r"srun: error: \S+: tasks? [\d,-]+: |srun: (?:Terminating|Job step aborted|Force Terminated)"
                          r"|\*\*\* STEP \S+ ON \S+ CANCELLED", _srun),
    # "2: [rank18]:": an srun label above a c10 rank tag; the parse compares the two (parse.py:
    # srun_node_tasks), so such a line must reach it even when its message matches nothing
    Rule("launcher.srun_task_rank", r"^\s{0,4}\d{1,6}: \[rank\d{1,6}\]:", _srun_task_rank, on_raw=True),
    Rule("launcher.gnu_time", r"Command (?:terminated by signal \d|exited with non-zero status \d)", _gnu_time),
    Rule("launcher.paddle", r"ABORT!!! Out of all \d+ trainers", _paddle),
    Rule("launcher.paddle_container", r"Container rank \d+ status \w+ cmd ", _paddle_container),
    Rule("launcher.pals", r"^[\w.-]+: rank \d+ (?:died from signal \d+(?: and dumped core)?|exited with code \d+)\s*$", _pals),
    Rule("launcher.kubeflow", r"Error pod [\w.-]+ container [\w.-]+ exitCode: -?\d+|Pod: [\w.-]+ exited with code -?\d+", _pod),
    Rule("launcher.shell_killed", r"^\s*Killed\s*$|/(?:s|it)\]Killed\s*$", _shell_killed),
    Rule(
        "launcher.summary",
        r"Root Cause \(first observed failure\)|Failures:\s*$|rank\s*: \d+ \(local_rank: \d+\)|exitcode\s*: -?\d+ \(pid: \d+\)|time\s*: \d{4}-\d\d-\d\d_\d\d:|^(?:={20,}|-{20,}|\[\d+\]:)[ \t]*$",
        _summary,
    ),
]
