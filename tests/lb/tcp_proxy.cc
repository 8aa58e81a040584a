#include "tests/lb/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace aperture_test {
namespace {

constexpr int kPollMs = 10;  // how soon a freeze, thaw or stop is seen

sockaddr_in Loopback(int port) {
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Writes all of buf to fd (blocking socket); false on an error.
bool WriteAll(int fd, const char* buf, ssize_t n) {
  while (n > 0) {
    ssize_t w = send(fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    buf += w;
    n -= w;
  }
  return true;
}

}  // namespace

TcpProxy::TcpProxy(int backend_port) : backend_port_(backend_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) return;
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof(a);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    return;
  }
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stop_.store(true);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> pumps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string TcpProxy::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

void TcpProxy::AcceptLoop() {
  while (!stop_.load()) {
    pollfd p = {listen_fd_, POLLIN, 0};
    if (poll(&p, 1, kPollMs) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    accepted_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    pumps_.emplace_back([this, fd] { Pump(fd); });
  }
}

// One client connection: connects to the backend, then copies bytes both
// ways while not frozen, until either side closes or the proxy stops.
void TcpProxy::Pump(int client_fd) {
  int backend_fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = Loopback(backend_port_);
  if (backend_fd < 0 ||
      connect(backend_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    if (backend_fd >= 0) close(backend_fd);
    close(client_fd);
    return;
  }
  char buf[16384];
  bool open = true;
  while (open && !stop_.load()) {
    if (frozen_.load()) {
      // Read nothing: the bytes wait in the kernel, acknowledged.
      poll(nullptr, 0, kPollMs);
      continue;
    }
    pollfd p[2] = {{client_fd, POLLIN, 0}, {backend_fd, POLLIN, 0}};
    if (poll(p, 2, kPollMs) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      open = n > 0 && WriteAll(i == 0 ? backend_fd : client_fd, buf, n);
    }
  }
  close(client_fd);
  close(backend_fd);
}

}  // namespace aperture_test
