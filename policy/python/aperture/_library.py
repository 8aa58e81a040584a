"""Finding and loading libaperture.so (ctypes) and declaring its C API.

The library registers the policy into the process's gRPC core when it is
loaded, so it has to be loaded before the first channel or server. Exactly
one copy may be in a process: two copies would register the name "aperture"
twice, which gRPC does not allow. The search therefore starts with a copy
already in the process (LD_PRELOAD, or loaded by someone else) and only then
looks for a file, in this order:

  1. $APERTURE_LIBRARY (a path; when set, nothing else is tried);
  2. next to this module: aperture/libaperture.so, then beside the package;
  3. where the Debian package puts it relative to where it puts this module
     (<root>/usr/lib/python3/dist-packages/aperture ->
     <root>/usr/lib/<multiarch>/libaperture.so), which also finds a package
     unpacked under another root;
  4. the package's install path, /usr/lib/<multiarch>/libaperture.so;
  5. the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache).
"""

import ctypes
import os
import sysconfig

ENV_VAR = "APERTURE_LIBRARY"
NAME = "libaperture.so"


class Error(ctypes.Structure):
    """struct aperture_error of aperture.h."""

    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 256)]


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _declare(lib):
    """Sets the C signatures of aperture.h on a loaded library."""
    err = ctypes.POINTER(Error)
    lib.aperture_register.argtypes = [err]
    lib.aperture_register.restype = ctypes.c_int
    lib.aperture_is_registered.argtypes = []
    lib.aperture_is_registered.restype = ctypes.c_int
    lib.aperture_set_coordinate.argtypes = [ctypes.c_uint32, ctypes.c_uint32, err]
    lib.aperture_set_coordinate.restype = ctypes.c_int
    lib.aperture_clear_coordinate.argtypes = []
    lib.aperture_clear_coordinate.restype = None
    lib.aperture_status_server_start.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), err]
    lib.aperture_status_server_start.restype = ctypes.c_int
    lib.aperture_status_server_port.argtypes = [ctypes.c_void_p]
    lib.aperture_status_server_port.restype = ctypes.c_int
    lib.aperture_status_server_stop.argtypes = [ctypes.c_void_p]
    lib.aperture_status_server_stop.restype = None
    return lib


def _file_of(function):
    """The file a loaded C function comes from (dladdr), or None."""
    try:
        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    if dladdr(ctypes.cast(function, ctypes.c_void_p), ctypes.byref(info)) == 0:
        return None
    name = info.dli_fname
    return os.path.realpath(os.fsdecode(name)) if name else None


def _in_process():
    """The process's global scope, where LD_PRELOAD puts the library, and
    the library's file, when it is there; else (None, None)."""
    try:
        process = ctypes.CDLL(None)
        function = process.aperture_register
    except (OSError, AttributeError):
        return None, None
    return process, _file_of(function) or "(in the process)"


def candidates():
    """The files tried when no copy is in the process and $APERTURE_LIBRARY
    is not set, in order; a bare name means the dynamic loader's search."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, NAME), os.path.join(os.path.dirname(here), NAME)]
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    if multiarch:
        tail = os.path.join("lib", "python3", "dist-packages", "aperture")
        if here.endswith(os.sep + tail):
            root_lib = here[: -len(tail)] + "lib"
            found.append(os.path.join(root_lib, multiarch, NAME))
        found.append(os.path.join("/usr/lib", multiarch, NAME))
    found.append(NAME)
    unique = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def _open(path):
    # RTLD_GLOBAL: a later search (another copy of this module) then finds
    # this copy in the process instead of loading a second one.
    return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


def load():
    """Loads the library. Returns (ctypes library, its file, None) or
    (None, None, a message saying what was tried and why it failed)."""
    process, preloaded = _in_process()
    if process is not None:
        return _declare(process), preloaded, None
    override = os.environ.get(ENV_VAR)
    if override:
        try:
            lib = _open(override)
        except OSError as e:
            return None, None, "%s=%s cannot be loaded: %s" % (ENV_VAR, override, e)
        return _declare(lib), _file_of(lib.aperture_register) or override, None
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            lib = _open(path)
            function = lib.aperture_register
        except (OSError, AttributeError) as e:
            tried.append("%s (%s)" % (path, e))
            continue
        return _declare(lib), _file_of(function) or path, None
    return None, None, (
        "%s not found (set %s to its path, or LD_PRELOAD it); tried: %s"
        % (NAME, ENV_VAR, "; ".join(tried)))
