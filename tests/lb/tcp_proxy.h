// A TCP proxy on 127.0.0.1 for gray-failure tests: it forwards bytes both
// ways between its clients and one backend port, until it is frozen. Frozen,
// it reads nothing from either side, so every byte a client sends stays in
// the kernel's buffers and is acknowledged by TCP, and nothing comes back:
// from the client's side the connection looks exactly like one to a
// process stopped with SIGSTOP (or a path that drops the answers). New
// connections are accepted while frozen (the kernel would do so for a
// stopped process) and held the same way. Thawed, everything held flows.
#ifndef APERTURE_TESTS_LB_TCP_PROXY_H
#define APERTURE_TESTS_LB_TCP_PROXY_H

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aperture_test {

class TcpProxy {
 public:
  // Listens on an ephemeral port of 127.0.0.1 and forwards to
  // 127.0.0.1:backend_port. port() is 0 when it could not listen.
  explicit TcpProxy(int backend_port);
  ~TcpProxy();  // closes every connection and joins its threads
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>"
  void Freeze(bool frozen) { frozen_.store(frozen); }
  // Client connections accepted so far.
  int accepted() const { return accepted_.load(); }

 private:
  void AcceptLoop();
  void Pump(int client_fd);

  const int backend_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::vector<std::thread> pumps_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace aperture_test

#endif  // APERTURE_TESTS_LB_TCP_PROXY_H
