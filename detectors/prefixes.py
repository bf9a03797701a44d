"""Strip the prefixes that launchers and loggers stack in front of a message.

One physical line can carry, outermost first: a viewer's line number (``[80746] ``), a
cloud-logging timestamp fragment, torchrun's console tee prefix (``[default3]:``, which
holds the LOCAL rank), a Slurm ``srun --label`` task id (``11: ``), a Ray worker tag,
the c10 ``[rank12]:`` GLOBAL rank prefix, a c10/glog logger header
(``[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629]``), a Python logger header
(torch, DeepSpeed, stdlib, rich) and the excepthook's ``[rank0]: ``. ``split_prefixes``
peels them off and returns the message body with what the prefixes said: global rank,
local rank, host, pid, device, level, and a timestamp.

Guarantees: never raises on any input; the body is always a suffix of the input (minus
trailing whitespace); a number is reported as a global rank only when its prefix is
documented to carry the global rank (log-formats.md §0, §9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["Prefixed", "bar_count", "split_prefixes", "split_progress", "split_progress_parts", "split_progress_postfix"]


@dataclass(slots=True)
class Prefixed:
    body: str
    rank: int | None = None  # global rank
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    device: int | None = None  # CUDA device index (NCCL `[3]`): never a rank
    level: str | None = None
    time: float | None = None
    logging_rank: int | None = None  # DeepSpeed log_dist `[Rank N]`: who printed it
    node: str | None = None  # Ray's `(Actor pid=N, ip=X)`: the worker's node (its pid is unique there only)
    bracket: int | None = None  # the number of a leading "[N] " (a viewer's line number or an MPI rank)
    task: int | None = None  # Slurm's `srun --label` task id (a global rank only with one task per process)
    tagged: bool = False  # the rank came from a tag of its own after the task label ("1: [r2/4] ..."), not the label


# a log viewer's line number ("[80746] "), or the rank that MPICH's and Intel MPI's
# ``mpirun -prepend-rank`` print the same way ("[155] "): ranks.resolve_rank tells them apart
_VIEWER = re.compile(r"\[(?P<n>\d+)\] (?=\S)")
# a markdown blockquote around a pasted log ("> RuntimeError: ...", nested "> > "), as issue
# threads and e-mail replies quote it: the quote marks are not the log's
_QUOTE = re.compile(r"(?:>[ \t]?){1,4}(?=.)(?!>)")
_CLOUD_TS = re.compile(r"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|\d{3,9}Z) ")
_TEE = re.compile(r"\[(?P<role>[A-Za-z_][\w-]*?)?(?P<n>\d+)\]:")
# (not Darknet's iteration line, " 182: 933.34, 780.74 avg loss, ...", nor pytorch-yolo2's region
# loss, "371: nGT 19, recall 13, ...": their number is the iteration / images seen)
_SRUN = re.compile(r"\s{0,4}(?P<n>\d{1,6}): (?=\S)(?![-+]?(?:[0-9][0-9.]*|nan|inf), [-+]?(?:[0-9][0-9.]*|nan|inf) avg\b|nGT \d)")
# OpenMPI mpirun --tag-output: [jobid,rank]<stderr>: (the global rank in MPI_COMM_WORLD)
# (horovodrun's gloo launcher prints the rank alone: [1]<stderr>:)
_MPI = re.compile(r"\[(?:\d+,)?(?P<n>\d+)\]<(?:stdout|stderr|stddiag)>:")
# ... and with --timestamp-output, a ctime() stamp glued before that tag:
# "Thu May  7 10:39:20 2020[1,1]<stdout>:" (open-mpi/ompi#7710)
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_MPI_TS = re.compile(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>[A-Z][a-z]{2}) {1,2}(?P<d>\d{1,2}) "
                     r"(?P<hms>\d\d:\d\d:\d\d) (?P<y>\d{4})(?=\[(?:\d+,)?\d+\]<(?:stdout|stderr|stddiag)>:)")
_RAY = re.compile(r"\((?:\w+ )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[\d.:a-fA-F]+))?\) ")
_STREAM = re.compile(r"(?:stderr|stdout): ")
# Determined AI's task logs: "[2024-02-27T21:35:28.705869Z] fa88a9df [rank=1] || " (time, the
# container's short id, the worker's global rank)
_DETERMINED = re.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\] [0-9a-f]{6,12} \[rank=(?P<n>\d{1,6})\] \|\| ")
# any short label without brackets, right before a torchrun "[default3]:" or c10 "[rank3]:" prefix,
# or an Open MPI --tag-output "[1,0]<stderr>:" (a log shipper's "2021-03-10T13:22:37.434Z: ", Spell's
# "May 18, 2020, 11:47:13: running: ")
_LABEL = re.compile(r"[^\[\]\s][^\[\]]{0,80}?\s(?=\[(?:default|rank)\d+\]:|\[(?:\d+,)?\d+\]<(?:stdout|stderr|stddiag)>:)")
# pdsh / clush / DeepSpeed's multi-node runner put the host's name before every line of its output:
# "worker-1: ", "node-0: ", "trn-a01: ", "compute-dy-p4d24xlarge-5: ", "10.0.87.143: " (a host name is
# lower-case with a hyphenated part holding a digit, or an IPv4 address; "Epoch: ", "RuntimeError: " are not),
# and a user's own per-host tag on the outputs of several launchers pasted together: a host / node /
# worker / machine word with a short id ("hostA: ", "node1: ", "worker_b: ")
_HOST_LABEL = re.compile(r"(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]*\d[a-z0-9]*(?:\.[a-z0-9-]+)*|\d{1,3}(?:\.\d{1,3}){3}"
                         r"|(?:[Hh]ost|[Nn]ode|[Ww]orker|[Mm]achine)(?:[-_]?\d{1,3}|[-_]?[A-Z]|[-_][a-z])): ")
# journald's and syslog's line ("Dec 08 02:54:09 dgx-b07 python[41877]: ", "Dec  8 02:54:08 node3 kernel: "):
# month, day, clock, host, the program and its pid
_SYSLOG = re.compile(r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(?P<d>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d)"
                     r"(?:\.\d{1,9})? (?P<host>[A-Za-z0-9][\w.-]{0,62}) (?P<prog>[\w./@-]{1,64})(?:\[(?P<pid>\d{1,9})\])?: ")
# docker compose's service prefix ("trainer-worker-1  | ", v1's "trainer_worker_1  | ") and the same
# with a container's name after the pod's, as Kubernetes log tailers print several pods interleaved
# ("train-worker-1 trainer | "): a name whose last part holds the replica's number, then "| "
_COMPOSE = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*[-_][a-z]*\d[a-z0-9]*(?: [a-z][\w.-]{0,62})? {1,40}\| ")
# ESPnet2's logging format ("[{hostname}:{rank}/{world_size}] %(asctime)s (%(module)s:%(lineno)d)
# %(levelname)s: ...", espnet2/tasks/abs_task.py): "[7cc1303a881b:0/8] 2022-02-21 11:42:05,031 ..."
_ESPNET = re.compile(r"\[(?P<host>[A-Za-z0-9][\w.-]{0,62}):(?P<n>\d{1,6})/(?P<ws>\d{1,6})\] (?=\d{4}-\d\d-\d\d )")
_RANK = re.compile(r"\[rank(?P<n>\d+)(?:/\d{1,6})?\](?::\s?|\s)")  # torch's "[rank1]:", or a user's "[rank1] " / "[rank1/4] "
_SHORT_RANK = re.compile(r"\[[rR](?P<n>\d{1,6})(?:/\d{1,6})?\]:?\s")  # "[r3] ", "[r3/4] " (rank 3 of 4)
# a user's own short rank tag at the very start of a line: "rank3: ", "[r3] ", "[R3] "
_USER_RANK = re.compile(r"(?:rank|\[[rR])(?P<n>\d{1,6})(?:/\d{1,6})?[:\]]\s")
# python logging's %(relativeCreated)d (milliseconds since logging was loaded, right-aligned: "   10294ms ",
# the logging cookbook's "%(relativeCreated)6d %(threadName)s") before such a tag: no clock, peeled only there
_REL_MS = re.compile(r" {0,12}\d{1,10}(?:ms)? {1,4}(?=(?:\[?rank|\[[rR])\d{1,6}(?:/\d{1,6})?(?:\]:?|:)\s)")
# ... after the level word alone (a format string "%(levelname)s rank%(rank)s: %(message)s")
_LEVEL_USER_RANK = re.compile(r"(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[: ](?:rank|\[[rR])(?P<n>\d{1,6})(?:/\d{1,6})?[:\]]\s")
_C10 = re.compile(
    r"\[(?P<lvl>[IWEF])(?:(?P<md>\d{3,4}) (?P<hms>\d\d:\d\d:\d\d)\.\d+)? ?(?:[\w./-]+\.(?:cpp|cc|h|hpp|cu|py)):\d+\]\s?"
)
# torch >= 2.3 glog-like python logger: W0304 12:17:22.059000 140211934721856 torch/.../api.py:908]
_GLOG = re.compile(r"(?P<lvl>[VIWEC])(?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d)\.\d+ \d+ \S+:\d+\] ")
# torch 2.1-2.2: [2024-03-12 02:29:19,487] torch.distributed.elastic.multiprocessing.api: [WARNING] msg
_TORCH21 = re.compile(r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[,.]\d+\] [\w.]+: \[(?P<lvl>[A-Z]+)\] ")
# DeepSpeed: [2025-02-21 12:00:00,123] [INFO] [logging.py:128:log_dist] msg
_DEEPSPEED = re.compile(r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[,.]\d+\] \[(?P<lvl>[A-Z]+)\] \[[^\]]*\] ?")
_LOG_DIST = re.compile(r"\[Rank (?P<n>\d+)\] ")
# stdlib default: WARNING:torch.distributed.elastic.multiprocessing.api:msg
_STDLIB = re.compile(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.]+):")
# a logger named after its rank ("trainer.rank2", "train.rank_3"): getLogger(f"trainer.rank{rank}")
_LOGGER_RANK = re.compile(r"(?:^|[._])rank[_-]?(?P<n>\d{1,6})$", re.IGNORECASE)
# rich console handler: " ERROR    failed (exitcode: -9) ...   api.py:673"
_RICH = re.compile(r"\s?(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) {2,}")
_RICH_TAIL = re.compile(r"(?<!\s)\s{2,}[\w.-]+\.py:\d+\s*$")  # from a run's start only: linear
_LIGHTNING = re.compile(r"\[rank: (?P<n>\d+)\] ")
# a logger's leading rank column before a pipe: ParlAI's "rank:  3 | 2022-04-03 18:44:26,615 CRITICAL | ...",
# a user's "rank 1 | step 6 | loss nan"
_PIPE_RANK = re.compile(r"[Rr]ank[:=]? {0,3}(?P<n>\d{1,6}) {0,2}\| ")
# NCCL: [2025-03-04 12:17:21] host:pid:tid [dev] file:line (fn) NCCL WARN msg
# (NCCL 2.3 and older print no "NCCL": "host:pid:tid [3] include/socket.h:194 WARN Call to recv failed ...",
# "host:pid:tid [3] INFO transport/net_ib.cu:555 -> 2")
_NCCL = re.compile(
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] )?(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\] "
    r"(?:\S+:\d+ (?:\(\w+\) )?)?(?=(?:NCCL )?(?:INFO|WARN|TRACE|ERROR) )"
)
# a python-logging / loguru / hydra header after a timestamp, one token at a time:
# "[rank0] INFO train: ", "- train - INFO - ", "| INFO     | mod:fn:42 - ", "[train][INFO] - "
_HDR_RANK = re.compile(r"\[(?:rank|Rank|RANK)[ :=]?\s?(?P<n>\d{1,7})\]:?\s?")
# a bare rank column between a header's separators (loguru's "| INFO     | rank1 | ", a format
# string's "- rank=3 - "): the token alone, followed by the next separator
# (a user's short "r3" tag too, in that position only: "| INFO    | r3 | ")
_HDR_BARE_RANK = re.compile(r"(?:rank|Rank|RANK|r)[:=]?(?P<n>\d{1,7})\s+(?=[|-]\s)|(?:rank|Rank|RANK)[ =]?(?P<c>\d{1,7}):\s+")
# a %(hostname)s / %(process)d pair in a header ("vm pid=18710 ", "pid=18710 ", "[pid 42] "):
# the process, which a rank tag on any of its lines then names
_HDR_PID = re.compile(r"(?:(?!(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b)(?P<host>[A-Za-z][\w.-]{0,63})\s+)?"
                      r"(?:\[(?:pid|PID)[=: ]?(?P<pid2>\d{1,8})\]|(?:pid|PID)[=:](?P<pid>\d{1,8}))[:,]?\s+")
# a %(filename)s:%(lineno)d location in brackets ("INFO [train.py:1057] "), and right behind it the
# "(rank/world_size) " pair that k2-fsa/icefall's setup_logger (and the recipes built on it:
# VALL-E, ZipVoice, k2 SSL) writes once the process group is up: the global rank
_HDR_SRC = re.compile(r"\[[\w.-]{1,80}\.py:\d{1,6}\]\s(?:\((?P<n>\d{1,6})/(?P<w>\d{1,6})\)\s)?")
_HDR_LEVEL = re.compile(r"\[?(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|SUCCESS|TRACE)\]?:?(?:\s+|$)")
_HDR_SEP = re.compile(r"[-|]\s+")
_HDR_NAME = re.compile(r"(?:\[[a-z_][\w.]{0,60}\]|[a-z_][\w.]{0,60}(?::[\w<>]+:\d+)?"
                       r"(?=:\s|\s-\s|\s\||\s+(?:rank|Rank|RANK)[ =]?\d{1,7}:\s))[:]?\s?")
# a time of day alone before a logger header's separator (loguru's "{time:HH:mm:ss.SSS} | ..."):
# the header is peeled, the time kept out (no date to place it on)
# (or a level word right after the clock: ``logging.basicConfig(format="%(asctime)s %(levelname)s ...",
# datefmt="%H:%M:%S")``, loguru's ``{time:HH:mm:ss.SSS} {level.icon} {level: <8}`` with its icon)
_TIME_HDR = re.compile(r"\[?\d\d:\d\d:\d\d(?:[.,]\d{1,6})?\]?\s(?:(?=[|-]\s)|(?:[^\s\[\]|-]{1,3}\s{1,4})?"
                       r"(?=\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|SUCCESS|TRACE)\]?(?:\s|:\s)))")
_US_TS = re.compile(r"(?P<mo>[01]\d)/(?P<d>[0-3]\d)/(?P<y>\d{4}) (?P<hms>\d\d:\d\d:\d\d)(?:[.,]\d+)? ")
_GENERIC_TS = re.compile(
    r"\[?(?P<ts>\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d)(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?(?: \|)? ?"
)


@lru_cache(maxsize=64)
def _day(year: int, month: int, day: int) -> float:
    """Epoch seconds of a UTC midnight (a job's lines span a few dates: cached, so a timestamp
    costs a few int() calls instead of a ``strptime``). ValueError for a date that does not exist."""
    return datetime(year, month, day, tzinfo=UTC).timestamp()


@lru_cache(maxsize=16)
def year_bounds(year: int) -> tuple[float, float]:
    """Epoch seconds of a year's first and the next year's first second (UTC)."""
    return _day(year, 1, 1), _day(year + 1, 1, 1)


def year_of(t: float) -> int:
    return datetime.fromtimestamp(t, tz=UTC).year


def _hms(h: int, m: int, s: int) -> int:
    if not (0 <= h < 24 and 0 <= m < 60 and 0 <= s < 60):
        raise ValueError("time of day out of range")
    return h * 3600 + m * 60 + s


def _ts_full(ts: str) -> float | None:
    """``YYYY-MM-DD[ T_]HH:MM:SS`` (the prefix regexes fix the layout) → epoch seconds, UTC."""
    try:
        return _day(int(ts[0:4]), int(ts[5:7]), int(ts[8:10])) + _hms(int(ts[11:13]), int(ts[14:16]), int(ts[17:19]))
    except ValueError:
        return None


def _ts_md(md: str, hms: str, year: int) -> float | None:
    try:
        month, day = divmod(int(md), 100)
        h, m, s = (int(x) for x in hms.split(":"))
        return _day(year, month, day) + _hms(h, m, s)
    except ValueError:
        return None


def _logger_header(s: str, pos: int, p: Prefixed) -> int:
    """Peel a python-logging style header that follows a timestamp (any order of rank tag,
    level, separators and logger name; a name only after a level, so ``RuntimeError:`` is
    never taken for one)."""
    have_level = have_name = False
    for _ in range(6):
        m = _HDR_RANK.match(s, pos) or _HDR_BARE_RANK.match(s, pos)
        if m:
            if p.rank is None:
                p.rank = int(m.group("n") or m.group("c"))
            pos = m.end()
            continue
        m = _HDR_PID.match(s, pos)
        if m:
            if p.pid is None:
                p.pid = int(m.group("pid") or m.group("pid2"))
                p.host = p.host or m.group("host")
            pos = m.end()
            continue
        m = _HDR_LEVEL.match(s, pos)
        if m and not have_level:
            p.level = m.group("lvl")
            have_level = True
            pos = m.end()
            continue
        m = _HDR_SEP.match(s, pos)
        if m:
            pos = m.end()
            continue
        m = _HDR_SRC.match(s, pos) if have_level and not have_name else None
        if m:
            if m.group("n") is not None and p.rank is None and int(m.group("n")) < int(m.group("w")):
                p.rank = int(m.group("n"))
            pos = m.end()
            have_name = True
            continue
        m = _HDR_NAME.match(s, pos)
        # one logger name per header, and never a key before its value ("- INFO - step:  10")
        if (m and m.end() > pos and not have_name and not s[m.end():m.end() + 1].isdigit()
                and (have_level or s.startswith("[", pos) or s.startswith("- ", m.end()))):
            pos = m.end()
            have_name = True
            continue
        break
    return pos


def split_prefixes(line: str, year: int = 1970) -> Prefixed:
    """Peel prefixes off ``line`` (one ``\\r``-free segment, no newline)."""
    p = Prefixed(body="")
    s = line.rstrip()
    pos = 0
    # outer layers: viewer line numbers, cloud timestamps, torchrun tee, srun label, Ray
    m = _QUOTE.match(s) if s[:1] == ">" else None
    if m:
        pos = m.end()
    for _ in range(6):
        m = _VIEWER.match(s, pos)
        if m:
            if p.bracket is None:
                p.bracket = int(m.group("n"))
            pos = m.end()
            continue
        m = _CLOUD_TS.match(s, pos)
        if m:
            pos = m.end()
            continue
        m = _TEE.match(s, pos)
        if m and m.group("role") is not None and m.group("role") != "rank":
            p.local_rank = int(m.group("n"))
            pos = m.end()
            continue
        if m and m.group("role") is None and m.end() < len(s):
            # a custom TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE like "[${rank}]:" (global)
            p.rank = int(m.group("n"))
            pos = m.end()
            continue
        m = _MPI_TS.match(s, pos)
        if m:
            mon = _MONTHS.get(m.group("mon"))
            if mon is not None:
                p.time = _ts_md(f"{mon}{int(m.group('d')):02d}", m.group("hms"), int(m.group("y")))
            pos = m.end()
            continue
        m = _MPI.match(s, pos)
        if m:
            p.rank = int(m.group("n"))
            pos = m.end()
            continue
        m = _DETERMINED.match(s, pos)
        if m:
            p.rank = int(m.group("n"))
            pos = m.end()
            continue
        m = _PIPE_RANK.match(s, pos) if p.rank is None else None
        if m:
            p.rank = int(m.group("n"))
            pos = m.end()
            continue
        m = _RAY.match(s, pos)
        if m:
            p.pid = int(m.group("pid"))
            p.node = m.group("ip")
            pos = m.end()
            continue
        m = _SRUN.match(s, pos)
        if m and p.rank is None:
            p.rank = p.task = int(m.group("n"))
            pos = m.end()
            continue
        m = _STREAM.match(s, pos)
        if m:
            pos = m.end()  # "stderr: " (accelerate test and other runners relaying a child's streams)
            continue
        m = _ESPNET.match(s, pos) if pos == 0 and s[:1] == "[" else None
        if m and int(m.group("n")) < int(m.group("ws")):
            p.host, p.rank = m.group("host"), int(m.group("n"))
            pos = m.end()
            continue
        m = _HOST_LABEL.match(s, pos) if pos == 0 else None
        if m:
            pos = m.end()  # a multi-node runner's host label ("worker-1: ", "10.0.87.143: "): pdsh, clush, a user's tee
            continue
        m = _SYSLOG.match(s, pos) if pos == 0 and s[:1] in "ADFJMNOS" else None
        if m:
            # journald / syslog ("Dec 08 02:54:09 node3 python[41877]: "): the host and the
            # process that wrote the line; the clock carries no year
            mon = _MONTHS.get(m.group("mon"))
            if mon is not None:
                p.time = _ts_md(f"{mon:02d}{int(m.group('d')):02d}", m.group("hms"), year)
            p.host = m.group("host")
            if m.group("pid"):
                p.pid = int(m.group("pid"))
            pos = m.end()
            continue
        m = _COMPOSE.match(s, pos) if pos == 0 else None
        if m:
            pos = m.end()  # docker compose's / a log tailer's "service-1  | " before each line of a replica
            continue
        m = _LABEL.match(s, pos) if pos == 0 else None
        if m and "Error" not in m.group() and "Exception" not in m.group():
            pos = m.end()  # a collector's own label ("master-0 logs: ") before torchrun's prefix
            continue
        break
    # (a user's own tag also right after srun's task label: "1: [r2/4] step 17": task 1 runs rank 2,
    # and after a relative clock alone: "   10294ms [R3] W step 52: ...")
    rel = _REL_MS.match(s) if pos == 0 and s[:1] in " 0123456789" else None
    if rel is not None:
        pos = rel.end()
    m = _RANK.match(s, pos) or (_USER_RANK.match(s, pos) if pos == 0 or rel is not None or p.task is not None else None)
    if m:
        p.rank = int(m.group("n"))
        p.tagged = p.task is not None
        pos = m.end()
    elif pos == 0 and s[:1] in "DIWEC" and (m := _LEVEL_USER_RANK.match(s)):
        p.level = m.group("lvl")
        p.rank = int(m.group("n"))
        pos = m.end()
    m = _C10.match(s, pos)
    if m:
        p.level = m.group("lvl")
        if m.group("md"):
            p.time = _ts_md(m.group("md"), m.group("hms"), year)
        pos = m.end()
        # the excepthook prefix can follow a c10 header on wrapped output
        m = _RANK.match(s, pos)
        if m:
            pos = m.end()
    else:
        for rx in (_GLOG, _TORCH21, _DEEPSPEED, _STDLIB):
            m = rx.match(s, pos)
            if m:
                p.level = m.group("lvl")
                gd = m.groupdict()
                if gd.get("logger") and p.rank is None and (lm := _LOGGER_RANK.search(gd["logger"])):
                    p.rank = int(lm.group("n"))
                if gd.get("ts"):
                    p.time = _ts_full(gd["ts"])
                elif gd.get("md"):
                    p.time = _ts_md(gd["md"], gd["hms"], year)
                pos = m.end()
                break
        else:
            m = _NCCL.match(s, pos)
            if m:
                p.host = m.group("host")
                p.pid = int(m.group("pid"))
                p.device = int(m.group("dev"))
                if m.group("ts"):
                    p.time = _ts_full(m.group("ts"))
                pos = m.end()
            else:
                m = _RICH.match(s, pos)
                if m:
                    p.level = m.group("lvl")
                    pos = m.end()
                    t = _RICH_TAIL.search(s, pos)
                    if t:
                        s = s[: t.start()]
                else:
                    m = _GENERIC_TS.match(s, pos)
                    if m and s[pos] in "[0123456789":
                        p.time = _ts_full(m.group("ts"))
                        pos = _logger_header(s, m.end(), p)
                    elif s[pos:pos + 1] in ("0", "1") and (m := _US_TS.match(s, pos)):
                        # the HF examples' datefmt "%m/%d/%Y %H:%M:%S" (transformers, accelerate scripts)
                        p.time = _ts_full(f"{m.group('y')}-{m.group('mo')}-{m.group('d')} {m.group('hms')}")
                        pos = _logger_header(s, m.end(), p)
                    elif s[pos:pos + 1] in ("[", "0", "1", "2") and (m := _TIME_HDR.match(s, pos)):
                        pos = _logger_header(s, m.end(), p)
        # excepthook prefix after a logger header, or a user's short "[r1] " tag there ("INFO:train:[r1] ...")
        m = _RANK.match(s, pos) or (_SHORT_RANK.match(s, pos) if p.level is not None else None)
        if m and p.rank is None:
            p.rank = int(m.group("n"))
            pos = m.end()
    m = _LOG_DIST.match(s, pos)
    if m:
        p.logging_rank = int(m.group("n"))
        pos = m.end()
    m = _LIGHTNING.match(s, pos)
    if m:
        p.rank = int(m.group("n"))
        pos = m.end()
    p.body = s[pos:]
    return p


# tqdm: "desc:  16%|███▍    | 1045/6400 [1:16:09<53:12,  1.68it/s]" or "240it [05:55,  1.47s/it, loss=5.46]"
# (the lookbehind keeps a long run of digits linear: `\d+it` is tried once per run, not per digit)
_BAR = re.compile(
    r"(?:\d{1,3}%\|[^|\r\n]*\|\s*(?P<n>\d+)/(?P<total>\d+)|(?<!\d)(?P<n2>\d+)it) ?"
    r"\[(?:\d+:)?\d+:\d\d(?:<(?:\d+:)?[\d:?]+)?(?:, *(?P<post>[^\]\r\n]*))?\]"
)


def bar_count(segment: str) -> tuple[int, int] | None:
    """The last tqdm bar's counter and total on a segment (``0%|    | 0/410 [00:00<?, ?it/s]``)."""
    last = None
    for m in _BAR.finditer(segment):
        last = m
    if last is None or last.group("n") is None:
        return None
    return int(last.group("n")), int(last.group("total"))


