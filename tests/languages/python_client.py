"""A Python program on grpcio built on the system's gRPC core
(bazel/python-grpcio.sh): unary calls through the channel's service config.

Without --import it knows nothing of aperture (the policy comes from
LD_PRELOAD=libaperture.so and the coordinate from the environment); with
--import it loads the policy itself through the `aperture` module.

  python3 python_client.py TARGET SERVICE_CONFIG_JSON CALLS [options]
    --import              import aperture (loads libaperture.so) and register()
    --aio                 make the calls with grpc.aio (asyncio; not with
                          --status or --register-late)
    --coordinate I N      aperture.set_coordinate(I, N)   (implies --import)
    --status              serve this process's status and read it back with
                          aperture.status()               (implies --import)
    --api-errors          print the ApertureError of bad set_coordinate() calls
    --register-late       create a channel and call first, then register()
    --wait-ready          first wait for READY with
                          grpc.channel_ready_future(channel).result(timeout=5)
                          and print ready_ms=X (from the channel's creation)
                          or ready=timeout (not with --aio)

Prints `calls ok=N failed=M peers HOST=COUNT ...` (HOST from the server's
`hostname` initial metadata), `first_error=CODE: DETAILS` when a call
failed, and one `KEY=VALUE` line per option (library, status JSON,
api_error, register_error, ready_ms or ready). Exit status: 0 when no call
failed (and READY was reached when waited for), 1 otherwise, 2 on bad
usage.
"""

import json
import sys
import time

import grpc

METHOD = "/grpc.testing.TestService/EmptyCall"


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def parse(argv):
    if len(argv) < 3:
        usage()
    opts = {"target": argv[0], "config": argv[1], "import": False,
            "coordinate": None, "status": False, "api_errors": False,
            "register_late": False, "aio": False, "wait_ready": False}
    try:
        opts["calls"] = int(argv[2])
    except ValueError:
        usage()
    rest = argv[3:]
    while rest:
        flag = rest.pop(0)
        if flag == "--import":
            opts["import"] = True
        elif flag == "--aio":
            opts["aio"] = True
        elif flag == "--coordinate" and len(rest) >= 2:
            opts["coordinate"] = (int(rest.pop(0)), int(rest.pop(0)))
            opts["import"] = True
        elif flag == "--status":
            opts["status"] = opts["import"] = True
        elif flag == "--api-errors":
            opts["api_errors"] = opts["import"] = True
        elif flag == "--register-late":
            opts["register_late"] = opts["import"] = True
        elif flag == "--wait-ready":
            opts["wait_ready"] = True
        else:
            usage()
    if opts["aio"] and (opts["status"] or opts["register_late"] or opts["wait_ready"]):
        usage()
    return opts


def run_calls(channel, calls):
    stub = channel.unary_unary(METHOD)
    peers = {}
    ok = failed = 0
    first_error = None
    for _ in range(calls):
        try:
            _, call = stub.with_call(b"", timeout=10)
            host = dict(call.initial_metadata()).get("hostname", "?")
            peers[host] = peers.get(host, 0) + 1
            ok += 1
        except grpc.RpcError as e:
            if first_error is None:
                first_error = "%d: %s" % (e.code().value[0], e.details())
            failed += 1
    return ok, failed, peers, first_error


def run_calls_aio(target, options, calls):
    import asyncio

    async def run():
        peers = {}
        ok = failed = 0
        first_error = None
        async with grpc.aio.insecure_channel(target, options=options) as channel:
            stub = channel.unary_unary(METHOD)
            for _ in range(calls):
                try:
                    call = stub(b"", timeout=10)
                    await call
                    host = (await call.initial_metadata()).get("hostname", "?")
                    peers[host] = peers.get(host, 0) + 1
                    ok += 1
                except grpc.RpcError as e:
                    if first_error is None:
                        first_error = "%d: %s" % (e.code().value[0], e.details())
                    failed += 1
        return ok, failed, peers, first_error

    return asyncio.run(run())


def wait_ready(channel, start):
    """The usual start-up check: True once the channel is READY."""
    try:
        grpc.channel_ready_future(channel).result(timeout=5)
    except grpc.FutureTimeoutError:
        report("ready", "timeout")
        return False
    report("ready_ms", "%.3f" % ((time.monotonic() - start) * 1e3))
    return True


def plain(message):
    """A message as JSON-ready values (numbers stay numbers, enums are
    their numbers), every field present."""
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.type == field.TYPE_MESSAGE:
            if field.label == field.LABEL_REPEATED:
                value = [plain(v) for v in value]
            else:
                value = plain(value)
        elif field.label == field.LABEL_REPEATED:
            value = list(value)
        out[field.name] = value
    return out


def report(name, value):
    print("%s=%s" % (name, value))


def after_calls(opts, aperture, status_server):
    if opts["register_late"]:
        try:
            aperture.register()
            report("register_error", "none")
        except aperture.ApertureError as e:
            report("register_error", "%s %s" % (e.code_name, e))
    if status_server is not None:
        response = aperture.status(status_server.address)
        report("status", json.dumps(plain(response), sort_keys=True))


def main(argv):
    opts = parse(argv)
    aperture = None
    if opts["import"]:
        import aperture  # loads libaperture.so before the first channel
        report("library", aperture.library_path())
        if not opts["register_late"]:
            aperture.register()
        if opts["coordinate"] is not None:
            aperture.set_coordinate(*opts["coordinate"])
    if opts["api_errors"]:
        for index, count in ((3, 3), (0, 0), (0, 1000001)):
            try:
                aperture.set_coordinate(index, count)
                report("api_error", "none for (%d, %d)" % (index, count))
            except aperture.ApertureError as e:
                report("api_error", "%s %s" % (e.code_name, e))
    options = [("grpc.service_config", opts["config"])]
    not_ready = False
    status_server = aperture.start_status_server() if opts["status"] else None
    if opts["aio"]:
        ok, failed, peers, first_error = run_calls_aio(opts["target"], options, opts["calls"])
    else:
        start = time.monotonic()
        with grpc.insecure_channel(opts["target"], options=options) as channel:
            if opts["wait_ready"] and not wait_ready(channel, start):
                not_ready = True
            ok, failed, peers, first_error = run_calls(channel, opts["calls"])
            after_calls(opts, aperture, status_server)  # while the channel lives
    if status_server is not None:
        status_server.stop()
    print("calls ok=%d failed=%d peers%s" % (
        ok, failed, "".join(" %s=%d" % (h, peers[h]) for h in sorted(peers))))
    if first_error is not None:
        report("first_error", first_error)
    sys.stdout.flush()
    return 0 if failed == 0 and not not_ready else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
