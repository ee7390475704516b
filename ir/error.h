// Forwarding header: lsjit::Error lives in common/error.h, which every layer may include.
// This path was the documented one, so it stays; new code includes the new path.
#pragma once

#include "lsjit/common/error.h"
