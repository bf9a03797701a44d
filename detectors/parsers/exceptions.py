"""Python exception lines and process-death lines → MATCH events.

This rule runs only when no catalog fingerprint explained the line: a
``torch.OutOfMemoryError: CUDA out of memory...`` is a ``cuda_oom`` match, a
``RuntimeError: [...] Connection closed by peer`` a ``peer_connection_lost`` one. What is
left is classified by type: launcher wrappers (``ChildFailedError``,
``CalledProcessError``) are collateral teardown; ``DistBackendError``/``DistError`` are
collective failures; interrupts are ignored; anything else is a ``rank_exception``.
"""

from __future__ import annotations

import re

from detectors.model import EventKind
from detectors.parsers.base import FhBlock, Rule, Segment
from detectors.stacks import encode_frames

__all__ = [
    "BLOCK_LINES",
    "BLOCK_RULE",
    "EXCEPTION_RULE",
    "FH_FRAME_RULE",
    "FH_HEADER_RULE",
    "FRAME_RULE",
    "INTERRUPT_RULE",
    "NAN_ASSERT_RULE",
    "NCCL_CHAIN_RULE",
    "RANKMAP_RULE",
    "RULES",
    "THREAD_RULE",
    "UNRAISABLE_RULE",
    "frames_above",
    "note_peer_warn",
    "raised_in_setup",
    "stack_data",
]

_EXC = re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.)*(?P<short>_?[A-Z]\w*(?:Error|Exception|Failure|Failed)|Exception|StopIteration))(?::\s*(?P<msg>.*)|\s*$)"
)
_FATAL = re.compile(r"^\s*Fatal Python error: (?P<msg>.+)")
_TEARDOWN_TYPES = {"ChildFailedError", "CalledProcessError"}
_COLLECTIVE_TYPES = {"DistBackendError", "DistNetworkError", "DistStoreError"}
# PaddlePaddle's FatalError for a signal: "FatalError: `Process abort signal` is detected by the
# operating system." (paddle/fluid/platform/init.cc SignalHandle)
_PADDLE_ABORT = "`Process abort signal` is detected by the operating system"
_IGNORED = {"KeyboardInterrupt", "SystemExit", "StopIteration", "GeneratorExit", "BrokenPipeError"}


# how far below "Exception ignored in: ..." the exception line that ends its traceback may be
UNRAISABLE_LINES = 80
LOGGED_LINES = 200  # a logged traceback's exception line is at most this far below its header


def _exception(m: re.Match[str], seg: Segment) -> bool:
    em = _EXC.match(seg.body)
    if em:
        short = em.group("short")
        if short in _IGNORED and not (short == "StopIteration" and frames_above(seg)):
            # (a StopIteration that ends a traceback was not caught: a data iterator ran dry inside
            # the step, "raise StopIteration" in DataLoader's __next__, and the rank died of it)
            return False
        head = getattr(seg.file, "unraisable", None)  # a FileState pickled by an older version lacks it
        if head is not None:
            seg.file.unraisable = None
            if 0 < seg.source.line - head <= UNRAISABLE_LINES:
                # the end of a traceback Python printed from a finaliser, __del__ or atexit callback
                # and then went on: the process did not die of it
                return True
        message = (em.group("msg") or "").strip()[:500]
        data: dict[str, object] = {"exc_type": em.group("type"), "message": message}
        logged = getattr(seg.file, "logged_tb", None)  # (a FileState pickled by an older version lacks it)
        if logged is not None:
            seg.file.logged_tb = None
            if 0 < seg.source.line - logged[0] <= LOGGED_LINES and logged[1] == (seg.rank, seg.local_rank):
                data["logged"] = True  # the end of a traceback a log message printed: caught, then logged
        thread = getattr(seg.file, "thread_exc", None)  # (a FileState pickled by an older version lacks it)
        if thread is not None:
            seg.file.thread_exc = None
            if 0 < seg.source.line - thread[0] <= UNRAISABLE_LINES and thread[1] == (seg.rank, seg.local_rank):
                # threading.excepthook's report: a thread of the process died, the process did not
                data["in_thread"] = True
        if short in _TEARDOWN_TYPES:
            failure = "launcher_teardown"
        elif short == "FatalError" and message.startswith(_PADDLE_ABORT):
            # PaddlePaddle's signal handler reporting SIGABRT, as "Fatal Python error: Aborted"
            # below: how a process is torn down after the error it printed above (or native_abort)
            failure = "launcher_teardown"
            data["signal"] = "SIGABRT"
        elif short in _COLLECTIVE_TYPES:
            failure = "collective_timeout" if "timeout" in message.lower() else "nccl_error"
        elif short == "RuntimeError" and message == "Socket Timeout":
            # torch < 2.0 raised c10d's store and gloo socket timeouts as bare RuntimeErrors (later
            # DistStoreError): a process that waited on its peers, like a collective timeout
            failure = "collective_timeout"
        elif short == "AssertionError" and _after_nan_assert(seg):
            # the source line of the assert that failed checked for NaN (x == x is False only for
            # NaN; torch.isnan / isfinite): the tensor it checked held a non-finite value
            failure = "nonfinite_loss"
            data["nan_check"] = True
        elif _TIMED_OUT.search(message) and _in_collective(frames_above(seg) or []):
            # a timeout raised out of a torch.distributed collective's wait (torch 1.x gloo's bare
            # "RuntimeError: Operation timed out!" from all_reduce's work.wait()): the process
            # waited on its peers
            failure = "collective_timeout"
        else:
            failure = "rank_exception"
        stack_data(seg, data)
        seg.emit(EventKind.MATCH, failure=failure, data=data)
        return True
    fm = _FATAL.match(seg.body)
    if fm:
        msg = fm.group("msg")[:500]
        # SIGABRT alone is how a process is torn down after a collective timeout (the watchdog,
        # "terminate called ..."), like a launcher's exit -6: a consequence, not the cause;
        # a glibc heap abort says so on its own line (native_abort)
        failure = "launcher_teardown" if msg.startswith("Aborted") else "rank_exception"
        seg.emit(EventKind.MATCH, failure=failure, data={"exc_type": "Fatal Python error", "message": msg, "signal": "SIGABRT"}
                 if failure == "launcher_teardown" else {"exc_type": "Fatal Python error", "message": msg})
        return True
    return False


