"""The status query: aperture.v1.ApertureStatus/GetRingState over a plain
grpcio channel, with the messages generated from
proto/aperture/v1/status.proto (aperture/v1/status_pb2.py, made by protoc
when the module is installed). No aperture policy is involved: the query's
own channel uses gRPC's default policy."""

import grpc

from aperture.v1 import status_pb2

METHOD = "/aperture.v1.ApertureStatus/GetRingState"


def get_ring_state(address, target_filter, max_endpoints, start_index,
                   omit_endpoints, timeout):
    request = status_pb2.GetRingStateRequest(
        target_filter=target_filter,
        max_endpoints=max_endpoints,
        start_index=start_index,
        omit_endpoints=omit_endpoints)
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(
            METHOD,
            request_serializer=status_pb2.GetRingStateRequest.SerializeToString,
            response_deserializer=status_pb2.GetRingStateResponse.FromString)
        return call(request, timeout=timeout)
