"""A free TCP port on the loopback interface (rendezvous of local multi-process jobs)."""

from __future__ import annotations

import random
import socket

# Linux hands out source ports of outgoing connections from 32768-60999 (ip_local_port_range). A listening
# port picked there can be taken as a source port by any client (boto3, gloo, a browser) between our probe
# and torchrun's bind — seen as "address already in use" on a loaded machine. Ports below that range are
# only ever taken by something that binds them on purpose.
_LOW, _HIGH = 20000, 32767


def port_is_free(port: int) -> bool:
    """Nothing listens on this loopback port right now."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port nothing listens on right now, outside the range the OS gives outgoing connections."""
    for port in random.sample(range(_LOW, _HIGH + 1), 64):
        if port_is_free(port):
            return port
    with socket.socket() as sock:  # every probe taken: let the OS pick
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
