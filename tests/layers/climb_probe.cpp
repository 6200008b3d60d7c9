// Compiled with the kernels layer's include folder by the ctest `layer_climb_refused`: the build
// must refuse it, because kernels sit below models (layers: data < kernels < models < tasks < bench < cli).
// The first include is allowed (data is below kernels), so the test also shows the folder works.
#include "data/errors.h"
#include "kernels/forgetting_attention.h"
#include "models/model.h"  // the climb: must fail with "No such file or directory"