_TIMED_OUT = re.compile(r"\btimed? ?out\b|\btimeout\b", re.IGNORECASE)
# the innermost frames of a torch.distributed collective (or its wait)
_COLLECTIVE_FNS = frozenset({"wait", "all_reduce", "all_gather", "barrier", "broadcast", "reduce", "reduce_scatter",
                             "all_to_all", "all_to_all_single", "gather", "scatter", "send", "recv", "monitored_barrier"})


def _in_collective(frames: list[tuple[str, str, int]]) -> bool:
    """Whether the traceback (outermost first) ends inside a torch.distributed collective."""
    return any("torch/distributed/" in file.replace("\\", "/") and fn.rsplit(".", 1)[-1] in _COLLECTIVE_FNS
               for fn, file, _ in frames[-2:])


_COMM = re.compile(
    r"comm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) n[Rr]anks (?P<n>\d+)(?: cudaDev (?P<dev>\d+))?(?:.*?localRank (?P<lr>\d+))?"
)


def _rankmap(m: re.Match[str], seg: Segment) -> bool:
    cm = _COMM.search(seg.body)
    if not cm:
        return False
    rank = int(cm.group("rank"))
    nranks = int(cm.group("n"))
    pre = seg.pre
    job = seg.file.job
    if nranks > job.trusted_ws and nranks < 1 << 20:
        job.trusted_ws = nranks
    if nranks < job.trusted_ws:
        # a sub-group's communicator (Megatron's tensor-, pipeline- and data-parallel groups: "rank 1
        # nranks 8" beside the world's "rank 8 nranks 64"): its rank is no global rank; the line is
        # the process's, whose global rank an earlier line may have told
        known = job.pid_rank.get((pre.host, pre.pid)) if pre.host is not None and pre.pid is not None else None
        if known is not None:
            seg.rank = known
        return False
    if pre.host is not None and pre.pid is not None:
        seg.file.job.pid_rank[(pre.host, pre.pid)] = rank
        seg.file.job.tree_procs.discard((pre.host, pre.pid))  # the init line names the rank outright
    seg.rank = rank
    ev = seg.emit(
        EventKind.RANKMAP,
        data={
            "rank": rank,
            "world_size": int(cm.group("n")),
            "device": int(cm.group("dev")) if cm.group("dev") else pre.device,
            "local_rank": int(cm.group("lr")) if cm.group("lr") else None,
            # "comm 0x… rank 11 nranks 16 … - Abort COMPLETE": the rank tore its communicator down
            # after an error it saw (a timeout, a peer's failure): it is not a silent rank
            **({"aborted": True} if "Abort COMPLETE" in seg.body[cm.end():] else {}),
            **({"nccl_proc": f"{pre.host}:{pre.pid}"} if pre.host is not None and pre.pid is not None else {}),
        },
    )
    ev.rank = rank
    return False


