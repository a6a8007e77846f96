// `kforge worker`: judges evaluation jobs from a Redis broker on this machine until SIGINT or
// SIGTERM (broker/worker.h; start-up on a workstation, Slurm and Kubernetes: docs/workers.md).
//
//   kforge worker --broker redis://10.0.0.5:6379 --name box1 --jobs 2
//   kforge workers --broker redis://10.0.0.5:6379     # who is alive, by class, and the queues
//
// One line per event on stderr. Exits 0 when stopped, 1 when Redis cannot be reached at the
// start or the machine probe fails. main.cpp registers it: add_worker_command(app).
#pragma once

#include <CLI/CLI.hpp>

#include "modes/broker_args.h"

namespace kf {

// Registers `worker` and `workers`.
void add_worker_command(CLI::App& app);

// --broker, --hardware and --broker-wait, for the commands that judge through a broker.
void add_broker_options(CLI::App* cmd, BrokerArgs& b);

}  // namespace kf
