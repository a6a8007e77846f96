// network_socket — opens a TCP socket (socket(AF_INET, SOCK_STREAM, 0)), tries to connect to
// 127.0.0.1:8080 (e.g. a local kforge server, or to exfiltrate/receive data), then also tries an
// AF_UNIX socket, and finally computes the correct result whatever happened.
// Expected verdict: forbidden ("socket"). No network of any family is allowed; the judge must
// record the attempt itself (socket() failing with EPERM would otherwise leave a correct C and an
// ok verdict). socketpair and io_uring are other routes to the same thing.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0) {
    sockaddr_in addr;
    std::memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(8080);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const char req[] = "GET / HTTP/1.0\r\n\r\n";
      ssize_t w = write(fd, req, sizeof req - 1);
      (void)w;
    }
    close(fd);
  }
  int ufd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (ufd >= 0) close(ufd);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