# NCCL's tree topology line names the process's own rank between its children and its parent:
# "NCCL INFO Trees [0] 2/-1/-1->1->0|0->1->2/-1/-1" is rank 1 (children 2, parent 0); printed by
# every rank at init, so a job logging without NCCL_DEBUG_SUBSYS=INIT still maps host:pid to rank
_TREES = re.compile(r"NCCL INFO Trees \[\d+\] -?\d+(?:/-?\d+)*->(?P<rank>\d+)->-?\d+")


def _trees(m: re.Match[str], seg: Segment) -> bool:
    tm = _TREES.search(seg.body)
    pre = seg.pre
    if tm and pre.host is not None and pre.pid is not None:
        job = seg.file.job
        key = (pre.host, pre.pid)
        if key not in job.pid_rank:
            job.pid_rank[key] = int(tm.group("rank"))
            job.tree_procs.add(key)
    return False


# lines that a rank-tagged traceback right below may own
BLOCK_LINES = 3  # an untagged line at most this far above a rank-tagged traceback belongs to it


def _block(m: re.Match[str], seg: Segment) -> bool:
    lead = seg.body[:m.start()].rstrip()
    if lead.endswith(":") and len(lead) > 1:
        # the header after a message of the program's own on the same line ("Import of X failed
        # with: Traceback ...", ``logger.info(f"... failed with: {traceback.format_exc()}")``):
        # Python's own report of an uncaught exception starts its line with the header
        seg.file.logged_tb = (seg.source.line, (seg.rank, seg.local_rank))
    frames = getattr(seg.file, "frames", None)
    if frames:
        frames.pop((seg.rank, seg.local_rank), None)  # a new traceback: its frames start over
    head = getattr(seg.file, "unraisable", None)  # (a FileState pickled by an older version lacks it)
    if head is not None and 0 < seg.source.line - head <= 2:
        # the traceback of "Exception ignored in: <function X.__del__ ...>" (sys.unraisablehook): the
        # process goes on, so no block opens here that an unfinished traceback could be read from,
        # and no rank is dying of its own error
        return False
    if seg.rank is None or seg.rank_from != "prefix":
        seg.emit(EventKind.BLOCK, data={"untagged": True})  # a traceback all the same: something failed here
        return False
    last = getattr(seg.file, "nccl_last", None)  # a FileState pickled by an older version lacks it
    if last is not None and 0 < seg.source.line - last[0] <= BLOCK_LINES:
        # NCCL's return-code chain of one process runs into this traceback: that process is
        # this rank (its WARN above, and its later lines, are this rank's)
        _, host, pid = last
        seg.file.job.pid_rank.setdefault((host, pid), seg.rank)
        seg.emit(EventKind.BLOCK, data={"nccl_proc": f"{host}:{pid}"})
    else:
        seg.emit(EventKind.BLOCK)
    return False


