// Forwarding header: KernelCache lives in compiler/cache/kernel_cache.h. This path was
// documented for programs that pass their own cache to analyze() (AnalyzeOptions::cache),
// so it stays; new code includes the new path.
#pragma once

#include "lsjit/compiler/cache/kernel_cache.h"
