#!/usr/bin/env bash
# Builds and runs the guided tour (example/tour.cpp) in Release, from any cwd.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/.ci/deps"
cd "$root"   # presets are found relative to the current directory
cmake --preset release
cmake --build --preset release --target tour
./build/release/example/tour