def _nccl_chain(m: re.Match[str], seg: Segment) -> bool:
    """NCCL's WARN and the ``file.cc:123 -> 1`` lines that return its error code up the
    stack, one process (host:pid) at a time: remembered so that a rank-tagged traceback
    printed right after the chain can claim that process."""
    pre = seg.pre
    if pre.host is not None and pre.pid is not None:
        seg.file.nccl_last = (seg.source.line, pre.host, pre.pid)
    proc = (pre.host, pre.pid)
    if "NCCL WARN " in seg.body:
        # a WARN no fingerprint knows (parse.py clears this when one does): an error only if
        # NCCL returns an error code up the stack right below it
        seg.file.nccl_warn = (seg.source.line, proc, seg.source)
        seg.file.nccl_any_warn = (seg.source.line, proc)
        return False
    warn = getattr(seg.file, "nccl_warn", None)
    code = _CHAIN_CODE.search(seg.body)
    if code is not None and pre.host is not None:
        # a return-code chain with no WARN of its process above it (NCCL_DEBUG=INFO printed only
        # the codes: "include/net.h:25 -> 2", "transport/net.cc:515 -> 2"): an error once the code
        # came up out of the first frame into transport / proxy / init / bootstrap / group code
        # (a lone "include/net.h:19 -> 2" under "Could not find real path of /sys/class/net/eth0"
        # is a topology lookup NCCL goes on without); read once per chain
        seen = getattr(seg.file, "nccl_any_warn", None)  # (a FileState pickled by an older version lacks it)
        last = getattr(seg.file, "nccl_bare_chain", None)
        quiet = seen is None or seen[1] != proc or not 0 < seg.source.line - seen[0] <= BARE_CHAIN_LINES
        up = last is not None and last[1] == proc and 0 < seg.source.line - last[0] <= 3
        read = up and last is not None and last[2]
        if quiet and up and not read and _UP_FRAME.search(seg.body):
            seg.emit(EventKind.MATCH, failure="nccl_error", data={
                "pattern": "NCCL returned an error code up its call stack with no WARN line (file.cc:N -> code)",
                "nccl_code": int(code.group(1)), "nccl_proc": f"{pre.host}:{pre.pid}"})
            seg.file.nccl_bare_chain = (seg.source.line, proc, True)
        else:
            seg.file.nccl_bare_chain = (seg.source.line, proc, bool(read))
    peer = getattr(seg.file, "nccl_peer_warn", None)
    if (peer is not None and code is not None and peer[1] == proc and 0 < seg.source.line - peer[0] <= SETUP_CHAIN_LINES
            and _SETUP_FRAME.search(seg.body)):
        # a peer's dropped connection that NCCL returned up through communicator set-up
        # (bootstrap / init): no collective had run yet, the connection itself failed
        seg.file.nccl_peer_warn = None
        ev = seg.emit(EventKind.MATCH, failure="peer_connection_lost", data={
            "pattern": "a lost NCCL connection returned up through communicator set-up (bootstrap / init -> code)",
            "setup": True, "nccl_code": int(code.group(1)), "nccl_proc": f"{pre.host}:{pre.pid}"})
        ev.source = peer[2]
    if warn is not None and code is not None and warn[1] == proc and 0 < seg.source.line - warn[0] <= CHAIN_LINES:
        seg.file.nccl_warn = None
        ev = seg.emit(EventKind.MATCH, failure="nccl_error", data={
            "pattern": "an NCCL WARN whose error NCCL returned up its call stack (file.cc:N -> code)",
            "nccl_code": int(code.group(1)), "nccl_proc": f"{pre.host}:{pre.pid}" if pre.host is not None else None})
        ev.source, ev.time = warn[2], ev.time
    return False


def note_peer_warn(failure: str, seg: Segment) -> None:
    """A line of an NCCL process (host:pid) that a fingerprint read as a peer's dropped
    connection: kept so that its return codes below can show it came up through set-up. Any
    fingerprint's line of such a process is kept as its last report: the return codes below it
    are that report's, not a chain with no WARN."""
    if seg.pre.host is not None and seg.pre.pid is not None:
        seg.file.nccl_any_warn = (seg.source.line, (seg.pre.host, seg.pre.pid))
        if failure == "peer_connection_lost":
            seg.file.nccl_peer_warn = (seg.source.line, (seg.pre.host, seg.pre.pid), seg.source)


CHAIN_LINES = 6  # the first return-code line comes at most this far below its WARN
BARE_CHAIN_LINES = 40  # a chain this far below a WARN of its process is that WARN's (not one without any)
SETUP_CHAIN_LINES = 12  # ... and the set-up frames (bootstrap, init) at most this far
# an error code (ncclUnhandledCudaError 1 ... ncclRemoteError 6; 0 is success, 7 ncclInProgress)
# (NCCL 2.3 and older print "INFO file:line -> code" without "NCCL")
_CHAIN_CODE = re.compile(r"(?:NCCL )?INFO [\w./-]+:\d+ -> ([1-6])\b")
# a return-code line of communicator set-up: bootstrap.cc / init.cc (init.cu, bootstrap.cu before 2.4)
_UP_FRAME = re.compile(r"INFO (?:[\w.-]+/)*(?:transport|proxy|init|bootstrap|group|enqueue|net|p2p|shm|channel)[\w.-]*\.c[cu]?:\d+ -> ")
_SETUP_FRAME = re.compile(r"INFO (?:[\w./-]+/)?(?:bootstrap|init)\.c[cu]?:\d+ -> ")


