// A probe for layers_refuse_a_relative_include: this include reaches a header of another folder relative to this
// file, which the compiler would find beside the file whatever the layers' include paths say.
#include "../../../sim/engine/EventQueue.hpp"
