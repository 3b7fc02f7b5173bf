// Compiled against the net layer alone, this include of the engine (a layer above it) must not be found:
// tests/layers/CMakeLists.txt builds it and expects that error.
#include "sim/engine/Engine.hpp"