BLOCK_RULE = Rule("block.traceback", r"Traceback \(most recent call last\)", _block)
RANKMAP_RULE = Rule("nccl.rankmap", r"comm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks \d+", _rankmap)
# the fallback: run only when no specialised rule or fingerprint explained the line
# (a bare ``raise Exception("...")`` prints ``Exception: ...`` at the start of its line)
EXCEPTION_RULE = Rule("exception", r"[A-Za-z0-9](?:Error|Exception|Failure|Failed)(?::|\s*$)|(?:^|[ \t:\]])Exception: |Fatal Python error: "
                      r"|(?:^|[ \t:\]])StopIteration(?::|\s*$)",
                      _exception)
NCCL_CHAIN_RULE = Rule("nccl.chain", r"NCCL WARN |(?:NCCL )?INFO [\w./-]+:\d+ -> \d", _nccl_chain)
TREES_RULE = Rule("nccl.trees", r"NCCL INFO Trees \[\d+\] -?\d", _trees)
# a rank-tagged C++ log record whose message goes on over the next, untagged lines
# ("[rank0]:[W NPUStream.cpp:365] Warning: NPU warning, error code is 507018[Error]: "): read so that
# the rank chain sees it (detectors.ranks, cpp_cont); it emits nothing itself
CPP_CONT_RULE = Rule("rank.cpp_continued", r"\[rank\d+\]:\[[WEIF][^\]\n]{0,60}\.(?:cpp|cc|h|hpp):\d+\][^\n]*:[ \t]*$",
                     lambda m, seg: False)


def _unraisable(m: re.Match[str], seg: Segment) -> bool:
    seg.file.unraisable = seg.source.line
    return False


_INTERRUPT = re.compile(r"\s*KeyboardInterrupt(?::.*)?\s*")


def _interrupted(m: re.Match[str], seg: Segment) -> bool:
    """A traceback ending in ``KeyboardInterrupt``: the process was interrupted (Ctrl-C, a
    launcher's SIGINT), no failure of its own; said like a worker reporting the launcher's signal
    (it also ends the traceback block, which is no unfinished traceback then)."""
    if _INTERRUPT.fullmatch(seg.body) is None:
        return False
    data: dict[str, object] = {"pid": None, "signal": "SIGINT", "reporter": "self", "interrupted": True}
    frames = getattr(seg.file, "frames", None)
    if frames and (mine := frames.pop((seg.rank, seg.local_rank), None)):
        data["frames"] = encode_frames(list(reversed(mine)))  # innermost first, as a stack sample
    seg.emit(EventKind.TEARDOWN, data=data)
    return True


INTERRUPT_RULE = Rule("exception.interrupt", r"KeyboardInterrupt", _interrupted)

# Python's faulthandler (faulthandler.register(SIGTERM) / dump_traceback_later / a fatal signal /
# a watchdog thread's dump_traceback(all_threads=True)): "Current thread 0x... (most recent call
# first):" or "Thread 0x...", then '  File "/x/train.py", line 22 in <module>' (no comma before "in",
# innermost first), one block per thread (CPython Python/traceback.c)
_FH_HEADER = re.compile(r"(?P<current>Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):|"
                        r"(?P<stack>Stack) \(most recent call first\):")
_FH_FRAME = re.compile(r'\s*File "(?P<file>[^"\n]{1,400})", line (?P<line>\d{1,7}) in (?P<fn>[^\s(]{1,120})\s*')
# library and interpreter code: a frame here is not yet where the program itself was
_LIBRARY_FILE = re.compile(r"(?:site|dist)-packages/|/lib/python\d+(?:\.\d+)?/|^<frozen |^<string>")
# a block's outermost frame says whose thread it was: the interpreter's main thread runs the
# script (``<module>``, or runpy's frames under ``python -m``); every other thread was started by
# the threading module (``Thread._bootstrap``), a helper (a watchdog, a data loader's pin-memory
# thread, a logger) and not where the training loop waits
_MAIN_FNS = frozenset({"<module>", "_run_module_as_main", "_run_code"})
_THREAD_FNS = frozenset({"_bootstrap", "_bootstrap_inner"})


def _fh_header(m: re.Match[str], seg: Segment) -> bool:
    """A faulthandler thread block begins: its frames are read until its outermost says whose
    thread it is (``_fh_frame``)."""
    hm = _FH_HEADER.fullmatch(seg.body.strip())
    if hm is None:
        return False
    if seg.file.fh_blocks is None:
        seg.file.fh_blocks = {}
    seg.file.fh_blocks[(seg.rank, seg.local_rank)] = FhBlock()
    if len(seg.file.fh_blocks) > 4096:
        seg.file.fh_blocks.clear()
    return True


