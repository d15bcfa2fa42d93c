#!/usr/bin/env python3
"""Strangers at the TCP listeners of a running oxmpi job (c_tests/intruders.sh).

Usage: intruders.py DIR OTHER_JOBID OTHER_SECRET

DIR holds pid.0, pid.1 (the ranks' pids, written once they are in the job's
first epoch); this creates DIR/go when every stranger is in place (the job
then exchanges messages) and DIR/done once they are all dealt with (the job
then ends). OTHER_JOBID and OTHER_SECRET are the credentials of another
job, whose handshake is replayed here.

Each stranger connects to each rank's listening port (found through
/proc: the sockets the rank holds in state LISTEN). A rank must close every
one of them without sending it a single byte: at once for what can never
be a hello, after its handshake time (10 s from accept) for one that stays
silent or trickles one byte a second. Prints `ok - ...`/`not ok - ...` per
stranger and one REPORT row each (c_tests/report.bash); exits 1 if any rank
sent a stranger anything or left one open.
"""

import os
import socket
import struct
import sys
import time

HANDSHAKE_TIMEOUT = 10.0  # transport/tcp/mod.rs HANDSHAKE_TIMEOUT
PATIENCE = HANDSHAKE_TIMEOUT + 20.0


def job_hash(job_id):
    """FNV-1a 64 of the sanitized job id (transport/tcp/handshake.rs)."""
    h = 0xCBF29CE484222325
    for b in job_id.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def sanitized(job_id):
    """The job id as core/process.rs uses it."""
    return "".join(c if (c.isascii() and c.isalnum()) or c == "-" else "_" for c in job_id)[:80]


def hello(job_id, epoch, secret, sender, receiver):
    s = secret.encode()[:64]
    return (
        b"OXMPITCP"
        + struct.pack("<IIIIQQ", 1, sender, receiver, len(s), epoch, job_hash(sanitized(job_id)))
        + s.ljust(64, b"\0")
    )


def listening_ports(pid):
    """The (address, port) pairs process `pid` listens on over IPv4."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = []
    with open(f"/proc/{pid}/net/tcp") as table:
        for line in table.read().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:
                addr, port = local.split(":")
                ip = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
                found.append((ip, int(port, 16)))
    return found


def environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv]
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


class Stranger:
    """One connection to a rank that is not a peer."""

    def __init__(self, rank, addr, what, first, trickle=b"", patient=False):
        self.rank, self.what = rank, what
        self.trickle = bytearray(trickle)  # sent one byte a second afterwards
        self.patient = patient  # may be closed only at the handshake timeout
        self.sock = socket.create_connection(addr, timeout=5)
        if first:
            self.sock.sendall(first)
        self.sock.setblocking(False)
        self.opened = time.monotonic()
        self.next_byte = self.opened + 1.0
        self.closed_after = None
        self.received = 0
        self.trickled = 0

    def poll(self, now):
        """Notes a close by the rank (or bytes from it); trickles a byte."""
        if self.closed_after is not None:
            return
        try:
            data = self.sock.recv(4096)
            if data:
                self.received += len(data)
            else:
                self.closed_after = now - self.opened
        except BlockingIOError:
            pass
        except OSError:  # reset
            self.closed_after = now - self.opened
        if self.closed_after is None and self.trickle and now >= self.next_byte:
            try:
                self.sock.send(bytes(self.trickle[:1]))
                del self.trickle[:1]
                self.trickled += 1
                self.next_byte = now + 1.0
            except BlockingIOError:
                pass
            except OSError:
                self.closed_after = now - self.opened


def main():
    work, other_job, other_secret = sys.argv[1:4]
    pids = [int(open(os.path.join(work, f"pid.{r}")).read()) for r in (0, 1)]
    job_id = environ(pids[0]).get("OXMPI_JOBID", "")
    strangers = []
    for rank, pid in enumerate(pids):
        ports = listening_ports(pid)
        if not ports:
            print(f"not ok - rank {rank} (pid {pid}) listens on no IPv4 TCP port")
            return 1
        other = 1 - rank
        for addr in ports:
            strangers += [
                Stranger(rank, addr, "an HTTP request", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                Stranger(rank, addr, "4 KiB of random bytes", os.urandom(4096)),
                Stranger(
                    rank,
                    addr,
                    "another job's handshake, replayed",
                    hello(other_job, 1, other_secret, other, rank),
                ),
                Stranger(
                    rank,
                    addr,
                    "this job's id with a guessed secret",
                    hello(job_id, 1, os.urandom(16).hex(), other, rank),
                ),
                Stranger(
                    rank,
                    addr,
                    "another job's handshake, then a frame",
                    hello(other_job, 1, other_secret, other, rank) + struct.pack("<I", 8) + b"injected",
                ),
                Stranger(rank, addr, "half-open: connected, silent", b"", patient=True),
                Stranger(
                    rank,
                    addr,
                    "slow loris: a hello, one byte a second",
                    b"",
                    trickle=hello(job_id, 1, os.urandom(16).hex(), other, rank),
                    patient=True,
                ),
            ]
    # Half a hello, then gone: nothing to observe but that the job goes on.
    for pid in pids:
        for addr in listening_ports(pid):
            with socket.create_connection(addr, timeout=5) as s:
                s.sendall(hello(job_id, 1, "x", 0, 1)[:30])
    open(os.path.join(work, "go"), "w").close()
    start = time.monotonic()  # the ranks accept connections from now on
    while time.monotonic() - start < PATIENCE:
        now = time.monotonic()
        for s in strangers:
            s.poll(now)
        if all(s.closed_after is not None for s in strangers):
            break
        time.sleep(0.05)
    open(os.path.join(work, "done"), "w").close()
    errors = 0
    for s in strangers:
        name = f"rank {s.rank}: {s.what}"
        if s.received:
            verdict = f"not ok - {name}: the rank sent it {s.received} bytes"
        elif s.closed_after is None:
            verdict = f"not ok - {name}: still open after {PATIENCE:.0f} s"
        elif s.patient and s.closed_after < HANDSHAKE_TIMEOUT - 1.0:
            verdict = f"not ok - {name}: closed after {s.closed_after:.1f} s, before the handshake time"
        else:
            verdict = f"ok - {name}"
        print(verdict)
        if verdict.startswith("not ok"):
            errors += 1
        happened = (
            f"closed by the rank {s.opened + s.closed_after - start:.1f} s after it resumed, "
            f"{s.received} bytes sent to it"
            if s.closed_after is not None
            else f"still open after {PATIENCE:.0f} s"
        )
        if s.trickled:
            happened += f" ({s.trickled} bytes trickled in)"
        left = "nothing" if s.closed_after is not None else "an open connection"
        print(f"REPORT|attack|TCP transport, {s.what} (rank {s.rank})|{happened}|{left}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
