// The ranks of one distributed run as settings carry them: tasks/run/distributed.h's session, made by
// plan_shards and handed by name to each task's settings and to the runner's (no process-wide one).
#pragma once
#include <memory>

namespace foxeval {

class DistributedSession;
using RunRanks = std::shared_ptr<DistributedSession>;  // null: not a distributed run

}  // namespace foxeval
