// Compiled with the tasks layer's include folder by the ctest `layer_climb_refused`: the build
// must refuse it, because bench/ sits above tasks (layers: data < kernels < models < tasks < bench
// < cli): a task may never use a benchmark. The includes before the climb are allowed (every
// layer below bench), so the test also shows the folder works.
#include "models/model.h"
#include "tasks/run/runner.h"
#include "bench/bench_common.h"  // the climb: must fail with "No such file or directory"
