"""Live rates of a fleet step: fio's own ETA replies, read as they pass to fio's client.

fio's client asks each server for its ETA about once a second whatever the output format
(``client.c``: ``fio_handle_clients`` calls ``request_client_etas``, which only
``--eta=never`` stops), and the server answers with its jobs' live rates
(``FIO_NET_CMD_ETA``, a ``struct jobs_eta``); but with JSON output the client drops every
reply (``client_display_thread_status`` calls ``display_thread_status`` only without
``FIO_OUTPUT_JSON``), so neither its stdout nor its JSON ever shows them.

A :class:`Relay` therefore carries the client's connection: ssdlab connects to the server
itself and hands fio's client a Unix socket instead, forwarding every byte unchanged both
ways and decoding a copy of the server's ETA replies. fio names a client in its JSON
(``hostname``, ``port``) and its log files (``NAME.HOSTNAME``) by the address it was given;
for a socket that is the socket's path and fio's default port, so the client is given a
socket named like the host in its working directory (the step's directory), which makes every
file it writes the same as a direct connection's. That is only possible for a server on fio's
default port, and for the servers of this machine's targets (``--target`` repeated), whose
client already connects through a link in the step's directory; other servers, and servers
that speak a protocol version whose ``jobs_eta`` layout ssdlab does not know, run without
live rates (the step's time-based progress).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from ..fio import FioStatus
from .hosts import DEFAULT_PORT, LOCAL_LINK, Host, LocalTarget

#: fio's command header (server.h ``struct fio_net_cmd``): version, opcode, flags, tag,
#: pdu_len, cmd_crc16, pdu_crc16; little-endian on the wire
FIO_HEADER = struct.Struct("<HHIQIHH")
FIO_NET_CMD_ETA = 9
#: ``struct jobs_eta`` by fio's protocol version (``FIO_SERVER_VER``; 97: fio 3.33): the
#: counts of jobs, m_rate, t_rate, rate (KiB/s), m_iops, t_iops, iops, pad, elapsed_sec,
#: eta_sec, then is_pow2, unit_base, sig_figs, files_open, nr_threads, pad2
_JOBS_ETA = {97: struct.Struct("<4I3Q3Q3Q3I3I3IIQQ6I")}
#: fio's ``eta_sec`` when it cannot tell (INT_MAX)
_ETA_UNKNOWN = 2**31 - 1
#: seconds to connect to the server (it has just answered the fleet's probe)
CONNECT_TIMEOUT_S = 10.0
#: seconds between looks whether the relay is still wanted while fio's client has not come
ACCEPT_POLL_S = 0.2


def parse_eta(version: int, payload: bytes) -> FioStatus | None:
    """A server's ETA reply as a :class:`FioStatus` (rates summed over directions); None
    for a protocol version of unknown layout or a payload too short for it."""
    layout = _JOBS_ETA.get(version)
    if layout is None or len(payload) < layout.size:
        return None
    fields = layout.unpack_from(payload)
    rate_kib, iops = fields[10:13], fields[19:22]
    elapsed, eta = fields[23], fields[24]
    known = eta != _ETA_UNKNOWN
    return FioStatus(
        percent=100 * elapsed / (elapsed + eta) if known and elapsed + eta else None,
        iops=float(sum(iops)),
        bw_bytes_s=float(sum(rate_kib) * 1024),
        eta_s=eta if known else None,
    )


class EtaReader:
    """Splits the server's byte stream into fio commands and reports each ETA reply; gives up
    for good (reports nothing more) at a protocol version of unknown layout."""

    def __init__(self, on_status: Callable[[FioStatus], None]):
        self._on_status = on_status
        self._buffer = bytearray()
        self.stopped = False

    def feed(self, data: bytes) -> None:
        if self.stopped:
            return
        self._buffer += data
        while len(self._buffer) >= FIO_HEADER.size:
            version, opcode, _, _, pdu_len, _, _ = FIO_HEADER.unpack_from(self._buffer)
            if version not in _JOBS_ETA:
                self.stopped = True
                self._buffer.clear()
                return
            end = FIO_HEADER.size + pdu_len
            if len(self._buffer) < end:
                return
            if opcode == FIO_NET_CMD_ETA and (
                status := parse_eta(version, bytes(self._buffer[FIO_HEADER.size : end]))
            ):
                self._on_status(status)
            del self._buffer[:end]


def relay_name(host: Host, step_dir: Path) -> str | None:
    """The socket name fio's client gets for ``host`` in ``step_dir`` (the host, so fio names
    it as a direct connection; for a target of this machine the link its step already has to
    its server, :data:`~.hosts.LOCAL_LINK`, which the relay's takes the place of), or None
    when no relay can look like one."""
    if isinstance(host, LocalTarget):
        return LOCAL_LINK if host.socket else None
    name = host.host
    if host.port != DEFAULT_PORT or name in {".", ".."} or "/" in name:
        return None
    return None if os.path.lexists(step_dir / name) else name


def _connect(host: Host) -> socket.socket:
    """A connection to ``host``'s fio server: its TCP port, or the Unix socket of a target
    of this machine."""
    if isinstance(host, LocalTarget):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.settimeout(CONNECT_TIMEOUT_S)
            server.connect(host.socket)
        except OSError:
            server.close()
            raise
        return server
    return socket.create_connection((host.host, host.port), CONNECT_TIMEOUT_S)


class Relay:
    """fio's client connection to ``host``, carried through a socket in ``step_dir``; ETA
    replies go to ``on_status``. ``address`` is what fio's ``--client`` takes: the relay's
    socket, or (no relay possible, or the server unreachable: fio then says why itself) the
    host's own address."""

    def __init__(self, host: Host, step_dir: Path, on_status: Callable[[FioStatus], None]):
        self.address = host.fio_address
        self._reader = EtaReader(on_status)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._tmp: str | None = None
        self._link: Path | None = None
        name = relay_name(host, step_dir)
        if name is None:
            return
        try:
            upstream = _connect(host)
            self._sockets.append(upstream)
            upstream.settimeout(None)
            self._tmp = tempfile.mkdtemp(prefix="ssdlab-live-")
            path = os.path.join(self._tmp, "s")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sockets.append(listener)
            listener.bind(path)
            listener.listen(1)
            listener.settimeout(ACCEPT_POLL_S)
            staged = step_dir / f".{name}.relay"  # then in place at once: a target of this
            staged.symlink_to(path)  # machine keeps its link to its server if this fails
            os.replace(staged, step_dir / name)
            self._link = step_dir / name
        except OSError:  # fio's client connects itself (and says why it cannot)
            self.close()
            return
        self.address = f"sock:{name}"
        self._start(self._accept, listener, upstream)

    def __enter__(self) -> Relay:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self, listener: socket.socket, upstream: socket.socket) -> None:
        """Wait for fio's client, then carry its connection both ways."""
        while not self._stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._unlink()
            client.settimeout(None)
            self._sockets.append(client)
            self._start(self._pump, client, upstream, None)
            self._pump(upstream, client, self._reader.feed)
            return

    @staticmethod
    def _pump(
        source: socket.socket, sink: socket.socket, tap: Callable[[bytes], None] | None
    ) -> None:
        """Forward ``source`` to ``sink`` until either end closes; ``tap`` reads a copy
        after each chunk is passed on."""
        try:
            while data := source.recv(65536):
                sink.sendall(data)
                if tap is not None:
                    try:
                        tap(data)
                    except Exception:  # a display's failure never stops fio's connection
                        tap = None
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            source.shutdown(socket.SHUT_RD)

    def _unlink(self) -> None:
        """Remove the socket and its name in the step's directory (fio's client has come,
        or will not)."""
        if self._link is not None:
            with contextlib.suppress(OSError):
                self._link.unlink()
            self._link = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def close(self) -> None:
        """After fio's client exited: nothing more to carry (the server sees the connection
        close, as when fio's client closes it); every reply the client read was reported."""
        self._stop.set()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join()
        for sock in self._sockets:
            sock.close()
        self._unlink()
