"""Parses a GetRingStateResponse the way a strict proto3 client does:
Python's protobuf (Debian's python3-protobuf) on code that protoc generates
from the project's status.proto. proto3 strings must be UTF-8; this parser
refuses the whole message over one bad string.

usage: strict_parse.py PROTO_ROOT RESPONSE_FILE
Prints every string field of the response, one repr() a line; exits 1 when
the message is refused."""
import os
import subprocess
import sys
import tempfile


def main():
    proto_root, response = sys.argv[1], sys.argv[2]
    out = tempfile.mkdtemp()
    subprocess.run(["protoc", "-I" + proto_root, "--python_out=" + out,
                    "aperture/v1/status.proto"], check=True)
    sys.path.insert(0, out)
    from aperture.v1 import status_pb2  # generated just above
    from google.protobuf.message import DecodeError
    msg = status_pb2.GetRingStateResponse()
    try:
        msg.ParseFromString(open(response, "rb").read())
    except DecodeError as e:
        print("refused: %s" % e, file=sys.stderr)
        return 1
    for ring in msg.rings:
        for s in (ring.target, ring.mode, ring.last_status, ring.peer_target,
                  ring.fingerprint, ring.peer_fingerprint, ring.pick_metric,
                  ring.peer_keys):
            print(repr(s))
        for e in ring.endpoints:
            print(repr(e.address))
    return 0


if __name__ == "__main__":
    sys.exit(main())
