// The consumer's own core/model.hpp (tests/consumer/trajectory.cpp says why it exists).
#pragma once

namespace consumer {
inline constexpr bool kOwnModelHeader = true;
}
