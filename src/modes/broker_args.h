// The run options that send a run's measurements to `kforge worker`s through Redis
// (docs/workers.md); RunEnv opens the broker's judge from them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kf {

// Judging on `kforge worker`s through Redis (broker/broker_judge.h) instead of on this machine.
struct BrokerArgs {
  std::string url;                 // redis://...; "": judge here
  std::string hardware;            // the workers' machine class; "": picked (broker/broker_judge.h)
  double wait_s = 300;             // how long jobs may wait with no worker of the class alive
  nlohmann::json to_json() const;  // the URL without its password
  static BrokerArgs from_json(const nlohmann::json& j);
};

}  // namespace kf