def _fh_frame(m: re.Match[str], seg: Segment) -> bool:
    """A frame of a faulthandler block. Its frames up to the first in the program's own code are
    where that thread was; at the block's outermost frame, the main thread's block (whichever its
    header: the thread that received the signal, or a ``Thread`` below a watchdog's own ``Current
    thread``) is said like an interrupted traceback (a stack sample, detectors.stacks), and a
    helper thread's (``threading``'s bootstrap) is dropped."""
    blocks = seg.file.fh_blocks
    key = (seg.rank, seg.local_rank)
    fm = _FH_FRAME.fullmatch(seg.body)
    if fm is None or not blocks or (blk := blocks.get(key)) is None:
        return False
    fn, path = fm.group("fn"), fm.group("file")
    if blk.sample is None:
        blk.frames.append((fn, path, int(fm.group("line"))))
        if not _LIBRARY_FILE.search(path) or len(blk.frames) >= FRAME_KEEP:
            blk.sample = blk.frames
    if fn in _THREAD_FNS and path.endswith("threading.py"):
        blocks[key] = None  # a helper thread's block
    elif fn in _MAIN_FNS:
        blocks[key] = None
        seg.emit(EventKind.TEARDOWN, data={"pid": None, "signal": "faulthandler", "reporter": "self", "interrupted": True,
                                           "frames": encode_frames(blk.sample or blk.frames), "stack_dump": True})
    return True


FH_HEADER_RULE = Rule("exception.fh_header", r"(?:[Tt]hread 0x[0-9a-fA-F]+|Stack) \(most recent call first\):", _fh_header)
FH_FRAME_RULE = Rule("exception.fh_frame", r'File "[^"\n]{1,400}", line \d{1,7} in ', _fh_frame)

FRAME_KEEP = 8  # innermost frames kept per traceback being printed
_FRAME = re.compile(r'\s*File "(?P<file>[^"\n]{1,400})", line (?P<line>\d{1,7}), in (?P<fn>[^\s(]{1,120})')


def _frame(m: re.Match[str], seg: Segment) -> bool:
    """One frame of a Python traceback (``File "/x/train.py", line 19, in <module>``): the last
    few are kept so that a ``KeyboardInterrupt`` below them tells where the process was waiting
    when it was stopped (detectors.stacks reads them like a live stack sample)."""
    fm = _FRAME.match(seg.body)
    if fm is None:
        return False
    if seg.file.frames is None:
        seg.file.frames = {}
    if seg.rank is not None and not (seg.file.frames_at is not None and 0 < seg.source.line - seg.file.frames_at <= 2):
        # a rank-tagged traceback pasted without its header ("[1,7]<stderr>:  File ..."): like a
        # header, it claims the rank-less error pasted right above it (detect._claim_block)
        seg.emit(EventKind.BLOCK, data={"claim_only": True})
    mine = seg.file.frames.setdefault((seg.rank, seg.local_rank), [])
    mine.append((fm.group("fn"), fm.group("file"), int(fm.group("line"))))
    seg.file.frames_at = seg.source.line
    if len(mine) > FRAME_KEEP:
        del mine[0]
    if len(seg.file.frames) > 4096:  # a bound on the keys (ranks) one file may hold
        seg.file.frames.clear()
    return False


# frames of process-group set-up (torch.distributed's init and rendezvous, the store, DeepSpeed's
# and accelerate's wrappers end in these): an error raised through one of them failed the set-up
_SETUP_FRAMES = frozenset({
    "init_process_group", "_new_process_group_helper", "rendezvous", "_create_c10d_store", "_env_rendezvous_handler",
    "_tcp_rendezvous_handler", "_store_based_barrier", "_set_sequence_number_for_group", "init_device_mesh",
    "_create_tcp_store", "_rendezvous_helper", "init_distributed", "_init_process_group", "init_parallel_env",
})
SETUP_LINES = 8  # the exception line comes at most this far below its traceback's last frame


def frames_above(seg: Segment) -> list[tuple[str, str, int]] | None:
    """The frames of the traceback printed just above this line by the same rank (outermost
    first), or None: the exception on this line was raised through them."""
    frames = getattr(seg.file, "frames", None)
    at = getattr(seg.file, "frames_at", None)
    if not frames or at is None or not 0 < seg.source.line - at <= SETUP_LINES:
        return None
    return frames.get((seg.rank, seg.local_rank)) or None


