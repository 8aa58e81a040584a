"""aperture: gRPC C-core's deterministic-aperture LB policy, from Python.

Importing the module loads libaperture.so (see aperture._library for where
it looks), and loading the library registers the policy into the process's
gRPC core, so import it before the first channel or server. That needs a
grpcio whose Cython extension links the system's shared core
(libgrpc.so.29), as bazel/python-grpcio.sh builds it: grpcio wheels from
package indexes carry their own copy of the core, which never sees the
policy (docs/languages.md).

    import json, grpc, aperture
    aperture.register()             # ApertureError when it cannot
    aperture.set_coordinate(3, 40)  # this process is client 3 of 40
    channel = grpc.insecure_channel(target, options=[(
        "grpc.service_config",
        json.dumps({"loadBalancingConfig": [{"aperture": {"minAperture": 12}}]}))])
    server = aperture.start_status_server("127.0.0.1:0")
    rings = aperture.status(server.address).rings

Every failure of the C API raises ApertureError with the C message.
"""

import ctypes

from aperture import _library

__all__ = [
    "ApertureError",
    "StatusServer",
    "clear_coordinate",
    "is_registered",
    "library_path",
    "register",
    "set_coordinate",
    "start_status_server",
    "status",
]

# aperture_status of aperture.h.
OK = 0
EINVAL = -1
ERANGE = -2
ENOMEM = -3
ESTATE = -4
EUNAVAIL = -5
EINTERNAL = -6

_CODE_NAMES = {
    OK: "APERTURE_OK",
    EINVAL: "APERTURE_EINVAL",
    ERANGE: "APERTURE_ERANGE",
    ENOMEM: "APERTURE_ENOMEM",
    ESTATE: "APERTURE_ESTATE",
    EUNAVAIL: "APERTURE_EUNAVAIL",
    EINTERNAL: "APERTURE_EINTERNAL",
}

_UINT32_MAX = 2**32 - 1


class ApertureError(Exception):
    """A failure of libaperture's C API.

    str() is the C message (aperture_error.message); `code` is the
    aperture_status (negative) and `code_name` its name, e.g.
    "APERTURE_EINVAL". A library that cannot be found or loaded is
    APERTURE_EUNAVAIL.
    """

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def code_name(self):
        return _CODE_NAMES.get(self.code, str(self.code))

    def __repr__(self):
        return "ApertureError(%s, %r)" % (self.code_name, self.message)


# Loaded at import: the library's constructor registers the policy unless
# APERTURE_NO_AUTOREGISTER is set. A failure is kept and raised by the
# first function that needs the library.
_lib, _path, _load_error = _library.load()


def _require():
    if _lib is None:
        raise ApertureError(EUNAVAIL, _load_error)
    return _lib


def _check(rc, err):
    if rc != OK:
        raise ApertureError(rc, err.message.decode("utf-8", "replace"))


def _uint32(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, got %r" % (name, value))
    if not 0 <= value <= _UINT32_MAX:
        raise ValueError("%s must be in [0, %d], got %d" % (name, _UINT32_MAX, value))
    return value


def library_path():
    """The file of the loaded libaperture.so; ApertureError when none."""
    _require()
    return _path


def register():
    """Registers the policy (aperture_register). Idempotent; a no-op when
    loading the library already did it. Raises ApertureError: EUNAVAIL
    when no library could be loaded, ESTATE when gRPC already built its
    configuration (a channel or server was created first)."""
    err = _library.Error()
    _check(_require().aperture_register(ctypes.byref(err)), err)


def is_registered():
    """Whether the policy is (or, before gRPC builds its configuration,
    will be) in gRPC's configuration."""
    return bool(_require().aperture_is_registered())


def set_coordinate(index, count):
    """This process is peer `index` of `count` (0 <= index < count <=
    1000000) for channels whose config and channel args give no coordinate
    (aperture_set_coordinate). Applies to live channels and later ones.
    Raises ApertureError (EINVAL, ERANGE) with the C message."""
    index = _uint32("index", index)
    count = _uint32("count", count)
    err = _library.Error()
    _check(_require().aperture_set_coordinate(index, count, ctypes.byref(err)), err)


def clear_coordinate():
    """Forgets the coordinate set by set_coordinate()."""
    _require().aperture_clear_coordinate()


class StatusServer(object):
    """libaperture's admin server for this process's status service
    (aperture.v1.ApertureStatus, grpc.health.v1.Health). Stop it with
    stop(), or use it as a context manager."""

    def __init__(self, lib, handle, host):
        self._lib = lib
        self._handle = handle
        self.port = lib.aperture_status_server_port(handle)
        self.address = "%s:%d" % (host, self.port)

    def stop(self):
        """Shuts the server down (aperture_status_server_stop); idempotent."""
        if self._handle is not None:
            self._lib.aperture_status_server_stop(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def start_status_server(address="127.0.0.1:0"):
    """Starts serving this process's status at `address` ("host:port";
    port 0 picks a free one; the default is loopback only). Returns a
    StatusServer whose `address` aperture.status() can query. Raises
    ApertureError (EINVAL, EUNAVAIL when the address cannot be bound)."""
    if not isinstance(address, str) or not address:
        raise TypeError("address must be a non-empty str, got %r" % (address,))
    lib = _require()
    handle = ctypes.c_void_p()
    err = _library.Error()
    _check(lib.aperture_status_server_start(address.encode(), ctypes.byref(handle),
                                            ctypes.byref(err)), err)
    host = address.rsplit(":", 1)[0] if ":" in address else address
    if host in ("0.0.0.0", "[::]", ""):
        host = "127.0.0.1"
    return StatusServer(lib, handle, host)


def status(address, target_filter="", max_endpoints=0, start_index=0,
           omit_endpoints=False, timeout=10.0):
    """Calls aperture.v1.ApertureStatus/GetRingState at `address`
    ("host:port": this process's StatusServer or any other process's) and
    returns the aperture.v1.GetRingStateResponse (one RingState per
    aperture channel; proto/aperture/v1/status.proto says what each field
    means). The arguments are the request's fields. Raises grpc.RpcError
    when the call fails. Needs python3-protobuf."""
    from aperture import _status
    return _status.get_ring_state(address, target_filter, max_endpoints,
                                  start_index, omit_endpoints, timeout)
