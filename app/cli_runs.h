#pragma once
// foveal-cli's runs on other machines: `train --target ssh://...|slurm[://...]` submits, `runs
// list|status|follow|stop|resume` follows and steers them (core/run/remote_run.h does the work).
#include <string>
#include <vector>

namespace foveal::app {

extern const char* kRunsUsage;

/// True when `train`'s arguments name a --target other than this machine.
bool wantsRemoteTrain(const std::vector<std::string>& args);
int runRemoteTrainCommand(const std::vector<std::string>& args);
int runRunsCommand(const std::vector<std::string>& args);

}  // namespace foveal::app