def split_progress(segment: str) -> tuple[int | None, str]:
    n, rest, _post = split_progress_postfix(segment)
    return n, rest


def split_progress_postfix(segment: str) -> tuple[int | None, str, str | None]:
    """Remove tqdm progress bars from one ``\\r``-segment.

    Returns the last progress counter seen (``n`` of ``n/total``), whatever text was glued
    after the last bar (often a log line printed while the bar was open) and the last bar's
    postfix (``loss=nan, lr=...``).
    """
    n, _lead, rest, post = split_progress_parts(segment)
    return n, rest, post


def split_progress_parts(segment: str) -> tuple[int | None, str, str, str | None]:
    """Like ``split_progress_postfix``, plus the text before the first bar (``lead``): the
    prefixes a launcher put in front of the bar (``[default3]:``) that the glued text lost."""
    if "%|" not in segment and "it [" not in segment and ("|" not in segment or "it[" not in segment):
        return None, "", segment, None  # no bar can be here (the common case, and pipe-separated metric lines)
    n: int | None = None
    start = -1
    end = 0
    post: str | None = None
    for m in _BAR.finditer(segment):
        n = int(m.group("n") or m.group("n2"))
        if start < 0:
            start = m.start()
        end = m.end()
        post = m.group("post")
    if n is None:
        return None, "", segment, None
    return n, segment[:start], segment[end:], post
