#include "train/distributed.h"

#include <torch/torch.h>
#include <cstdlib>

#include "base/error.h"

#ifdef FOVEAL_WITH_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace foveal::core::train {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int envInt(const char* name, const std::string& value) {
  size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used != value.size() || n < 0)
    throw Error(std::string("environment: ") + name + "=\"" + value +
                "\" is not a non-negative whole number");
  return n;
}

}  // namespace

std::optional<DistributedOptions> DistributedOptions::fromEnvironment() {
  const auto world = env("WORLD_SIZE");
  if (!world) return std::nullopt;
  DistributedOptions o;
  o.worldSize = envInt("WORLD_SIZE", *world);
  if (o.worldSize <= 1) return std::nullopt;
  const auto rank = env("RANK");
  if (!rank) throw Error("environment: WORLD_SIZE is set but RANK is not");
  o.rank = envInt("RANK", *rank);
  if (o.rank >= o.worldSize)
    throw Error("environment: RANK=" + *rank + " is outside WORLD_SIZE=" + *world);
  o.masterAddr = env("MASTER_ADDR").value_or("127.0.0.1");
  if (const auto port = env("MASTER_PORT")) o.masterPort = envInt("MASTER_PORT", *port);
  if (o.masterPort < 1 || o.masterPort > 65535)
    throw Error("environment: MASTER_PORT=" + std::to_string(o.masterPort) + " is not a port");
  if (const auto local = env("LOCAL_RANK")) o.localRank = envInt("LOCAL_RANK", *local);
  return o;
}

#ifdef FOVEAL_WITH_C10D

namespace {

// The store's classic backend. LibTorch 2.4 and later default to a libuv one, which Debian 13's
// LibTorch 2.6 is built without ("use_libuv was requested but PyTorch was build without libuv
// support"); LibTorch before 2.2 (Debian 12's 1.13) has no such option and only the classic one.
template <typename Options>
auto useClassicStore(Options& o, int) -> decltype(o.useLibUV = false, void()) {
  o.useLibUV = false;
}
template <typename Options>
void useClassicStore(Options&, long) {}

}  // namespace

bool distributedAvailable() { return true; }

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
};

ProcessGroup::ProcessGroup(const DistributedOptions& o) : m_options(o), d(new Impl) {
  const std::string where = o.masterAddr + ":" + std::to_string(o.masterPort);
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(o.masterPort);
    so.isServer = o.rank == 0;
    so.numWorkers = static_cast<size_t>(o.worldSize);
    so.waitWorkers = true;
    so.timeout = o.timeout;
    useClassicStore(so, 0);
    d->store = c10::make_intrusive<c10d::TCPStore>(o.masterAddr, so);
    auto options = c10d::ProcessGroupGloo::Options::create(o.timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(o.masterAddr));
    options->threads = 2;
    d->group = c10::make_intrusive<c10d::ProcessGroupGloo>(d->store, o.rank, o.worldSize, options);
  } catch (const std::exception& e) {
    throw Error("distributed rendezvous at " + where + " (rank " + std::to_string(o.rank) + " of " +
                std::to_string(o.worldSize) + ") failed: " + e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::broadcast(std::vector<at::Tensor>& tensors, int root) {
  for (auto& t : tensors) {
    if (!t.defined()) continue;
    std::vector<at::Tensor> one{t};
    c10d::BroadcastOptions bo;
    bo.rootRank = root;
    d->group->broadcast(one, bo)->wait();
  }
}

void ProcessGroup::allReduceMean(std::vector<at::Tensor>& tensors, size_t bucketBytes) {
  // Flatten into buckets, reduce every bucket asynchronously, then copy back: few large messages
  // instead of one per parameter (what DDP's reducer does).
  std::vector<std::vector<size_t>> buckets(1);
  size_t bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) continue;
    const size_t b = static_cast<size_t>(tensors[i].numel()) * tensors[i].element_size();
    if (!buckets.back().empty() && bytes + b > bucketBytes) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(i);
    bytes += b;
  }
  std::vector<at::Tensor> flats;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (const auto& bucket : buckets) {
    if (bucket.empty()) continue;
    std::vector<at::Tensor> parts;
    for (size_t i : bucket) parts.push_back(tensors[i].reshape({-1}));
    std::vector<at::Tensor> flat{torch::cat(parts)};
    works.push_back(d->group->allreduce(flat));
    flats.push_back(flat[0]);
  }
  for (auto& w : works) w->wait();
  size_t k = 0;
  for (const auto& bucket : buckets) {
    if (bucket.empty()) continue;
    auto flat = flats[k++].div_(static_cast<double>(m_options.worldSize));
    int64_t offset = 0;
    for (size_t i : bucket) {
      const int64_t n = tensors[i].numel();
      tensors[i].copy_(flat.narrow(0, offset, n).view_as(tensors[i]));
      offset += n;
    }
  }
}

std::vector<double> ProcessGroup::allReduceSum(const std::vector<double>& values) {
  std::vector<at::Tensor> t{torch::tensor(values, torch::kDouble)};
  d->group->allreduce(t)->wait();
  auto acc = t[0].accessor<double, 1>();
  std::vector<double> out(values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = acc[static_cast<int64_t>(i)];
  return out;
}

void ProcessGroup::barrier() { d->group->barrier()->wait(); }

#else

bool distributedAvailable() { return false; }

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const DistributedOptions& o) : m_options(o) {
  throw Error("distributed training needs LibTorch's c10d with Gloo; this build has none");
}
ProcessGroup::~ProcessGroup() = default;
void ProcessGroup::broadcast(std::vector<at::Tensor>&, int) {}
void ProcessGroup::allReduceMean(std::vector<at::Tensor>&, size_t) {}
std::vector<double> ProcessGroup::allReduceSum(const std::vector<double>& v) { return v; }
void ProcessGroup::barrier() {}

#endif

}  // namespace foveal::core::train
