# A Ruby program on Debian's ruby-grpc (which runs on the system's
# libgrpc) that knows nothing of aperture: it selects the LB policy only
# through the channel's service config. Under LD_PRELOAD=libaperture.so
# the config's "aperture" resolves to the preloaded policy.
#
#   ruby ruby_client.rb TARGET SERVICE_CONFIG_JSON CALLS
# Prints `calls ok=N failed=M peers HOST=COUNT ...` (HOST from the
# server's `hostname` initial metadata); exits 0 when no call failed.
require 'grpc'

if ARGV.length != 3 || ARGV[2].to_i <= 0
  warn 'usage: ruby ruby_client.rb TARGET SERVICE_CONFIG_JSON CALLS'
  exit 2
end
target, config, calls = ARGV
stub = GRPC::ClientStub.new(
  target, :this_channel_is_insecure,
  channel_args: { 'grpc.service_config' => config, 'grpc.use_local_subchannel_pool' => 1 }
)
raw = ->(bytes) { bytes }
peers = Hash.new(0)
ok = 0
failed = 0
calls.to_i.times do
  op = stub.request_response('/grpc.testing.TestService/EmptyCall', '', raw, raw,
                             return_op: true, deadline: Time.now + 10)
  op.execute
  peers[op.metadata['hostname'] || '?'] += 1
  ok += 1
rescue GRPC::BadStatus => e
  failed += 1
  warn "call failed: #{e.message}"
end
puts "calls ok=#{ok} failed=#{failed} peers" + peers.sort.map { |h, c| " #{h}=#{c}" }.join
$stdout.flush
# exit! skips the gem's at-exit shutdown, which can wait forever after a
# channel that gRPC refused to build (the unknown-policy control case).
exit!(failed.zero? ? 0 : 1)
