// `kforge worker`: judges evaluation jobs from Redis on this machine.
//
//   run_worker({.url = *RedisUrl::parse("redis://127.0.0.1:6379"), .name = "box1", .jobs = 2});
//
// Design notes.
// - Hardware class. The worker's class is its machine fingerprint (harness/machine.h): it reads
//   only the stream of that class, so a job is judged only on the hardware it was published
//   for, and it registers its machine (kforge:worker:NAME, with a TTL its heartbeat refreshes)
//   so that a coordinator can pick a class and generate code for it.
// - Threads. `jobs` threads each take a job, fetch its task once (kforge:task:HASH, unpacked
//   under the cache folder and checked against its hash), compile the candidate, then judge it
//   holding the machine's timing lock (a file lock in the cache folder, shared by every worker
//   process on the machine): compiles overlap, timings never do.
// - Heartbeats. Every `heartbeat_s` the worker refreshes its registration and resets the idle
//   time of the jobs it holds (XCLAIM to itself), so a job is reclaimed only from a worker that
//   stopped answering: idle past `reclaim_after_s`, another worker takes it over (XAUTOCLAIM),
//   and past kMaxDeliveries deliveries it is answered with a crash verdict saying so.
// - Results. A result is written once (HSETNX on the coordinator's results hash), announced on
//   its done stream, and only then acknowledged: a worker that dies in between leaves the job
//   pending, the next one judges it again, and the coordinator keeps the first result.
// - A job that cannot be read is answered with an error when its id and scope can be read, and
//   kept on kforge:dead:CLASS with the reason either way; the worker goes on.
// - Stopping. SIGINT or SIGTERM: a job being judged is put back on the stream for another
//   worker (its measurement is discarded), the registration is removed, and the worker exits.
#pragma once

#include <functional>
#include <string>

#include "broker/redis.h"
#include "support/status.h"

namespace kf::broker {

struct WorkerOptions {
  RedisUrl url;
  std::string name;  // "": HOSTNAME-PID
  int jobs = 1;      // jobs taken at once (their compiles overlap; timings never do)
  std::string cxx = "g++";
  double heartbeat_s = 2;
  double reclaim_after_s = 30;  // a pending job this long without a heartbeat is taken over
  double connect_timeout_s = 5;
  int max_jobs = 0;                             // stop after this many results (0: until stopped)
  std::function<void(const std::string&)> log;  // one line per event; may be empty
};

// Runs until interrupted (or max_jobs). Fails when Redis cannot be reached at the start or the
// machine probe fails; a lost connection later is retried until interrupted.
Status run_worker(const WorkerOptions& o);

// The worker's default name: the host name and the process id.
std::string default_worker_name();

}  // namespace kf::broker
