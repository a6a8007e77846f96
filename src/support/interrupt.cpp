#include "support/interrupt.h"

#include <csignal>

namespace kf {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;  // SA_RESETHAND: the next one takes the default action
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa = {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocking poll or waitpid returns EINTR, so a wait notices at once.
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() {
  return g_signal != 0;
}

const char* interrupt_reason() {
  switch (g_signal) {
    case 0:
      return "";
    case SIGINT:
      return "interrupted (SIGINT)";
    case SIGTERM:
      return "interrupted (SIGTERM)";
    default:
      return "interrupted";
  }
}

bool clear_interrupt() {
  if (g_signal != SIGINT) return false;
  g_signal = 0;
  install_interrupt_handler();
  return true;
}

int interrupted_exit_code(int otherwise) {
  return g_signal != 0 ? 128 + g_signal : otherwise;
}

}  // namespace kf