def raised_in_setup(seg: Segment) -> bool:
    """Whether the exception on this line was raised through process-group set-up: a frame of
    the traceback just printed above it (same rank) is one of ``_SETUP_FRAMES``."""
    mine = frames_above(seg)
    return bool(mine) and any(fn.rsplit(".", 1)[-1] in _SETUP_FRAMES for fn, _, _ in mine or ())


def stack_data(seg: Segment, data: dict[str, object]) -> None:
    """Tag an exception line's data with what its traceback shows: raised through set-up, and
    its frames (innermost first: a stack sample of where the rank was, ``detectors.stacks``)."""
    mine = frames_above(seg)
    if not mine:
        return
    if any(fn.rsplit(".", 1)[-1] in _SETUP_FRAMES for fn, _, _ in mine):
        data["setup"] = True
    data["frames"] = encode_frames(list(reversed(mine)))


FRAME_RULE = Rule("exception.frame", r'File "[^"\n]{1,400}", line \d{1,7}, in ', _frame)


# a NaN self-check quoted as a traceback's source line: "assert (rpn_bbox_pred==rpn_bbox_pred).all()"
# (only NaN differs from itself), "assert loss == loss", "assert not torch.isnan(loss).any()",
# "assert torch.isfinite(x).all()", "assert not np.isnan(loss)"
_NAN_ASSERT = re.compile(
    r"^\s*assert\s+(?:not\s+)?\(?\s*(?:"
    r"(?:torch|np|numpy|math|jnp|tf\.math)\.(?:isnan|isinf|isfinite)\(|(?:torch|np|numpy|jnp)\.(?:any\((?:torch|np|numpy|jnp)\.isnan|all\((?:torch|np|numpy|jnp)\.isfinite)"
    r"|(?P<a>[\w.\[\]'\"]{1,80})\s*==\s*(?P<b>[\w.\[\]'\"]{1,80})\s*\)?\s*(?:\.all\(\))?\s*(?:,|$))"
)
NAN_ASSERT_LINES = 2  # the exception line comes right below the quoted source line (a caret line between)


def _nan_assert(m: re.Match[str], seg: Segment) -> bool:
    am = _NAN_ASSERT.match(seg.body)
    if am is None or (am.group("a") is not None and am.group("a") != am.group("b")):
        return False  # not a NaN check: "assert a.shape == b.shape" compares two things
    seg.file.nan_assert = (seg.source.line, (seg.rank, seg.local_rank))
    return False


def _after_nan_assert(seg: Segment) -> bool:
    at = getattr(seg.file, "nan_assert", None)  # a FileState pickled by an older version lacks it
    return (at is not None and 0 < seg.source.line - at[0] <= NAN_ASSERT_LINES
            and at[1] == (seg.rank, seg.local_rank))


NAN_ASSERT_RULE = Rule("exception.nan_assert", r"assert +(?:not +)?\(? *(?:(?:torch|np|numpy|math|jnp|tf\.math)\.(?:isnan|isinf|isfinite|any|all)\(|[A-Za-z_][\w.\[\]'\"]{0,80} *== *[A-Za-z_])",
                       _nan_assert)


def _thread_died(m: re.Match[str], seg: Segment) -> bool:
    seg.file.thread_exc = (seg.source.line, (seg.rank, seg.local_rank))
    return False


# "Exception in thread Thread-3 (prefetch):" above a traceback: threading.excepthook (CPython
# Lib/threading.py) reporting a thread that died of an exception; the rest of the process goes on
THREAD_RULE = Rule("exception.thread", r"Exception in thread [^\n]{1,120}:", _thread_died)


# "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x...>", "Exception ignored
# in atexit callback: ...", "Exception ignored while finalizing ...": printed by sys.unraisablehook
# (CPython Python/errors.c) for an exception nobody could catch; the interpreter goes on
UNRAISABLE_RULE = Rule("exception.ignored", r"Exception ignored (?:in|on|while|during)\b", _unraisable)


