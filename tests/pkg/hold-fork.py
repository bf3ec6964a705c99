#!/usr/bin/env python3
# Runs PROGRAM under ptrace until it forks for the N-th time (with N.J: until
# the child of that fork forks for the J-th time), and holds that new process
# before it runs a single instruction of its own; every other process is let
# go untraced.  Then, by --mode:
#   stop    the held process is stopped for good (SIGSTOP, untraced): a child
#           that never finishes, whatever it was doing; with --syscalls N,
#           once it has made N system calls; with --until-write DATA, once
#           one write(2) of exactly DATA has returned (x86_64 and aarch64)
#   orphan  the held process's parent is killed (SIGKILL) before the held
#           process runs: it starts as an orphan (this program, with
#           --subreaper, is then its subreaper, as `glimpse` or a systemd
#           user manager can be for glimpse-pkgns)
# Writes the held process's pid to --pid-file; in orphan mode waits for it
# when it is ours (--subreaper) and writes its wait status ("exit N" or
# "signal N") to --status-file.  Exits 3, printing "cannot trace: WHY",
# where no process may trace another.  Ends as PROGRAM ended (its exit status, or
# killed by the same signal) once PROGRAM has ended.
# SPDX-License-Identifier: LGPL-2.1-or-later
import argparse, ctypes, os, signal, sys

PTRACE_CONT, PTRACE_DETACH, PTRACE_SYSCALL, PTRACE_SETOPTIONS = 7, 17, 24, 0x4200
PTRACE_O_TRACESYSGOOD = 0x1
PTRACE_GETEVENTMSG, PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4201, 0x4206, 0x4207
PTRACE_O_TRACEFORK = 0x2
PTRACE_GET_SYSCALL_INFO, PTRACE_SYSCALL_INFO_ENTRY = 0x420e, 1
SYS_WRITE = {"x86_64": 1, "aarch64": 64}
PTRACE_EVENT_FORK, PTRACE_EVENT_STOP = 1, 128
PR_SET_CHILD_SUBREAPER = 36
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req, pid, addr=0, data=0):
    if libc.ptrace(req, pid, addr, data) == -1:
        e = ctypes.get_errno()
        raise OSError(e, "ptrace %#x of %d: %s" % (req, pid, os.strerror(e)))


def describe(st):
    if os.WIFEXITED(st):
        return "exit %d" % os.WEXITSTATUS(st)
    return "signal %d" % os.WTERMSIG(st)


ap = argparse.ArgumentParser()
ap.add_argument("--fork", required=True, help="N or N.J")
ap.add_argument("--mode", choices=("stop", "orphan"), default="stop")
ap.add_argument("--subreaper", action="store_true")
ap.add_argument("--syscalls", type=int, default=0)
ap.add_argument("--until-write")
ap.add_argument("--pid-file", required=True)
ap.add_argument("--status-file")
ap.add_argument("program", nargs=argparse.REMAINDER)
a = ap.parse_args()
path = [int(x) for x in a.fork.split(".")]
if a.until_write is not None and os.uname().machine not in SYS_WRITE:
    print("cannot trace: --until-write knows no write(2) number on %s" % os.uname().machine)
    sys.exit(3)
prog = a.program[1:] if a.program[:1] == ["--"] else a.program
# (glimpse forwards Ctrl-C and SIGTERM to its child's group, this program
# included: they are PROGRAM's to act on)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if a.subreaper:
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

r, w = os.pipe()
main = os.fork()
if main == 0:
    os.close(w)
    os.read(r, 1)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.execvp(prog[0], prog)
os.close(r)
try:
    ptrace(PTRACE_SEIZE, main, 0, PTRACE_O_TRACEFORK)
except OSError as e:
    # (Yama's ptrace_scope 3: no process may trace another, not even root's)
    print("cannot trace: %s" % e)
    os.kill(main, signal.SIGKILL)
    sys.exit(3)
os.write(w, b"g")
os.close(w)

traced = {main}          # processes we trace
forks = {main: 0}        # forks seen per process on the path
on_path = {main: 0}      # depth on the path
parent_of = {}
stopped_early = set()    # new children whose first stop came before their parent's fork event
held = None
main_status = None


def first_stop(pid):
    """PID, a new child, is in its first stop: on the path it goes on traced,
    the held one stays, any other is let go"""
    if pid == held:
        return
    if pid in on_path:
        ptrace(PTRACE_CONT, pid)
    else:
        ptrace(PTRACE_DETACH, pid)
        traced.discard(pid)


