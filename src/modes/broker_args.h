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
  // A resumed run's broker: the stored one, with what was given again (a URL, perhaps with its
  // password; a class; a wait) in its place.
  BrokerArgs over(const BrokerArgs& stored) const {
    BrokerArgs out = stored;
    if (!url.empty()) out.url = url;
    if (!hardware.empty()) out.hardware = hardware;
    if (wait_s != BrokerArgs{}.wait_s) out.wait_s = wait_s;
    return out;
  }
};

}  // namespace kf