# --- a native crash's backtrace (UCX's handler: "[host:227:0:227] Caught signal 11 (Segmentation
# fault ...)" then "==== backtrace (tid:    227) ====" and " 1 0x000000000004d128 ompi_group_increment_
# proc_count()  .../ompi/group/group_init.c:229"): when its innermost frames are the communication
# library's own (Open MPI, NCCL/RCCL, c10d's process group), the library crashed in the process
_NATIVE_BT_HEADER = re.compile(r"==== backtrace \(tid:\s*\d+\) ====")
_NATIVE_FRAME = re.compile(r"\s{0,4}(?P<n>\d{1,3}) 0x[0-9a-f]{6,16} (?P<fn>[^\s(]{1,200})\(")
_COMM_FRAME_FN = re.compile(r"(?:ompi_|opal_|mca_|P?MPI_|ucp_|uct_|ucs_|nccl|rccl|c10d::ProcessGroup(?:MPI|NCCL|Gloo)::)")
NATIVE_FRAMES = 12  # frames of a backtrace read for the library it crashed in (the innermost ones)


def _native_bt_header(m: re.Match[str], seg: Segment) -> bool:
    seg.file.native_bt = (seg.source.line, False)
    return True


def _native_frame(m: re.Match[str], seg: Segment) -> bool:
    bt = getattr(seg.file, "native_bt", None)  # (a FileState pickled by an older version lacks it)
    fm = _NATIVE_FRAME.match(seg.body)
    if bt is None or fm is None or bt[1] or not 0 < seg.source.line - bt[0] <= NATIVE_FRAMES + 2:
        return False
    fn = fm.group("fn")
    if int(fm.group("n")) > NATIVE_FRAMES or not _COMM_FRAME_FN.match(fn) or fn.startswith(("ucs_debug", "ucs_handle_error")):
        return False  # (UCX's own error handler frames are how every crash it reports begins)
    seg.file.native_bt = (bt[0], True)
    seg.emit(EventKind.MATCH, failure="nccl_error", data={
        "exc_type": "native crash", "message": f"crashed inside the communication library: {fn}()", "native_crash": True})
    return True


NATIVE_BT_RULE = Rule("exception.native_bt", r"==== backtrace \(tid:", _native_bt_header)
NATIVE_FRAME_RULE = Rule("exception.native_frame", r"^\s{0,4}[0-9]{1,3} 0x[0-9a-f]{6,16} [^ (]{1,200}\(", _native_frame, on_raw=True)
# --- a CUDA check that prints its error string on the line below its header: llm.c's cudaCheck
# (``printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line, cudaGetErrorString(error))``) and the
# SGEMM-tutorial lineage's (``"[CUDA ERROR] at file %s(line %d):\n%s\n"``, some with the error's
# name first: ``cudaErrorMemoryAllocation: out of memory``); the process exits right after
_CUDA_CHECK_HEAD = re.compile(r"\[CUDA ERROR\] at file \S{1,200}?(?::\d{1,7}|\(line \d{1,7}\)):\s*")
_CUDA_CHECK_TEXT = re.compile(r"(?:cudaError\w{1,40}: )?(?P<text>out of memory|an illegal memory access was encountered"
                              r"|unspecified launch failure|misaligned address)\s*")


def _cuda_check_head(m: re.Match[str], seg: Segment) -> bool:
    if _CUDA_CHECK_HEAD.fullmatch(seg.body) is None:
        return False
    seg.file.cuda_check = seg.source.line
    return True


def _cuda_check_text(m: re.Match[str], seg: Segment) -> bool:
    head = getattr(seg.file, "cuda_check", None)  # (a FileState pickled by an older version lacks it)
    tm = _CUDA_CHECK_TEXT.fullmatch(seg.body)
    if head is None or tm is None or seg.source.line - head != 1:
        return False
    seg.file.cuda_check = None
    text = tm.group("text")
    failure = "cuda_oom" if text == "out of memory" else "cuda_illegal_memory_access"
    seg.emit(EventKind.MATCH, failure=failure, data={"exc_type": "CUDA error", "message": f"CUDA error: {text}", "cuda_check": True})
    return True


CUDA_CHECK_HEAD_RULE = Rule("exception.cuda_check_head", r"\[CUDA ERROR\] at file ", _cuda_check_head)
CUDA_CHECK_TEXT_RULE = Rule("exception.cuda_check_text", r"(?:out of memory|an illegal memory access was encountered"
                            r"|unspecified launch failure|misaligned address)[ \t\r]*$", _cuda_check_text)
RULES = [RANKMAP_RULE, BLOCK_RULE, NCCL_CHAIN_RULE, EXCEPTION_RULE]
