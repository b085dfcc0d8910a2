#!/usr/bin/env bash
# Tests each way of consuming crew, as a user would, from any cwd:
#
#   cmake   cmake --install into a scratch prefix; then three projects build
#           and run against it: test/consumer-cmake-install (find_package),
#           test/consumer-cmake-subdir (add_subdirectory) and test_package/
#           (the Conan test project, here against the CMake install)
#   conan   conanfile.py and test_package/conanfile.py compile (Conan itself
#           is not installable on Debian; run `conan create .` where it is)
#   b2      `b2` in the root: every test suite and example, built and run;
#           then test/consumer-b2 (use-project /crew)
#
# Usage: test/packaging.sh [cmake] [conan] [b2]     (default: all three)
# Environment: CREW_JOBS (default 2) parallel jobs;
#              CREW_PACKAGING_DIR (default build/packaging) scratch builds.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${CREW_JOBS:-2}
work=${CREW_PACKAGING_DIR:-$root/build/packaging}
steps=("$@")
((${#steps[@]})) || steps=(cmake conan b2)

"$root/.ci/deps"
cd "$root"

say() { printf '\n--- %s\n' "$*"; }

# Configures, builds and runs one small CMake project: <name> <source dir> [cmake args...]
consumer() {
    local name=$1 src=$2
    shift 2
    say "$name: configure, build, run"
    rm -rf "${work:?}/$name"
    cmake -S "$src" -B "$work/$name" -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
    cmake --build "$work/$name" -j "$jobs"
    "$work/$name/${exe:-consumer}"
}

step_cmake() {
    local prefix=$work/prefix
    say "cmake: configure crew without tests, install into $prefix"
    rm -rf "${work:?}/crew" "$prefix"
    cmake -S . -B "$work/crew" -DCMAKE_BUILD_TYPE=Release \
        -DCREW_BUILD_TESTS=OFF -DCREW_BUILD_EXAMPLES=OFF >/dev/null
    cmake --install "$work/crew" --prefix "$prefix" >/dev/null

    # The layout a user's find_package relies on.
    local f
    for f in include/crew/crew.hpp include/crew/basic_executor.hpp include/crew/policies/queue.hpp \
             share/cmake/crew/crew-config.cmake share/cmake/crew/crew-config-version.cmake \
             share/cmake/crew/crew-targets.cmake; do
        [[ -f $prefix/$f ]] || { echo "packaging: $prefix/$f was not installed" >&2; exit 1; }
    done
    # Every public header under include/ is installed, and nothing else.
    diff <(cd include && find . -type f | sort) <(cd "$prefix/include" && find . -type f | sort)
    echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"

    consumer consumer-install test/consumer-cmake-install -DCMAKE_PREFIX_PATH="$prefix"

    say "consumer-install: find_package(crew 1.0) must be refused (version file)"
    rm -rf "${work:?}/consumer-version"
    if cmake -S test/consumer-cmake-install -B "$work/consumer-version" -DCMAKE_PREFIX_PATH="$prefix" \
            -DCREW_REQUIRED_VERSION=1.0 >"$work/consumer-version.log" 2>&1; then
        echo "packaging: find_package(crew 1.0) accepted version $(grep -m1 -o 'VERSION [0-9.]*' CMakeLists.txt)" >&2
        exit 1
    fi
    grep -q "but not accepted" "$work/consumer-version.log" || { cat "$work/consumer-version.log" >&2; exit 1; }
    echo "refused, as it should be"
    consumer consumer-subdir test/consumer-cmake-subdir
    exe=test_package consumer test_package test_package -DCMAKE_PREFIX_PATH="$prefix"
}

step_conan() {
    say "conan: the recipes compile"
    # Byte code goes to the scratch dir, not into the source tree.
    PYTHONPYCACHEPREFIX="$work/pycache" python3 -m py_compile conanfile.py test_package/conanfile.py
    echo "conanfile.py and test_package/conanfile.py compile"
    if command -v conan >/dev/null 2>&1; then
        say "conan: conan create ."
        conan create . --build=missing -o "boost/*:header_only=True"
    else
        echo "(conan is not installed: \`conan create .\` not run)"
    fi
}

step_b2() {
    # The compile-fail tests print the compiler's diagnostics although they
    # pass: "(failed-as-expected)" then "**passed**".
    say "b2: every test suite and example (outputs in build/b2)"
    b2 -j"$jobs"
    say "b2: test/consumer-b2 (use-project /crew)"
    (cd test/consumer-b2 && b2 -j"$jobs")
}

mkdir -p "$work"
for s in "${steps[@]}"; do
    case $s in
        cmake | conan | b2) "step_$s" ;;
        *) echo "usage: $0 [cmake] [conan] [b2]" >&2; exit 2 ;;
    esac
done
say "packaging: ${steps[*]} passed"