held_stopped = False
while held is None or not held_stopped:
    pid, st = os.waitpid(-1, WALL)
    if not os.WIFSTOPPED(st):
        traced.discard(pid)
        if pid == main:
            main_status = st
            sys.stderr.write("hold-fork: %s ended before fork %s\n" % (prog[0], a.fork))
            break
        continue
    event = st >> 16
    if event == PTRACE_EVENT_FORK:
        child = ctypes.c_ulong()
        ptrace(PTRACE_GETEVENTMSG, pid, 0, ctypes.addressof(child))
        child = child.value
        parent_of[child] = pid
        traced.add(child)
        if pid in on_path:
            forks[pid] += 1
            depth = on_path[pid]
            if forks[pid] == path[depth]:
                if depth + 1 == len(path):
                    held = child
                else:
                    on_path[child] = depth + 1
                    forks[child] = 0
        if child in stopped_early:
            stopped_early.discard(child)
            if child == held:
                held_stopped = True
            else:
                first_stop(child)
        ptrace(PTRACE_CONT, pid)
    elif pid not in traced:
        stopped_early.add(pid)
    elif event == PTRACE_EVENT_STOP:
        if pid == held:
            held_stopped = True
        else:
            first_stop(pid)
    else:
        ptrace(PTRACE_CONT, pid, 0, os.WSTOPSIG(st))

if held is not None:
    with open(a.pid_file, "w") as f:
        f.write("%d\n" % held)
    # every other traced process goes on untraced (and what they fork meanwhile)
    for pid in traced - {held}:
        try:
            ptrace(PTRACE_INTERRUPT, pid)
        except OSError:
            pass
    traced.discard(held)
    done = set()
    while traced or stopped_early:
        pid, st = os.waitpid(-1, WALL)
        if not os.WIFSTOPPED(st):
            traced.discard(pid)
            if pid == main:
                main_status = st
            continue
        event = st >> 16
        if event == PTRACE_EVENT_FORK:
            child = ctypes.c_ulong()
            ptrace(PTRACE_GETEVENTMSG, pid, 0, ctypes.addressof(child))
            if child.value in stopped_early:
                stopped_early.discard(child.value)
                ptrace(PTRACE_DETACH, child.value)
            elif child.value not in done:
                traced.add(child.value)
        ptrace(PTRACE_DETACH, pid, 0, 0 if event else os.WSTOPSIG(st))
        traced.discard(pid)
        done.add(pid)
    if a.mode == "stop":
        ptrace(PTRACE_SETOPTIONS, held, 0, PTRACE_O_TRACESYSGOOD)
        stops = sig = 0
        want = a.until_write.encode() if a.until_write is not None else None
        written = False   # (--until-write: the write seen at its entry)
        while stops < 2 * a.syscalls if want is None else True:
            ptrace(PTRACE_SYSCALL, held, 0, sig)
            pid, st = os.waitpid(held, WALL)
            sig = 0
            if not os.WIFSTOPPED(st):
                sys.stderr.write("hold-fork: the held process ended (%s)\n" % describe(st))
                break
            if os.WSTOPSIG(st) == signal.SIGTRAP | 0x80:
                stops += 1
                if want is None:
                    continue
                info = ctypes.create_string_buffer(88)
                ptrace(PTRACE_GET_SYSCALL_INFO, held, ctypes.sizeof(info), ctypes.addressof(info))
                if info.raw[0] != PTRACE_SYSCALL_INFO_ENTRY:
                    if written:
                        break   # (its return)
                    continue
                nr, buf, count = (int.from_bytes(info.raw[o:o + 8], sys.byteorder) for o in (24, 40, 48))
                if nr == SYS_WRITE[os.uname().machine] and count == len(want):
                    with open("/proc/%d/mem" % held, "rb", buffering=0) as m:
                        written = os.pread(m.fileno(), count, buf) == want
            elif (st >> 16) == 0:
                sig = os.WSTOPSIG(st)   # (a signal for it: delivered as it goes on)
        os.kill(held, signal.SIGSTOP)
        ptrace(PTRACE_DETACH, held)
    else:
        os.kill(parent_of[held], signal.SIGKILL)
        if parent_of[held] == main and main_status is None:
            main_status = os.waitpid(main, WALL)[1]
        else:
            # (not ours: wait until it is gone)
            while os.path.exists("/proc/%d" % parent_of[held]):
                try:
                    with open("/proc/%d/stat" % parent_of[held]) as f:
                        if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                            break
                except OSError:
                    break
                os.sched_yield()
        ptrace(PTRACE_DETACH, held)
        if a.subreaper:
            st = os.waitpid(held, 0)[1]
            if a.status_file:
                with open(a.status_file, "w") as f:
                    f.write(describe(st) + "\n")

if main_status is None:
    main_status = os.waitpid(main, 0)[1]
if os.WIFSIGNALED(main_status):
    # (killed by a signal as PROGRAM was, for whoever waits for us)
    sig = os.WTERMSIG(main_status)
    if sig not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(128 + sig)
sys.exit(os.WEXITSTATUS(main_status))
