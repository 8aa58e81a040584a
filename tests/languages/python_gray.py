"""Stock gRPC servers (grpcio on the system core, gRPC's default settings,
a generic handler) with a seeded latency tail, and a client with the
aperture policy that calls them with deadlines inside the tail, may freeze
one of them (SIGSTOP) for a while, and reads its own status at the end.

  python3 python_gray.py serve NAME SHARE TAIL_MS SEED
      serves every method on 127.0.0.1 (ephemeral port), prints
      `listening 127.0.0.1:PORT pid PID`; the k-th call (arrival order) waits
      TAIL_MS when splitmix64(SEED + k) / 2^64 < SHARE (as the interop
      server's --tail-share, interop/testing/latency_tail.h); answers with
      initial metadata hostname=NAME. SIGTERM stops it.
  python3 python_gray.py client TARGET CONFIG DURATION_S CONCURRENCY DEADLINE_MS
                         [--freeze PID AT_S FOR_S]
      CONCURRENCY threads make unary calls for DURATION_S; with --freeze
      it sends PID SIGSTOP at AT_S and SIGCONT FOR_S later (and at exit).
      Prints one JSON line: ok, failed, by_code, hosts (answers per
      hostname) and, from aperture.status(), every endpoint's address,
      ejections, ejection_reason, health, failures and picks.
"""

import json
import os
import signal
import sys
import threading
import time

import grpc

METHOD = "/grpc.testing.TestService/EmptyCall"
MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def serve(name, share, tail_ms, seed):
    from concurrent import futures

    threshold = min(int(share * (1 << 64)), MASK) if share > 0 else 0
    lock = threading.Lock()
    count = [0]

    def answer(request, context):
        with lock:
            k = count[0]
            count[0] += 1
        if threshold and splitmix64(seed + k) < threshold:
            time.sleep(tail_ms / 1000.0)
        context.send_initial_metadata((("hostname", name),))
        return b""

    class Handler(grpc.GenericRpcHandler):
        def service(self, handler_call_details):
            return grpc.unary_unary_rpc_method_handler(answer)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    server.add_generic_rpc_handlers((Handler(),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print("listening 127.0.0.1:%d pid %d" % (port, os.getpid()))
    sys.stdout.flush()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    while not done.wait(0.2):
        pass
    server.stop(0.5).wait()
    return 0


def client(target, config, duration_s, concurrency, deadline_ms, freeze):
    import aperture

    aperture.register()
    status_server = aperture.start_status_server()
    channel = grpc.insecure_channel(target, options=[("grpc.service_config", config)])
    stub = channel.unary_unary(METHOD)
    lock = threading.Lock()
    totals = {"ok": 0, "failed": 0, "by_code": {}, "hosts": {}}
    end = time.monotonic() + duration_s

    def work():
        while time.monotonic() < end:
            try:
                _, call = stub.with_call(b"", timeout=deadline_ms / 1000.0)
                host = dict(call.initial_metadata()).get("hostname", "?")
                with lock:
                    totals["ok"] += 1
                    totals["hosts"][host] = totals["hosts"].get(host, 0) + 1
            except grpc.RpcError as e:
                code = e.code().name
                with lock:
                    totals["failed"] += 1
                    totals["by_code"][code] = totals["by_code"].get(code, 0) + 1

    frozen = []

    def thaw():
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    def freezer(pid, at_s, for_s):
        time.sleep(at_s)
        os.kill(pid, signal.SIGSTOP)
        frozen.append(pid)
        time.sleep(for_s)
        thaw()

    threads = [threading.Thread(target=work) for _ in range(concurrency)]
    if freeze is not None:
        threads.append(threading.Thread(target=freezer, args=freeze))
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        thaw()
    ring = aperture.status(status_server.address).rings[0]
    totals["endpoints"] = [
        {"address": e.address, "ejections": e.ejections,
         "ejection_reason": e.ejection_reason, "health": e.health,
         "failures": e.failures, "picks": e.picks}
        for e in ring.endpoints]
    totals["members_out"] = ring.members_out
    totals["max_members_out"] = ring.max_members_out
    channel.close()
    status_server.stop()
    print(json.dumps(totals, sort_keys=True))
    sys.stdout.flush()
    return 0


def main(argv):
    if len(argv) >= 5 and argv[0] == "serve":
        return serve(argv[1], float(argv[2]), int(argv[3]), int(argv[4]))
    if len(argv) >= 6 and argv[0] == "client":
        freeze = None
        if len(argv) == 10 and argv[6] == "--freeze":
            freeze = (int(argv[7]), float(argv[8]), float(argv[9]))
        elif len(argv) != 6:
            sys.stderr.write(__doc__)
            return 2
        return client(argv[1], argv[2], float(argv[3]), int(argv[4]), int(argv[5]), freeze)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
